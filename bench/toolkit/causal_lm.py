"""Causal language models for every LM family: build, load, sequence log-probabilities, sampling, training.

* `load_causal_lm(name_or_path, device, tokenizer=...)`: a tiny shape name (`tiny-gpt2`, `tiny-llama`,
  the shapes of bench/toolkit/models.py, or `shape=` overrides) builds a freshly initialised
  `AutoModelForCausalLM` over the given tokenizer (seeded, the global torch RNG untouched); a local
  directory or a Hugging Face hub id goes through `from_pretrained` unchanged, so a GPU user runs a
  paper's model with the same code. Unreachable ids fail in one line.
* `sequence_logprobs(model, tokenizer, prompts, completions)`: log π(y|x) summed (or averaged) over the
  completion tokens only (the completion ends with eos), batched with right padding; differentiable.
* `sample(models, tokenizer, prompts, ...)`: temperature / top-p sampling with a KV cache and left padding,
  drawn from a `torch.Generator` (never the global RNG); `combine` mixes the logits of several models
  (e.g. (1+γ)ℓ_θ − γℓ_ref for DPO-Mix-P's tilted samplers).
* `train(model, loss_fn, n_examples, ...)`: the toolkit's loop (bench/toolkit/training.py) with linear warm-up and
  linear decay, minibatches drawn from the generator without replacement, gradient accumulation (the mean over
  micro-batches equals the full-batch gradient).

The cache of built models is bench/toolkit/cache.py (`cached_dir`).
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from bench.toolkit import training
from bench.toolkit.models import DTYPES, TINY_SHAPES, from_pretrained, tiny_config, tiny_model
from bench.toolkit.training import seeded


def build_causal_lm(shape: str, tokenizer, seed: int = 0, **overrides):
    """A randomly initialised tiny causal LM of a named shape over `tokenizer` (global RNG untouched)."""
    config = tiny_config(shape, len(tokenizer), tokenizer.pad_token_id, tokenizer.eos_token_id)
    for key, value in overrides.items():
        setattr(config, key, value)
    return tiny_model(config, seed)


def load_causal_lm(name_or_path: str, device: str = "cpu", tokenizer=None, dtype: str = "float32", seed: int = 0,
                   **shape_overrides):
    """(model, tokenizer) in eval mode on `device`; a pad token is set (eos when the tokenizer has none)."""
    from transformers import AutoModelForCausalLM

    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} unknown; allowed: {', '.join(DTYPES)}")
    if name_or_path in TINY_SHAPES:
        if tokenizer is None:
            from bench.toolkit.tokenizer import generated_corpus, train_bpe_tokenizer

            tokenizer = train_bpe_tokenizer(generated_corpus(seed=seed), vocab_size=512)
        model = build_causal_lm(name_or_path, tokenizer, seed, **shape_overrides)
    else:
        model, tokenizer = from_pretrained(AutoModelForCausalLM, name_or_path, "causal LM", dtype=DTYPES[dtype])
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if model.config.pad_token_id is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    return model.to(device=device, dtype=DTYPES[dtype]).eval(), tokenizer


def _encode_pairs(tokenizer, prompts: Sequence[str], completions: Sequence[str], max_length: int | None):
    """Right-padded ids (B, T), attention mask (B, T) and completion mask (B, T) for prompt + completion + eos.

    A sequence longer than max_length keeps its completion and the end of its prompt (left truncation)."""
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
    rows, masks = [], []
    # one batched call each (the same ids as one call per text; the per-call overhead was a third of a DPO step)
    prompt_ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    completion_ids = tokenizer(list(completions), add_special_tokens=False)["input_ids"]
    for p, c in zip(prompt_ids, completion_ids):
        c = c + [tokenizer.eos_token_id]
        if max_length is not None and len(p) + len(c) > max_length:
            p = p[max(0, len(p) + len(c) - max_length):]
        rows.append(p + c)
        masks.append([0] * len(p) + [1] * len(c))
    width = max(len(r) for r in rows)
    pad = tokenizer.pad_token_id
    ids = torch.tensor([r + [pad] * (width - len(r)) for r in rows])
    attention = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows])
    target = torch.tensor([m + [0] * (width - len(m)) for m in masks])
    return ids, attention, target


def sequence_logprobs(model, tokenizer, prompts: Sequence[str], completions: Sequence[str], *, average: bool = False,
                      batch_size: int = 64, max_length: int | None = None, device: str = "cpu",
                      position_ids: torch.Tensor | None = None) -> torch.Tensor:
    """(n,) Σ_t log π(y_t | x, y_<t) over the completion tokens (incl. eos), or the mean with `average`.

    Differentiable when called under grad; pad positions never contribute. `position_ids` (n, T) overrides
    the positions (LOGO's synthesised indices) and needs batch_size >= n."""
    out = []
    for start in range(0, len(prompts), batch_size):
        ids, attention, target = _encode_pairs(tokenizer, prompts[start:start + batch_size],
                                               completions[start:start + batch_size], max_length)
        ids, attention, target = ids.to(device), attention.to(device), target.to(device)
        extra = {}
        if position_ids is not None:
            extra["position_ids"] = position_ids[start:start + batch_size, : ids.shape[1]].to(device)
        logits = model(input_ids=ids, attention_mask=attention, **extra).logits[:, :-1].float()  # (B, T-1, V)
        logp = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)     # (B, T-1)
        mask = target[:, 1:].to(logp.dtype)                                                  # predicts token t+1
        total = (logp * mask).sum(-1)
        out.append(total / mask.sum(-1) if average else total)
    return torch.cat(out) if out else torch.zeros(0)


def _top_p_filter(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the smallest set of tokens whose probability reaches top_p (nucleus sampling)."""
    if top_p >= 1.0:
        return logits
    sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
    cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(-1)
    drop = cumulative - torch.softmax(sorted_logits, dim=-1) >= top_p    # mass before this token already >= p
    sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
    return torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)


@torch.no_grad()
def sample(models, tokenizer, prompts: Sequence[str], *, max_new_tokens: int = 16, temperature: float = 1.0,
           top_p: float = 1.0, generator: torch.Generator | None = None, device: str = "cpu",
           combine: Callable[[list[torch.Tensor]], torch.Tensor] | None = None, batch_size: int = 256) -> list[str]:
    """One completion per prompt (text without the prompt, cut at eos). temperature 0 = greedy.

    `models` is one model or a list whose next-token logits `combine` merges (default: the first's)."""
    models = list(models) if isinstance(models, (list, tuple)) else [models]
    out = []
    for start in range(0, len(prompts), batch_size):
        out += _sample_batch(models, tokenizer, list(prompts[start:start + batch_size]), max_new_tokens, temperature,
                             top_p, generator, device, combine)
    return out


def _sample_batch(models, tokenizer, prompts, max_new_tokens, temperature, top_p, generator, device, combine):
    encoded = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    width = max(len(e) for e in encoded)
    pad, eos = tokenizer.pad_token_id, tokenizer.eos_token_id
    ids = torch.tensor([[pad] * (width - len(e)) + e for e in encoded], device=device)         # left padding
    attention = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded], device=device)
    caches = [None] * len(models)
    step_ids, new, done = ids, [], torch.zeros(len(prompts), dtype=torch.bool, device=device)
    for _ in range(max_new_tokens):
        positions = (attention.cumsum(-1) - 1).clamp(min=0)[:, -step_ids.shape[1]:]
        logits = []
        for i, model in enumerate(models):
            output = model(input_ids=step_ids, attention_mask=attention, position_ids=positions,
                           past_key_values=caches[i], use_cache=True)
            caches[i] = output.past_key_values
            logits.append(output.logits[:, -1].float())                                      # (B, V)
        logit = combine(logits) if combine is not None else logits[0]
        if temperature == 0:
            token = logit.argmax(-1)
        else:
            probs = torch.softmax(_top_p_filter(logit / temperature, top_p), dim=-1)
            token = torch.multinomial(probs.cpu(), 1, generator=generator).squeeze(-1).to(device)
        token = torch.where(done, torch.full_like(token, pad), token)
        new.append(token)
        done |= token == eos
        if bool(done.all()):
            break
        step_ids = token[:, None]
        attention = torch.cat([attention, (~done | (token == eos)).long()[:, None]], dim=-1)
    tokens = torch.stack(new, dim=1).tolist() if new else [[] for _ in prompts]
    texts = []
    for row in tokens:
        row = row[: row.index(eos)] if eos in row else row
        texts.append(tokenizer.decode([t for t in row if t != pad], skip_special_tokens=True))
    return texts


def train(model, loss_fn: Callable[[list[int]], torch.Tensor], n_examples: int, *, steps: int, lr: float,
          batch_size: int, grad_accum: int = 1, warmup_ratio: float = 0.1, weight_decay: float = 0.0,
          generator: torch.Generator | None = None, device: str = "cpu", max_grad_norm: float | None = 1.0,
          on_step: Callable[[int, float], None] | None = None) -> list[float]:
    """The toolkit's loop (bench.toolkit.training.train) on `loss_fn(indices)`, the mean loss of those examples,
    with linear warm-up and decay, over `steps` optimiser steps.

    Each step draws batch_size·grad_accum indices without replacement from a permutation stream (epochs
    cycle through the data) and accumulates grad_accum micro-batch gradients scaled by 1/grad_accum, so
    a step equals one full-batch step. Dropout runs on a forked global RNG seeded from `generator`."""
    if n_examples < 1 or steps < 0 or batch_size < 1 or grad_accum < 1:
        raise ValueError(f"need n_examples >= 1, steps >= 0, batch_size >= 1, grad_accum >= 1; got "
                         f"{n_examples}, {steps}, {batch_size}, {grad_accum}")
    seed = int(torch.randint(2**62, (1,), generator=generator))
    order: list[int] = []

    def micro_batch_loss(step: int, micro: int = 0) -> torch.Tensor:
        nonlocal order
        while len(order) < batch_size:
            order += torch.randperm(n_examples, generator=generator).tolist()
        indices, order = order[:batch_size], order[batch_size:]
        return loss_fn(indices)

    with seeded(seed, device):
        return training.train(model, micro_batch_loss, steps, lr=lr, weight_decay=weight_decay,
                              schedule=training.warmup_linear(steps, warmup_ratio), max_grad_norm=max_grad_norm,
                              grad_accum=grad_accum, trainable_only=True, after_step=on_step)
