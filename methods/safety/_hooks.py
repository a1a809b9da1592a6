"""Residual-stream hooks: reading the stream, ablating directions from it, token relevance, trigger removal.

Hidden-state layer ℓ (0 … L) is the residual stream entering decoder block ℓ, and ℓ = L the stream
entering the final norm; a forward pre-hook on each of these L + 1 modules reads or edits it. This is
HF's `output_hidden_states` except at ℓ = L, which here is before the final norm.

Ablation (the authors' `modify_model_with_direction`, projection mode): at every hooked layer
h ← h − α Σ_j ((h·v_j) − c_j) v_j for orthonormal v_j; with α = 1 and c = 0 (the paper's projection
mode) the stream has no component along the v_j anywhere a block or the final norm reads it; c ≠ 0
sets the component to a reference value instead (affine ablation, Marshall et al. 2024).
Relevance (the PLRP stand-in of docs/papers/safety-directions.md): gradient × input of the readout s = h_ℓ[last]·v with
respect to the input embeddings, summed over the embedding dimension, then over each word's tokens.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from tasks.safety import encode, last_index


def stream_modules(model) -> list:
    """The L + 1 modules whose input is the residual stream: every decoder block, then the final norm."""
    inner = getattr(model, "model", None) or getattr(model, "transformer", None)
    blocks = getattr(inner, "layers", None) or getattr(inner, "h", None)
    norm = getattr(inner, "norm", None) or getattr(inner, "ln_f", None)
    if blocks is None or norm is None:
        raise ValueError(f"{type(model).__name__}: no decoder blocks / final norm found (supported: Llama-like, GPT-2)")
    return list(blocks) + [norm]


def _edit_first(args, kwargs, fn):
    if args:
        return (fn(args[0]), *args[1:]), kwargs
    return args, {**kwargs, "hidden_states": fn(kwargs["hidden_states"])}


@dataclass(frozen=True, eq=False)
class Ablation:
    """h ← h − α Σ_j ((h·v_j) − c_ℓj) v_j at the hooked layers ℓ (§3.4 projection mode when c = 0)."""

    directions: np.ndarray               # (k, d) orthonormal v_j
    layers: tuple[int, ...] | None = None  # hidden-state layers hooked (None: all L + 1)
    alpha: float = 1.0                   # α (1: the component is set to c exactly)
    offset: np.ndarray | None = None     # (L+1, k) c_ℓj, the value the component is set to (None: 0)
    last_token_only: bool = False        # edit only each prompt's last token (the authors' hook default)


@contextmanager
def ablation(model, spec: Ablation, last: torch.Tensor | None = None):
    """Within the block, `spec` is applied to the stream; `last` (B,) gives the last-token positions."""
    v = torch.as_tensor(np.atleast_2d(spec.directions), dtype=torch.float32)
    modules = stream_modules(model)
    offset = np.zeros((len(modules), len(v))) if spec.offset is None else np.asarray(spec.offset)

    def project(h, layer):
        basis = v.to(device=h.device, dtype=h.dtype)                            # (k, d)
        c = torch.as_tensor(offset[layer], dtype=h.dtype, device=h.device)      # (k,)
        delta = spec.alpha * ((h @ basis.T) - c) @ basis                        # (B, T, d)
        if spec.last_token_only:
            keep = torch.zeros(h.shape[:2], dtype=h.dtype, device=h.device)
            keep[torch.arange(len(h)), last.to(h.device)] = 1.0
            delta = delta * keep[..., None]
        return h - delta

    def hook(layer):
        return lambda module, args, kwargs: _edit_first(args, kwargs, lambda h: project(h, layer))

    if spec.last_token_only and last is None:
        raise ValueError("last_token_only ablation needs the last-token positions")
    chosen = range(len(modules)) if spec.layers is None else spec.layers
    handles = [modules[i].register_forward_pre_hook(hook(i), with_kwargs=True) for i in chosen]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def _recording(model, store: list):
    def record(module, args, kwargs):
        store.append(args[0] if args else kwargs["hidden_states"])

    handles = [m.register_forward_pre_hook(record, with_kwargs=True) for m in stream_modules(model)]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@torch.inference_mode()
def stream_states(model, tokenizer, prompts: list[str], batch_size: int = 64, device: str = "cpu",
                  ablate: Ablation | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(states (L+1, n, d) at the last prompt token, top next token (n,)), with `ablate` applied if given."""
    states, top = [], []
    for start in range(0, len(prompts), batch_size):
        batch, seen = encode(tokenizer, prompts[start:start + batch_size], device), []
        last = last_index(batch["attention_mask"])
        with ExitStack() as stack:
            if ablate is not None:
                stack.enter_context(ablation(model, ablate, last))
            stack.enter_context(_recording(model, seen))                    # records after the edit
            logits = model(**batch).logits                                  # (B, T, V)
        rows = torch.arange(len(logits), device=logits.device)
        states.append(torch.stack([h[rows, last] for h in seen]).float().cpu().numpy())
        top.append(logits[rows, last].argmax(-1).cpu().numpy())
    return np.concatenate(states, axis=1), np.concatenate(top)


def token_relevance(model, tokenizer, prompt: str, layer: int, direction: np.ndarray, device: str = "cpu"):
    """(relevance (T,), offsets (T, 2)): gradient × input of h_layer[last]·v per token of `prompt`."""
    batch = tokenizer(prompt, return_tensors="pt", add_special_tokens=False, return_offsets_mapping=True)
    offsets = batch.pop("offset_mapping")[0].numpy()
    embeds = model.get_input_embeddings()(batch["input_ids"].to(device)).detach().requires_grad_(True)  # (1, T, d)
    seen: list = []
    with _recording(model, seen):
        model(inputs_embeds=embeds, attention_mask=batch["attention_mask"].to(device))
    v = torch.as_tensor(direction, dtype=embeds.dtype, device=device)
    (grad,) = torch.autograd.grad(seen[layer][0, -1] @ v, embeds)    # no parameter gradients are accumulated
    return (grad * embeds).sum(-1)[0].detach().float().cpu().numpy(), offsets


def word_relevance(model, tokenizer, formatted: str, message: str, layer: int, direction: np.ndarray,
                   device: str = "cpu") -> list[float]:
    """Relevance of each space-separated word of `message` (the user text inside `formatted`)."""
    relevance, offsets = token_relevance(model, tokenizer, formatted, layer, direction, device)
    begin = formatted.rindex(message)
    out, cursor = [], begin
    for word in message.split(" "):
        lo, hi = cursor, cursor + len(word)
        out.append(float(sum(r for r, (a, b) in zip(relevance, offsets) if a < hi and b > lo and b > a)))
        cursor = hi + 1
    return out


def rewrite(message: str, picked, synonyms: dict) -> str:
    """Replace each picked word by its synonym (punctuation kept) or delete it."""
    words = message.split(" ")
    out = []
    for i, word in enumerate(words):
        core = word.strip(".,:;!?")
        if i not in picked:
            out.append(word)
        elif core in synonyms:
            out.append(word.replace(core, synonyms[core]))
    return " ".join(out)


def eligible(message: str) -> list[int]:
    """Word positions the attack may rewrite: longer than 3 characters (the paper's token filter)."""
    return [i for i, w in enumerate(message.split(" ")) if len(w.strip(".,:;!?")) > 3]


def trigger_removal(model, tokenizer, formatted: str, message: str, layer: int, direction: np.ndarray,
                    synonyms: dict, n_words: int = 3, device: str = "cpu") -> str:
    """§3.5, one round: the `n_words` eligible words with the highest relevance to the direction rewritten."""
    relevance = word_relevance(model, tokenizer, formatted, message, layer, direction, device)
    ranked = sorted(eligible(message), key=lambda i: -relevance[i])
    return rewrite(message, set(ranked[:n_words]), synonyms)
