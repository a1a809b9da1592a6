"""UCE: closed-form edit of the text-projection weights (the baseline).

Gandikota, Orgad, Belinkov, Materzyńska & Bau, "Unified Concept Editing in Diffusion Models",
WACV 2024, arXiv 2308.14761 (Eq. 7; code rohitgandikota/unified-concept-editing, `edit_model`):

    W' = (λ W + s_e Σ_{e} W c*_e c_eᵀ + s_p Σ_{p} W c_p c_pᵀ) (λ I + s_e Σ_{e} c_e c_eᵀ + s_p Σ_{p} c_p c_pᵀ)⁻¹,

the minimiser of s_e Σ_e ‖W' c_e − W c*_e‖² + s_p Σ_p ‖W' c_p − W c_p‖² + λ ‖W' − W‖²_F: the
concept's token embeddings c_e are sent where the guide's c*_e go, the preserved concepts' stay put.
In SD the edited W are the cross-attention key/value projections, which read the text encoder's
output directly; in Flux the text encoder's output is read by `context_embedder` (the text
projection into the joint stream; all key/value projections see its output), which is edited here
(its bias is shared by every token and left as it is).

c_e: every token embedding of the concept prompts (each template with the concept word); c*_e: the
same prompts with the concept word replaced by the padding token (UCE's default guide for an object
is the empty text; position-aligned); c_p: every token of the templates with each irrelevant concept.
Defaults of the released code: λ = 0.1, erase scale 1, preserve scale max(0.1, 1/|retained|).

On a FluxPipeline the same matrix is edited: context_embedder maps T5's 4,096-d token embeddings into
the joint stream, d = 4,096 (a 4,096 × 4,096 solve in float64 on the host); the guide word is T5's
padding token. Editing `attn.add_k_proj` / `add_v_proj` per block instead would need their inputs,
which in Flux are AdaLN-modulated (timestep-dependent) text states, not fixed token embeddings, so the
closed form would no longer hold for every t.

Fidelity: faithful to the closed form. Deviation: the edited matrix is Flux's text projection
(context_embedder) rather than per-layer key/value projections; only the concept word (no synonyms)
is edited, as UCE edits the text it is given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import method
from methods.erasure._common import frozen_copy
from tasks.erasure import RESOURCES, ErasureProblem, ErasureResult

SWITCHED_OFF = "a baseline of the paper (UCE, a closed-form edit): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config:
    lamb: float = 0.1              # λ, weight of ‖W' − W‖² (UCE code: lamb = 0.1)
    erase_scale: float = 1.0       # s_e (UCE code: 1)
    preserve_scale: float = 0.0    # s_p; 0 = the code's default max(0.1, 1 / number of retained concepts)

    def __post_init__(self) -> None:
        if self.lamb <= 0 or self.erase_scale < 0 or self.preserve_scale < 0:
            raise ValueError(f"need lamb > 0, erase_scale >= 0 and preserve_scale >= 0; got {self}")


def closed_form(weight: np.ndarray, erase: np.ndarray, guide: np.ndarray, preserve: np.ndarray, lamb: float,
                erase_scale: float, preserve_scale: float) -> np.ndarray:
    """UCE's W' for W (out, d) and token embeddings as rows: erase (n_e, d), guide (n_e, d), preserve (n_p, d)."""
    d = weight.shape[1]
    left = lamb * weight + erase_scale * weight @ guide.T @ erase + preserve_scale * weight @ preserve.T @ preserve
    right = lamb * np.eye(d) + erase_scale * erase.T @ erase + preserve_scale * preserve.T @ preserve
    return np.linalg.solve(right.T, left.T).T  # left @ right⁻¹ (right is symmetric)


def _tokens(problem: ErasureProblem, prompts: list[str]) -> np.ndarray:
    """Every token embedding (padding positions included) of the prompts, as rows (n · L, d), in float64."""
    tokens = problem.encode(prompts).tokens
    return tokens.reshape(-1, tokens.shape[-1]).double().cpu().numpy()


@method(family="erasure", config=Config, hardware=("cpu", "cuda"), resources=RESOURCES)
def solve(problem: ErasureProblem, config: Config, ctx: RunContext) -> ErasureResult:
    concept = [t.format(problem.concept) for t in problem.templates]
    guide = [t.format(problem.backbone.pad_word) for t in problem.templates]
    kept = [t.format(w) for t in problem.templates for w in problem.irrelevant]
    preserve_scale = config.preserve_scale or max(0.1, 1.0 / len(problem.irrelevant))
    model = frozen_copy(problem.transformer)
    layer = model.context_embedder
    edited = closed_form(layer.weight.detach().double().cpu().numpy(), _tokens(problem, concept),
                         _tokens(problem, guide), _tokens(problem, kept), config.lamb, config.erase_scale,
                         preserve_scale)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(edited).to(layer.weight.device, layer.weight.dtype))
    return ErasureResult(transformer=model.eval())
