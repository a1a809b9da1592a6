"""The residual stream of the safety world's models: reading it, and ablating directions from it.

Hidden-state layer ℓ (0 … L) is the residual stream entering decoder block ℓ, and ℓ = L the stream
entering the final norm; a forward pre-hook on each of these L + 1 modules reads or edits it. This is
HF's `output_hidden_states` except at ℓ = L, which here is before the final norm.

Ablation (the authors' `modify_model_with_direction`, projection mode): at every hooked layer
h ← h − α Σ_j ((h·v_j) − c_j) v_j for orthonormal v_j; with α = 1 and c = 0 (the paper's projection
mode) the stream has no component along the v_j anywhere a block or the final norm reads it; c ≠ 0
sets the component to a reference value instead (affine ablation, Marshall et al. 2024).

Task code (moved here from methods/safety/_hooks.py): a method returns its `Ablation`, and the family's `score`
applies it to the fine-tuned model itself to measure the refusals with the direction removed (tasks/safety).
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from tasks.safety._lm import encode, last_index


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
def recording(model, store: list):
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
            stack.enter_context(recording(model, seen))                     # records after the edit
            logits = model(**batch).logits                                  # (B, T, V)
        rows = torch.arange(len(logits), device=logits.device)
        states.append(torch.stack([h[rows, last] for h in seen]).float().cpu().numpy())
        top.append(logits[rows, last].argmax(-1).cpu().numpy())
    return np.concatenate(states, axis=1), np.concatenate(top)
