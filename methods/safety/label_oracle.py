"""Label oracle: refusal and jailbreak-style directions read off the prompts' true labels, the world's positive control.

Not a direction-finding method: it is given what the paper's methods must discover, the fine-tuned model's refusal
of every analysis prompt (`problem.refused`) and every prompt's jailbreak style (`problem.style`), and measures with
the metrics of the claims (docs/papers/safety-directions.md, "The world can show the effect"):

* §3.4, ablation. The refusal direction r̂_ℓ = unit(mean of h_ℓ over refused − over answered analysis prompts) of the
  fine-tuned model's last-token stream at each layer; the layer where h_ℓ·r̂_ℓ predicts refusal best on the analysis
  prompts is ablated as the methods ablate (every layer, last token, set to its harmless mean by default:
  `_pipeline.make_ablation`). If refusal in the world is not carried by one direction, removing even this one leaves
  the harmful prompts refused, and no method's "ablating C1 removes refusal" could be seen.
* §3.3, secondary directions. At the layer and with the measurement of multi_direction's secondary effects (source =
  the middle layer, target = the later of C1's best layer and the next one; C1 the dominant component of the lstsq
  shift, oriented), the world's own jailbreak features stand in for C2..CK: for each style s > 0, the unit mean
  difference of the fine-tuned model's source-layer states over harmful analysis prompts of style s and of the plain
  style, with its component along C1 removed (a secondary direction is orthogonal to the dominant one). They are
  returned (`Secondary`, read on C1 of the target layer): the task ablates each at the source layer (projection mode,
  every position) and measures the signed mean change of h_target·C1 over the harmful test prompts, in standard
  deviations of h_target·C1 over all prompts (`secondary_effect`; the oracle reports the same effects, checked). If
  even the features the data were built with (hypothetical narrative, role play, compliance priming: the paper's
  L14-C2, C5, C6) do not move the dominant projection, the world cannot show the paper's effect there.

`random`: the null. Every direction is replaced by a random unit vector from the run's generator (the style
directions also made orthogonal to C1), so the label information is the one thing removed.

Fidelity: not a paper's method (a control of our world); reads the fine-tuned model's refusal labels and the
prompts' style labels. No trigger-removal attack is run (its fields are empty; the attack metrics are absent).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.context import RunContext
from bench.registry import method
from methods.safety._directions import orient, shift_residual
from methods.safety._hooks import stream_states
from methods.safety._pipeline import REFERENCES, make_ablation, refusals
from tasks.safety import (
    ANALYSIS,
    RefusalProblem,
    RefusalResult,
    Secondary,
    chat_prompts,
    components,
    secondary_effects,
    threshold_accuracy,
)

SWITCHED_OFF = "an oracle (reads the prompts' refusal and style labels), the world's positive control: none to remove"


@dataclass(frozen=True)
class Config:
    random: bool = False             # the null: random unit directions in place of the label directions
    ablation: str = "harmless_mean"  # value r̂ is set to: zero (projection mode) | harmless_mean (as the methods)
    last_token_only: bool = True     # edit only the last prompt token (as the methods)

    def __post_init__(self) -> None:
        if self.ablation not in REFERENCES:
            raise ValueError(f"ablation {self.ablation!r} unknown; allowed: {', '.join(REFERENCES)}")


def unit_difference(h: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """unit(mean h[a] − mean h[b]) for h (n, d); zero where either group is empty or the means coincide."""
    if not a.any() or not b.any():
        return np.zeros(h.shape[-1])
    r = h[a].mean(0) - h[b].mean(0)
    norm = np.linalg.norm(r)
    return r / norm if norm > 0 else np.zeros_like(r)


def orthogonal_unit(v: np.ndarray, c: np.ndarray) -> np.ndarray:
    """unit(v − (v·c) c) for unit c; zero if nothing is left."""
    w = v - (v @ c) * c
    norm = np.linalg.norm(w)
    return w / norm if norm > 1e-12 else np.zeros_like(w)


def dominant_directions(x: np.ndarray, y: np.ndarray, analysis: np.ndarray) -> np.ndarray:
    """(L+1, d) C1 per layer: the oriented first right singular vector of R = XW − X (multi_direction's C1)."""
    out = []
    for xl, yl in zip(x[:, analysis], y[:, analysis]):
        r = shift_residual(xl, yl)
        out.append(orient(components(r)[0][0], r))
    return np.stack(out)


def _random_unit(rng: np.random.Generator, d: int) -> np.ndarray:
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v)


def skip(problem, config: Config) -> str | None:
    return (None if isinstance(problem, RefusalProblem)
            else f"label_oracle takes RefusalProblem, not {type(problem).__name__}")


@method(family="safety", config=Config, skip=skip, hardware=("cpu", "cuda"),
        reference="reads the prompts' refusal and style labels: the world's positive control")
def solve(problem: RefusalProblem, config: Config, ctx: RunContext) -> RefusalResult:
    formatted = chat_prompts(problem.tokenizer, problem.prompts)
    x, _ = stream_states(problem.base_model, problem.tokenizer, formatted, problem.batch_size, problem.device)
    y, _ = stream_states(problem.finetuned_model, problem.tokenizer, formatted, problem.batch_size, problem.device)
    analysis, n_layers, d = problem.split == ANALYSIS, len(y), y.shape[-1]
    refused = analysis & problem.refused

    # §3.4: the refusal direction per layer, its best layer, ablated as the methods ablate
    if config.random:
        dirs = np.stack([_random_unit(ctx.rng, d) for _ in range(n_layers)])
    else:
        dirs = np.stack([unit_difference(yl, refused, analysis & ~problem.refused) for yl in y])
    scores = np.einsum("lnd,ld->ln", y, dirs)
    fit = np.array([threshold_accuracy(s[analysis], problem.refused[analysis]) for s in scores])
    best = int(np.argmax(fit))
    ablate = make_ablation(problem, dirs[best], y, config.ablation, config.last_token_only)
    ablated = refusals(problem, problem.prompts, ablate)
    ctx.progress(0.4)

    # §3.3: the world's jailbreak features, orthogonal to C1, ablated at multi_direction's source layer
    c1 = dominant_directions(x, y, analysis)
    c1_fit = np.array([threshold_accuracy((xl @ c)[analysis], problem.refused[analysis]) for xl, c in zip(x, c1)])
    source = n_layers // 2
    target = max(int(np.argmax(c1_fit)), source + 1) if source + 1 < n_layers else source
    harmful = analysis & problem.harmful
    features = []
    for s in range(1, len(problem.styles)):
        raw = _random_unit(ctx.rng, d) if config.random else \
            unit_difference(y[source], harmful & (problem.style == s), harmful & (problem.style == 0))
        v = orthogonal_unit(raw, c1[source])
        if v.any():
            features.append(v)
    secondary = Secondary(np.stack(features) if features else np.zeros((0, d)), source, c1[target], target)
    effects = secondary_effects(problem, secondary)
    for j, e in enumerate(effects, start=1):
        ctx.log(j, secondary_effect=e)
    ctx.progress(1.0)
    n = len(problem.prompts)
    return RefusalResult(layer_scores=scores, direction_layer=best, ablated_refused=ablated,
                         attack_mask=np.zeros(n, bool), attacked_prompts=("",) * n,
                         attacked_refused=np.zeros(n, bool), random_refused=np.zeros(n, bool),
                         secondary=secondary, secondary_effect=effects, ablation=ablate)
