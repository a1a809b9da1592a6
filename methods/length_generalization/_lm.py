"""Causal-LM helpers of the length_generalization family: build or load the model, train it with or
without the misalignment regulariser (paper §4–5), and wrap it as the family's `Predictor`.

The regulariser's two-forward form (paper §5): a batch x of length l_train + l_extra, l_extra ~ U{1..⌊f·l_train⌋}
(f = ½ in the paper), gives A = x[0 : l_train] and B = x[l_extra : l_extra + l_train], each fed from position
id 0. Position t of A and position t − l_extra of B end at the same absolute token x[t] (t = l_extra..l_train−1),
so both predict x[t+1], A from the longer left context. L_misalign is a divergence of those two distributions,
averaged over the overlap positions (or taken at the last one only), and the step minimises
L_train(A) + α·L_misalign with gradients through both branches.

The divergence: the symmetric KL (Jeffreys) Σ (P − Q)(log P − log Q) by default, which is 0 when the two
outputs agree; plain SCE = −Σ P log Q − Σ Q log P as an option. SCE(P, P) = 2H(P), so SCE also rewards low
entropy: with it, α = 1 drove the long-context NLL to 4.93 nats, worse than a uniform predictor over the
32 tokens (ln 32 = 3.47). SCE − H(P) − H(Q) is the symmetric KL, so the two share their gradient in the
cross terms and differ only by the entropy terms.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from bench.toolkit.models import from_pretrained, tiny_model
from bench.toolkit.training import multiplier
from bench.toolkit.training import train as train_loop
from tasks.length_generalization import LMProblem

# tiny Llama (RoPE) shapes trained here; any other name is a local directory or a hub id
SHAPES = {
    "tiny-llama-lm": {"num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4, "hidden_size": 64,
                      "intermediate_size": 128},
    "micro-llama-lm": {"num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2, "hidden_size": 16,
                       "intermediate_size": 32},
}


def build_model(name_or_path: str, problem: LMProblem, rope_theta: float, seed: int, device: str):
    """A fresh tiny Llama of shape `name_or_path` over the task's vocabulary, or a saved / hub model."""
    from transformers import AutoModelForCausalLM, LlamaConfig

    if name_or_path in SHAPES:
        config = LlamaConfig(vocab_size=problem.vocab_size, max_position_embeddings=problem.train_length,
                             rope_parameters={"rope_type": "default", "rope_theta": rope_theta},
                             bos_token_id=None, eos_token_id=None, pad_token_id=None, tie_word_embeddings=False,
                             **SHAPES[name_or_path])
        model = tiny_model(config, seed)  # initialisation from the run's seed, global RNG untouched
    else:
        model, _ = from_pretrained(AutoModelForCausalLM, name_or_path, "model", with_tokenizer=False,
                                   hint=f" (tiny shapes: {', '.join(SHAPES)})")
        if model.config.vocab_size < problem.vocab_size:
            raise ValueError(f"model {name_or_path!r} has vocab_size {model.config.vocab_size} < the task's "
                             f"{problem.vocab_size}")
    return model.to(device)


def predictor(model, vocab: int, device: str, batch: int = 64):
    """The family's Predictor: (n, L) tokens -> (n, L, V) next-token log-probabilities (eval mode, no grad)."""

    def log_probs(tokens: np.ndarray) -> np.ndarray:
        model.eval()
        out = []
        with torch.no_grad():
            for start in range(0, len(tokens), batch):
                ids = torch.as_tensor(tokens[start:start + batch], dtype=torch.long, device=device)
                logits = model(input_ids=ids).logits[..., :vocab].float()  # (b, L, V)
                out.append(F.log_softmax(logits, dim=-1).cpu().numpy().astype(np.float64))
        return np.concatenate(out)

    return log_probs


def sce_loss(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """Symmetrical cross-entropy −Σ P log Q − Σ Q log P per row (last axis), gradients through both."""
    return -(log_p.exp() * log_q).sum(-1) - (log_q.exp() * log_p).sum(-1)


def symmetric_kl_loss(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """KL(P‖Q) + KL(Q‖P) = Σ (P − Q)(log P − log Q) per row (last axis): 0 exactly when P = Q."""
    return ((log_p.exp() - log_q.exp()) * (log_p - log_q)).sum(-1)


DIVERGENCES = {"symmetric_kl": symmetric_kl_loss, "sce": sce_loss}


def overlap_log_probs(logits_a: torch.Tensor, logits_b: torch.Tensor, l_extra: int, vocab: int,
                      last_only: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(P, Q): log-probs of A at positions l_extra..l−1 and of B at 0..l−1−l_extra (same next tokens)."""
    length = logits_a.shape[1]
    log_p = F.log_softmax(logits_a[:, l_extra:length, :vocab], dim=-1)       # (b, l − l_extra, V)
    log_q = F.log_softmax(logits_b[:, 0:length - l_extra, :vocab], dim=-1)   # (b, l − l_extra, V)
    return (log_p[:, -1:], log_q[:, -1:]) if last_only else (log_p, log_q)


def misalignment_loss(model, x: torch.Tensor, train_length: int, l_extra: int, vocab: int,
                      last_only: bool = False, divergence: str = "symmetric_kl") -> tuple[torch.Tensor, torch.Tensor]:
    """(L_train on A, L_misalign) of one batch x (b, l_train + l_extra) by the two-forward scheme."""
    a, b = x[:, :train_length], x[:, l_extra:l_extra + train_length]
    logits_a = model(input_ids=a).logits  # (b, l, V'), positions 0..l−1
    logits_b = model(input_ids=b).logits  # the same position ids: B is fed from position 0 too
    l_train = F.cross_entropy(logits_a[:, :-1, :vocab].reshape(-1, vocab), a[:, 1:].reshape(-1))
    log_p, log_q = overlap_log_probs(logits_a, logits_b, l_extra, vocab, last_only)
    return l_train, DIVERGENCES[divergence](log_p, log_q).mean()


def train(problem: LMProblem, model, *, steps: int, batch_size: int, lr: float, alpha: float, extra_fraction: float,
          last_only: bool, checkpoints: int, ctx,
          divergence: str = "symmetric_kl") -> tuple[object, list[tuple[int, object]]]:
    """Adam with a cosine schedule; α = 0 is plain next-token training. Returns (model, [(step, copy)])."""
    vocab, length, device = problem.vocab_size, problem.train_length, ctx.device
    saves = set(np.unique(np.linspace(0, steps, checkpoints + 1)[1:].round().astype(int))) if checkpoints else set()
    snapshots = []
    max_extra = max(1, int(extra_fraction * length))
    parts = {}

    def step_loss(step: int) -> torch.Tensor:
        ctx.check_deadline()
        if alpha > 0:
            l_extra = int(ctx.rng.integers(1, max_extra + 1))  # l_extra ~ U{1..f·l_train}
            x = torch.as_tensor(problem.sample(batch_size, length + l_extra, ctx.rng), device=device)
            l_train, l_mis = misalignment_loss(model, x, length, l_extra, vocab, last_only, divergence)
            loss = l_train + alpha * l_mis  # L* = L_train + α L_misalign
        else:
            x = torch.as_tensor(problem.sample(batch_size, length, ctx.rng), device=device)
            logits = model(input_ids=x).logits
            l_train = loss = F.cross_entropy(logits[:, :-1, :vocab].reshape(-1, vocab), x[:, 1:].reshape(-1))
            l_mis = torch.zeros(())
        parts.update(train=l_train, misalign=l_mis)
        return loss

    def after_step(step: int, loss: float) -> None:
        step += 1  # 1-based, as the checkpoints and the logged curve count steps
        if step % max(1, steps // 50) == 0 or step == steps:
            ctx.log(step, train_loss=parts["train"].item(), misalign_loss=parts["misalign"].item())
            ctx.progress(step / steps)
        if step in saves and step != steps:
            snapshots.append((step, copy.deepcopy(model)))
            model.train()

    schedule = multiplier(lambda s: 0.1 + 0.45 * (1 + np.cos(np.pi * s / steps)))
    train_loop(model, step_loss, steps, lr=lr, schedule=schedule, max_grad_norm=1.0, after_step=after_step)
    return model, snapshots + ([(steps, model)] if checkpoints else [])
