"""Multi-dimensional safety directions: the SVD of the fine-tuning shift, its dominant and secondary directions.

Pan, Liu, Chen, Zhou, Yu & Jia, "The Hidden Dimensions of LLM Alignment: A Multi-Dimensional Analysis
of Orthogonal Safety Directions", ICML 2025, arXiv 2502.09674 (docs/papers/safety-directions.md;
code BMPixel/safety-residual-space, src/utils/extract.py and src/experiments/*). Implemented:
  §3.1  last-token residual streams X_ℓ (base) and Y_ℓ (fine-tuned) of the analysis prompts at every
        layer; W_ℓ = lstsq(X_ℓ, Y_ℓ); R_ℓ = X_ℓ W_ℓ − X_ℓ; uncentred SVD → orthonormal directions
        C1, C2, … (Vᵀ rows), eigenvalues s²/(n−1); effective rank at τ of the "identity" shift Y − X
        (logged per layer; the metric is the task's own computation on the two models, at τ = 0.9).
  §3.2  the dominant direction C1 predicts refusal: score = X_ℓ·C1 (base activations), thresholded at
        the (1 − refusal rate) percentile; beside it the logistic probe-vector baseline per layer (reported;
        the task fits the same probe itself, and a report that differs is a Misreport).
  §3.3  secondary directions' effect on the dominant one: C2 … CK of the middle layer are returned (`Secondary`)
        with C1 of a later layer; the task ablates them one at a time at their layer and measures the change of the
        dominant projection (in units of its standard deviation); the interventional stand-in for PLRP's
        component-to-component relevance. The method reports the same effects, checked by the task.
  §3.4  ablation hooks on every layer of the fine-tuned model, last token (the authors' default):
        h ← h − ((h·C1) − c_ℓ) C1, with c = 0 (`ablation="zero"`, the paper's projection mode, α = 1)
        or c_ℓ = the mean of h_ℓ·C1 over the harmless analysis prompts (default, affine ablation);
        the harmful and harmless refusal rates before and after.
  §3.5  trigger-removal attack, one round: on the base (reference) model, gradient × input relevance
        of each word to the readout h_ℓ[last]·C1; the top-3 words longer than 3 characters are
        replaced by the lexicon's euphemism (deleted when it has none); the victim's refusal after.
The direction's layer is the one where C1 predicts refusal best on the analysis prompts.

Fidelity: approximate. Deviations: gradient × input instead of AttnLRP (no lxt) for token relevance,
and single-direction ablation instead of PLRP for the component-to-component effect; the attack is
one blacklist round without the LLM rewriter and StrongREJECT judge (rewrites from a fixed lexicon,
success = the victim's top token is not the refusal token); the sign of C_k is set from the shift
(Σ R v ≥ 0) instead of the authors' −v; the default ablation sets C1 to its harmless mean instead of
0, because in the tiny model c = 0 lies between the harmful and harmless projections (removing C1
then makes harmless prompts refused too: the claims file pins that); hidden state L is the stream
before the final norm.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.safety._directions import TAUS, orient, shift_residual
from methods.safety._hooks import stream_states
from methods.safety._pipeline import REFERENCES, ablate_and_attack, make_ablation
from tasks.safety import (
    ANALYSIS,
    TEST,
    RefusalProblem,
    RefusalResult,
    Secondary,
    chat_prompts,
    components,
    effective_rank,
    probe_accuracy,
    secondary_effects,
    threshold_accuracy,
)

SMOKE = {"secondary": 3}

# The paper's mechanism is the multi-dimensional residual space: the secondary orthogonal directions C2 … CK of §3.3
# beside the dominant C1. K = 1 keeps C1 alone (secondary_directions returns dirs[source, 1:1], no direction to
# ablate, so no secondary effect): the one-dimensional view; C1 itself, its ablation and the attack are unchanged.
SWITCHED_OFF = {"K = 1 (the dominant direction only)": {"secondary": 1}}


@dataclass(frozen=True)
class Config:
    secondary: int = 6          # K: components C2 … CK whose effect on C1 is measured (paper's examples: L14-C2 … C6)
    attack_words: int = 3       # top-relevance tokens removed per rewrite (trigger_removal.py: top-3, length > 3)
    rank_tau: float = 0.9       # τ of the logged `effective_rank` curve (the metric is the task's, at τ = 0.9)

    ablation: str = "harmless_mean"  # value C1 is set to: zero (§3.4 projection mode) | harmless_mean (affine)
    last_token_only: bool = True  # edit only the last prompt token (modify_model_with_direction's default)

    def __post_init__(self) -> None:
        if self.ablation not in REFERENCES:
            raise ValueError(f"ablation {self.ablation!r} unknown; allowed: {', '.join(REFERENCES)}")
        if self.secondary < 1 or self.attack_words < 1:
            raise ValueError(f"secondary and attack_words must be >= 1, got {self.secondary}, {self.attack_words}")
        if not 0 < self.rank_tau <= 1:
            raise ValueError(f"rank_tau must be in (0, 1], got {self.rank_tau}")


def shift_directions(x: np.ndarray, y: np.ndarray, analysis: np.ndarray):
    """Per layer: (C (L+1, k, d) oriented directions, eigenvalues of R = XW − X, eigenvalues of Y − X)."""
    dirs, eig, eig_identity = [], [], []
    for xl, yl in zip(x[:, analysis], y[:, analysis]):
        r = shift_residual(xl, yl)
        v, _, lam = components(r)
        dirs.append(np.stack([orient(vk, r) for vk in v]))
        eig.append(lam)
        eig_identity.append(components(yl.astype(np.float64) - xl)[2])
    return np.stack(dirs), eig, eig_identity


def secondary_directions(dirs: np.ndarray, source: int, target: int, k: int) -> Secondary:
    """C2 … CK of layer `source`, ablated there one at a time, read on C1 of layer `target` (dirs (L+1, k, d))."""
    return Secondary(dirs[source, 1:min(k, len(dirs[source]))], source, dirs[target, 0], target)


def skip(problem, config: Config) -> str | None:
    return (None if isinstance(problem, RefusalProblem)
            else f"multi_direction takes RefusalProblem, not {type(problem).__name__}")


@method(family="safety", config=Config, skip=skip, hardware=("cpu", "cuda"), smoke=SMOKE)
def solve(problem: RefusalProblem, config: Config, ctx: RunContext) -> RefusalResult:
    formatted = chat_prompts(problem.tokenizer, problem.prompts)
    x, _ = stream_states(problem.base_model, problem.tokenizer, formatted, problem.batch_size, problem.device)
    y, _ = stream_states(problem.finetuned_model, problem.tokenizer, formatted, problem.batch_size, problem.device)
    analysis, test = problem.split == ANALYSIS, problem.split == TEST
    dirs, eig, eig_identity = shift_directions(x, y, analysis)
    ctx.progress(0.3)
    scores = np.einsum("lnd,ld->ln", x, dirs[:, 0])                   # (L+1, n) base activations on C1 (§3.2)
    fit_acc = np.array([threshold_accuracy(s[analysis], problem.refused[analysis]) for s in scores])
    probe = np.array([probe_accuracy(xl, problem.refused, analysis, test) for xl in x])
    for layer in range(len(x)):
        ctx.log(layer, dominant_accuracy_analysis=fit_acc[layer], probe_accuracy=probe[layer],
                dominant_share=float(eig[layer][0] / max(eig[layer].sum(), 1e-30)),
                effective_rank=effective_rank(eig_identity[layer], config.rank_tau),
                **{f"effective_rank_{int(t * 100)}": effective_rank(eig_identity[layer], t) for t in TAUS})
    best = int(np.argmax(fit_acc))
    source = len(x) // 2
    target = max(best, source + 1) if source + 1 < len(x) else source
    secondary = secondary_directions(dirs, source, target, config.secondary)
    effects = secondary_effects(problem, secondary)
    for j, e in enumerate(effects, start=2):
        ctx.log(j, secondary_effect=e)
    ctx.progress(0.6)
    ablate = make_ablation(problem, dirs[best, 0], y, config.ablation, config.last_token_only)
    shared = ablate_and_attack(problem, ablate, best, config.attack_words, ctx.rng)
    ctx.progress(1.0)
    return RefusalResult(layer_scores=scores, direction_layer=best, secondary=secondary, probe_accuracy=probe,
                         secondary_effect=effects, **shared)
