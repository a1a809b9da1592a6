"""The single refusal direction: difference of means of harmful and harmless activations (the baseline).

Arditi et al., "Refusal in Language Models Is Mediated by a Single Direction" (NeurIPS 2024, arXiv
2406.11717), the one-dimensional view that Pan et al. (ICML 2025, arXiv 2502.09674)
extend. Per hidden-state layer ℓ of the fine-tuned model, on the analysis prompts:
    r_ℓ = mean(h_ℓ | harmful) − mean(h_ℓ | harmless),   r̂_ℓ = r_ℓ / ‖r_ℓ‖
scores = h_ℓ·r̂_ℓ on the fine-tuned model's own last-token residual stream, judged as the dominant
direction is (threshold at the refusal-rate percentile). The layer whose r̂ predicts refusal best on
the analysis prompts is ablated at every layer, last token (h ← h − ((h·r̂) − c_ℓ) r̂ with c_ℓ the
harmless mean, or c = 0: Arditi's directional ablation, `ablation="zero"`), and drives the same one-round
trigger-removal attack as multi_direction (relevance on the base model).

Fidelity: approximate. Arditi et al. pick the layer and position by a refusal / KL score over
candidate directions at several post-instruction positions and evaluate generations with a judge;
here the last prompt token only, layer by analysis-set accuracy, refusal = top next token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.safety._hooks import stream_states
from methods.safety._pipeline import REFERENCES, ablate_and_attack, make_ablation
from tasks.safety import ANALYSIS, RefusalProblem, RefusalResult, chat_prompts, threshold_accuracy

SWITCHED_OFF = "the paper's baseline (Arditi et al.'s single difference-of-means direction): no mechanism of the paper"


@dataclass(frozen=True)
class Config:
    attack_words: int = 3     # top-relevance words rewritten by the trigger-removal attack (as multi_direction)

    ablation: str = "harmless_mean"  # value r̂ is set to: zero (Arditi's directional ablation) | harmless_mean
    last_token_only: bool = True  # edit only the last prompt token (as multi_direction)

    def __post_init__(self) -> None:
        if self.ablation not in REFERENCES:
            raise ValueError(f"ablation {self.ablation!r} unknown; allowed: {', '.join(REFERENCES)}")
        if self.attack_words < 1:
            raise ValueError(f"attack_words must be >= 1, got {self.attack_words}")


def mean_difference(h: np.ndarray, harmful: np.ndarray) -> np.ndarray:
    """(L+1, d) unit r̂_ℓ from states h (L+1, n, d) and harmful flags (n,); zero where the means coincide."""
    r = h[:, harmful].mean(1) - h[:, ~harmful].mean(1)
    norm = np.linalg.norm(r, axis=1, keepdims=True)
    return np.where(norm > 0, r / np.where(norm > 0, norm, 1.0), 0.0)


def skip(problem, config: Config) -> str | None:
    if not isinstance(problem, RefusalProblem):
        return f"single_direction takes RefusalProblem, not {type(problem).__name__}"
    fit = problem.harmful[problem.split == ANALYSIS]
    return None if fit.any() and not fit.all() else "needs harmful and harmless analysis prompts"


@method(family="safety", config=Config, skip=skip, hardware=("cpu", "cuda"))
def solve(problem: RefusalProblem, config: Config, ctx: RunContext) -> RefusalResult:
    formatted = chat_prompts(problem.tokenizer, problem.prompts)
    h, _ = stream_states(problem.finetuned_model, problem.tokenizer, formatted, problem.batch_size, problem.device)
    analysis = problem.split == ANALYSIS
    dirs = mean_difference(h[:, analysis], problem.harmful[analysis])     # (L+1, d)
    scores = np.einsum("lnd,ld->ln", h, dirs)
    fit_acc = np.array([threshold_accuracy(s[analysis], problem.refused[analysis]) for s in scores])
    for layer, acc in enumerate(fit_acc):
        ctx.log(layer, direction_accuracy_analysis=acc)
    best = int(np.argmax(fit_acc))
    ctx.progress(0.5)
    ablate = make_ablation(problem, dirs[best], h, config.ablation, config.last_token_only)
    shared = ablate_and_attack(problem, ablate, best, config.attack_words, ctx.rng)
    ctx.progress(1.0)
    return RefusalResult(layer_scores=scores, direction_layer=best, **shared)
