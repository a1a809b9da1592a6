"""The scorer's analyses of the fine-tuning shift: the probe baseline, the effective rank, the secondary effects.

Task code (moved here from methods/safety/_directions.py and _pipeline.py, docs/metrics-audit.md): the family's
`score` computes these on the problem's two models itself, so no metric rests on a number a method wrote about
its own analysis (docs/papers/safety-directions.md).

* §3.2, the reference: a logistic probe of refusal on the base model's last-token stream (the activations
  multi_direction's C1 scores), fit on the analysis prompts, thresholded as the directions are (at the
  refusal-rate percentile of its decision values) and judged on the test prompts.
* §3.1, the effective rank of the shift Y − X (fine-tuned minus base states of the analysis prompts, uncentred
  SVD, eigenvalues s²/(n−1)) at τ = 0.9: min{r : Σ_{i≤r} λ_i / Σ λ_i ≥ τ}. A property of the two models.
* §3.3, a secondary direction's effect on the dominant one: the direction is ablated at its layer (projection
  mode, every position) and the mean change of the dominant projection h_ℓ'·C1 at the readout layer over the
  harmful test prompts is divided by the standard deviation of h_ℓ'·C1 over all prompts (multi_direction's
  interventional stand-in for PLRP).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.linear_model import LogisticRegression

from tasks.safety._lm import chat_prompts
from tasks.safety._stream import Ablation, stream_states

ANALYSIS, TEST = 0, 1
RANK_TAU = 0.9  # τ of the effective-rank metric (§3.1; the paper plots 0.4 … 0.9)


@dataclass(frozen=True, eq=False)
class Secondary:
    """Directions whose effect on the dominant one score measures (§3.3): each is ablated alone at `layer`, and
    the projection of the fine-tuned model's stream on `readout` (the dominant direction C1) at `readout_layer` is
    read before and after."""

    directions: np.ndarray  # (k, d) unit vectors, ablated one at a time in projection mode
    layer: int              # hidden-state layer where they are ablated (multi_direction: the middle one)
    readout: np.ndarray     # (d,) the dominant direction at `readout_layer`
    readout_layer: int      # hidden-state layer where the dominant projection is read


def threshold_accuracy(scores: np.ndarray, labels: np.ndarray) -> float:
    """§3.2: predict "refuses" where the score exceeds its (1 − refusal rate) percentile; accuracy."""
    labels = np.asarray(labels, bool)
    threshold = np.percentile(scores, 100.0 * (1.0 - labels.mean()))
    return float(np.mean((np.asarray(scores) > threshold) == labels))


def components(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(V (k, d) orthonormal rows, singular values s (k,), eigenvalues s²/(n−1) (k,)) of R, uncentred."""
    _, s, vt = np.linalg.svd(np.asarray(r, np.float64), full_matrices=False)
    return vt, s, s**2 / max(len(r) - 1, 1)


def effective_rank(eigenvalues: np.ndarray, tau: float) -> int:
    """Smallest r with Σ_{i≤r} λ_i / Σ λ_i ≥ τ (eigenvalues in decreasing order); 0 for a zero spectrum."""
    lam = np.asarray(eigenvalues, np.float64)
    total = lam.sum()
    if total <= 0:
        return 0
    return int(np.searchsorted(np.cumsum(lam) / total, tau - 1e-12) + 1)


def shift_ranks(x: np.ndarray, y: np.ndarray, analysis: np.ndarray, tau: float = RANK_TAU) -> np.ndarray:
    """(L+1,) effective rank at τ of the shift Y − X of the analysis prompts, per layer (x, y: (L+1, n, d))."""
    return np.array([effective_rank(components(yl.astype(np.float64) - xl)[2], tau)
                     for xl, yl in zip(x[:, analysis], y[:, analysis])])


def probe_accuracy(x: np.ndarray, labels: np.ndarray, train: np.ndarray, test: np.ndarray) -> float:
    """The paper's probe-vector baseline: logistic regression fit on `train`, thresholded as the
    directions are (at the refusal-rate percentile of its decision values), scored on `test`."""
    labels = np.asarray(labels, bool)
    if labels[train].all() or not labels[train].any():
        return threshold_accuracy(np.zeros(int(test.sum())), labels[test])
    model = LogisticRegression(max_iter=2000).fit(x[train], labels[train])
    return threshold_accuracy(model.decision_function(x[test]), labels[test])


def model_states(problem, model) -> np.ndarray:
    """(L+1, n, d) last-token stream of `model` on every prompt, read as the methods read it (same batches)."""
    formatted = chat_prompts(problem.tokenizer, problem.prompts)
    return stream_states(model, problem.tokenizer, formatted, problem.batch_size, problem.device)[0]


def shift_analyses(problem) -> tuple[np.ndarray, np.ndarray]:
    """(probe accuracy (L+1,), effective rank at RANK_TAU (L+1,)) of the problem's two models."""
    x, y = model_states(problem, problem.base_model), model_states(problem, problem.finetuned_model)
    analysis, test = problem.split == ANALYSIS, problem.split == TEST
    probe = np.array([probe_accuracy(xl, problem.refused, analysis, test) for xl in x])
    return probe, shift_ranks(x, y, analysis)


def check_secondary(secondary: Secondary, n_layers: int, hidden: int) -> None:
    """ValueError unless the directions are unit vectors of the stream (a projection-mode ablation, §3.3) and the
    layers exist."""
    directions = np.asarray(secondary.directions)
    if directions.ndim != 2 or directions.shape[1] != hidden or np.shape(secondary.readout) != (hidden,):
        raise ValueError(f"Secondary.directions must have shape (k, {hidden}) and readout ({hidden},)")
    if not all(0 <= layer < n_layers for layer in (secondary.layer, secondary.readout_layer)):
        raise ValueError(f"Secondary layers must be hidden-state layers 0 … {n_layers - 1}")
    if len(directions) and not np.allclose(np.linalg.norm(directions, axis=1), 1.0, atol=1e-6):
        raise ValueError("Secondary.directions must be unit vectors (each is ablated in projection mode)")


def secondary_effects(problem, secondary: Secondary) -> np.ndarray:
    """(k,) per direction: mean change of h_readout·C1 on the harmful test prompts when it is ablated at its layer
    (projection mode, every position), over the standard deviation of h_readout·C1 on all prompts.

    The mean over prompts is signed on purpose (multi_direction's measure): §3.3's secondary directions *promote or
    suppress* the dominant one, a systematic shift of its projection, where a mean of |Δ| would also count the
    per-prompt jitter that ablating any upstream direction causes. Directions do not cancel each other: the metric
    is the largest |mean| over directions, so a suppressing direction counts like a promoting one. The scale is the
    spread of h·C1 over prompts; on the untreated model (the claim's negative control) C1 is noise with little
    spread, and the signed effect still reaches 1.65 of it (docs/papers/safety-directions.md)."""
    model, tok, target = problem.finetuned_model, problem.tokenizer, secondary.readout_layer
    formatted = chat_prompts(tok, problem.prompts)
    clean = stream_states(model, tok, formatted, problem.batch_size, problem.device)[0][target] @ secondary.readout
    harm = (problem.split == TEST) & problem.harmful
    out = []
    for v in secondary.directions:
        moved = stream_states(model, tok, formatted, problem.batch_size, problem.device,
                              Ablation(v[None, :], layers=(secondary.layer,)))[0][target] @ secondary.readout
        out.append(float(np.mean(moved[harm] - clean[harm]) / (clean.std() + 1e-12)))
    return np.array(out)
