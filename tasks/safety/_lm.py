"""Causal language models for the safety family: tiny shapes trained here, hub ids or directories loaded.

* `tiny_causal_lm(shape, tokenizer, seed)`: a GPT-2 or Llama causal LM from transformers configs over a
  byte-level BPE tokenizer (bench.toolkit.tokenizer) that carries a plain-text chat template, so a tiny
  model and a hub instruct model go through the same `apply_chat_template` path.
* `load_causal_lm(name_or_path, device)`: `from_pretrained` of a local directory or a hub id.
* `train_lm`: AdamW with the paper's SSFT schedule (linear warm-up over 10 %, cosine decay), loss on
  the whole transcript or, as TRL's DataCollatorForCompletionOnlyLM, on the response only.
* `last_token_states`: the hidden states of every layer (embeddings + each block, as
  `output_hidden_states` returns them) at the last prompt token, and the top next token there.
Batches are right-padded; the last real token is gathered by the attention mask, so padding never
changes a prompt's states (a causal model never attends to later positions).
"""

from __future__ import annotations

import numpy as np
import torch

from bench.toolkit.models import from_pretrained, tiny_model
from bench.toolkit.tokenizer import train_bpe_tokenizer
from bench.toolkit.training import multiplier, train
from tasks.safety._data import CHAT_TEMPLATE

SHAPES = {
    "tiny-llama": {"model_type": "llama", "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4,
                   "hidden_size": 64, "intermediate_size": 128, "max_position_embeddings": 256,
                   "tie_word_embeddings": False},
    "tiny-gpt2": {"model_type": "gpt2", "n_layer": 4, "n_head": 4, "n_embd": 64, "n_positions": 256,
                  "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0},  # no dropout: deterministic training
}


def chat_tokenizer(texts: list[str], vocab_size: int):
    """A BPE tokenizer trained on `texts`, with the family's plain chat template ("user: …\\nassistant:")."""
    tokenizer = train_bpe_tokenizer(texts, vocab_size=vocab_size)
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def tiny_causal_lm(shape: str, tokenizer, seed: int, layers: int | None = None, hidden: int | None = None):
    """A freshly initialised causal LM of a tiny shape; the global torch RNG is left as it was."""
    from transformers import AutoConfig

    if shape not in SHAPES:
        raise ValueError(f"tiny shape {shape!r} unknown; allowed: {', '.join(SHAPES)}")
    spec = dict(SHAPES[shape])
    kind = spec.pop("model_type")
    if layers:
        spec["num_hidden_layers" if kind == "llama" else "n_layer"] = layers
    if hidden:
        spec.update({"hidden_size": hidden, "intermediate_size": 2 * hidden} if kind == "llama" else {"n_embd": hidden})
    config = AutoConfig.for_model(kind, vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id,
                                  eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.eos_token_id, **spec)
    return tiny_model(config, seed).eval()


def load_causal_lm(name_or_path: str, device: str = "cpu", dtype: torch.dtype = torch.float32):
    """(model, tokenizer) in eval mode from a local directory or a hub id; a clear one-line error otherwise."""
    from transformers import AutoModelForCausalLM

    model, tokenizer = from_pretrained(AutoModelForCausalLM, name_or_path, "causal LM", dtype=dtype)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(tokenizer, "chat_template", None) is None:
        raise ValueError(f"{name_or_path!r}: the tokenizer has no chat template (an instruct / chat model is required)")
    return model.to(device).eval(), tokenizer


def chat_prompts(tokenizer, messages) -> list[str]:
    """Each user message as the model reads it before answering (template + generation prompt)."""
    return [tokenizer.apply_chat_template([{"role": "user", "content": m}], tokenize=False, add_generation_prompt=True)
            for m in messages]


def encode(tokenizer, texts: list[str], device: str = "cpu") -> dict:
    tokenizer.padding_side = "right"
    batch = tokenizer(list(texts), return_tensors="pt", padding=True, add_special_tokens=False,
                      return_token_type_ids=False)
    return {k: v.to(device) for k, v in batch.items()}


def last_index(attention_mask: torch.Tensor) -> torch.Tensor:
    return attention_mask.sum(1) - 1                                            # (B,) position of the last real token


@torch.inference_mode()
def last_token_states(model, tokenizer, prompts: list[str], batch_size: int = 64,
                      device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """(hidden (L+1, n, d) float32, top next token (n,)) at the last token of each formatted prompt."""
    states, top = [], []
    for start in range(0, len(prompts), batch_size):
        batch = encode(tokenizer, prompts[start:start + batch_size], device)
        out = model(**batch, output_hidden_states=True)
        rows = torch.arange(len(batch["input_ids"]), device=device)
        last = last_index(batch["attention_mask"])
        states.append(torch.stack([h[rows, last] for h in out.hidden_states]).float().cpu().numpy())  # (L+1, B, d)
        top.append(out.logits[rows, last].argmax(-1).cpu().numpy())
    return np.concatenate(states, axis=1), np.concatenate(top)


def _schedule(steps: int, warmup: float):
    """Linear warm-up over `warmup`·steps, then cosine decay to 0 (the paper's SSFT / DPO schedule)."""
    ramp = max(1, int(round(warmup * steps)))
    return multiplier(lambda t: (t + 1) / ramp if t < ramp else 0.5 * (1 + np.cos(np.pi * (t - ramp)
                                                                                  / max(1, steps - ramp))))


def train_lm(model, tokenizer, transcripts: list[tuple[str, str]], steps: int, lr: float, batch_size: int,
             completion_only: bool, generator: torch.Generator, device: str = "cpu",
             warmup: float = 0.1) -> list[float]:
    """AdamW on the next-token loss of (user message, response) transcripts; returns each step's loss.

    completion_only: the loss covers the response and eos only (prompt positions are masked to −100).
    Minibatches come from `generator`; the model is left in eval mode.
    """
    prompts = chat_prompts(tokenizer, [m for m, _ in transcripts])
    texts = [p + r + tokenizer.eos_token for p, (_, r) in zip(prompts, transcripts)]
    prompt_len = [len(tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts]

    def batch_loss(step: int) -> torch.Tensor:
        idx = torch.randint(len(texts), (min(batch_size, len(texts)),), generator=generator).tolist()
        batch = encode(tokenizer, [texts[i] for i in idx], device)
        labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)   # (B, T)
        if completion_only:
            for row, i in enumerate(idx):
                labels[row, : prompt_len[i]] = -100
        return model(**batch, labels=labels).loss

    return train(model, batch_loss, steps, lr=lr, schedule=_schedule(steps, warmup))
