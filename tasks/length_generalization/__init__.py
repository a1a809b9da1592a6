"""Length generalisation: train on short sequences, evaluate on longer ones; the Long-Short Misalignment.

Du, Huang, Wang & Wang, "Long-Short Alignment for Effective Long-Context Modeling in LLMs", ICML 2025,
arXiv 2506.11769 (docs/papers/long-short-alignment.md). Two kinds of instance, one typed problem each:

* `RegressionProblem`, the paper's synthetic case studies (§3): sequences of equiprobable bits, trained at
  lengths n ~ U{1..10}, evaluated at lengths up to 50. `target` is "mean" (the mean of the bits; its
  output range [0, 1] does not depend on n) or "length" (n itself; its support grows with n). A method
  returns one scalar prediction per evaluation sequence (`RegressionResult`). Loss: MSE; accuracy: the
  fraction within `tolerance` of the target (length: the rounded count is right).
* `LMProblem`, a language-modelling task with long-range structure (our CPU proxy): documents of a
  topic-switching Markov chain (a hidden topic that persists for ~1/ρ tokens picks the transition matrix),
  so context far back tells which matrix is in force, while context older than the last switch misleads.
  A method returns its next-token predictor, and checkpoints of it along training (`LMResult`); the
  judge runs them. Loss: mean next-token NLL (nats/token) over every position of a length-L sequence;
  perplexity exp(loss); accuracy top-1; the excess over the exact Bayes predictive (an HMM filter).

The Long-Short Misalignment (§4): with g(x) the next-token distribution at the final position of x and
x[−l:] the length-l suffix of a held-out sequence,

    L_misalign = E_{x, l1, l2} SCE(g(x[−l1:]), g(x[−l2:])),   l1, l2 ~ U{l_train/2 .. l_train} i.i.d.,
    SCE(P, Q) = −Σ_v P_v log Q_v − Σ_v Q_v log P_v           (cross-entropy in both directions).

The expectation over (l1, l2) is taken exactly (every pair, uniform weights), so the metric is
deterministic. SCE(P, P) = 2H(P), not 0: SCE − H(P) − H(Q) is the symmetric KL (Jeffreys) divergence.
The per-run correlations are Pearson coefficients across the run's checkpoints, of the misalignment
(and of the loss at the training length) with the loss at the longest evaluation length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bench.spec import Metric

BITS_BOS = 2  # token id of the start token of the regression case studies (bits are 0 and 1)


# ---- the synthetic case studies ----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class RegressionProblem:
    target: str                       # "mean" or "length"
    train_lengths: tuple[int, int]    # n ~ U{lo..hi} at training (paper: 1..10)
    eval_inputs: dict[int, np.ndarray]   # length L -> (m, L) bits
    eval_targets: dict[int, np.ndarray]  # length L -> (m,) true mean or length
    tolerance: float                  # |prediction − target| ≤ tolerance counts as correct

    def __post_init__(self) -> None:
        if self.target not in ("mean", "length"):
            raise ValueError(f"target {self.target!r} unknown; allowed: mean, length")

    def target_of(self, bits: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The regression target of padded bit rows (n, L_max) with true lengths (n,)."""
        if self.target == "length":
            return lengths.astype(float)
        return bits.sum(axis=1) / lengths

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(bits (n, hi) right-padded with 0, lengths (n,), targets (n,)) at training lengths."""
        lo, hi = self.train_lengths
        lengths = rng.integers(lo, hi + 1, size=n)
        bits = rng.integers(0, 2, size=(n, hi)) * (np.arange(hi)[None, :] < lengths[:, None])
        return bits, lengths, self.target_of(bits, lengths)


@dataclass(frozen=True, eq=False)
class RegressionResult:
    predictions: dict[int, np.ndarray]  # length L -> (m,) predictions for problem.eval_inputs[L]


# ---- the language-modelling task ----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class LMProblem:
    transitions: np.ndarray            # (K, V, V) row-stochastic T_z of each topic z
    switch: float                      # ρ, probability that the topic is redrawn before each transition
    train_length: int                  # l_train
    eval_tokens: dict[int, np.ndarray]  # length L -> (m, L) held-out documents
    misalign_tokens: np.ndarray        # (m, l_train) held-out documents for L_misalign

    @property
    def vocab_size(self) -> int:
        return int(self.transitions.shape[1])

    def sample(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        """(n, length) documents: x_0 ~ U{V}; z_1 ~ U{K}; x_t ~ T_{z_t}[x_{t−1}]; z_{t+1} = z_t, or ~ U{K} w.p. ρ."""
        k, v, _ = self.transitions.shape
        topics = rng.integers(0, k, size=n)
        out = np.empty((n, length), dtype=np.int64)
        out[:, 0] = rng.integers(0, v, size=n)
        cumulative = np.cumsum(self.transitions, axis=2)
        for t in range(1, length):
            if t > 1 and self.switch > 0:
                redraw = rng.random(n) < self.switch
                topics = np.where(redraw, rng.integers(0, k, size=n), topics)
            rows = cumulative[topics, out[:, t - 1]]  # (n, V)
            out[:, t] = np.minimum((rows < rng.random((n, 1))).sum(axis=1), v - 1)
        return out

    def bayes_log_probs(self, tokens: np.ndarray) -> np.ndarray:
        """(n, L, V) exact log p(x_{t+1} = · | x_{≤t}) under the generative model (HMM filter over topics)."""
        k = self.transitions.shape[0]
        n, length = tokens.shape
        belief = np.full((n, k), 1.0 / k)  # p(z_{t+1} | x_{≤t})
        out = np.empty((n, length, self.vocab_size))
        for t in range(length):
            rows = self.transitions[:, tokens[:, t]]  # (K, n, V): T_z[x_t, ·]
            out[:, t] = np.einsum("nk,knv->nv", belief, rows)
            if t + 1 < length:
                belief = belief * rows[:, np.arange(n), tokens[:, t + 1]].T  # observe x_{t+1}
                belief /= belief.sum(axis=1, keepdims=True)
                belief = (1 - self.switch) * belief + self.switch / k  # z_{t+2}: kept or redrawn
        return np.log(out)


Predictor = Callable[[np.ndarray], np.ndarray]  # (n, L) int tokens -> (n, L, V) next-token log-probabilities


@dataclass(frozen=True, eq=False)
class LMResult:
    log_probs: Predictor                              # the trained model
    checkpoints: tuple[tuple[int, Predictor], ...] = ()  # (step, model at that step) along training


METRICS = {
    "long_length_loss": Metric(False, "", True, "loss at the longest evaluation length: next-token NLL in "
                               "nats/token (LM) or MSE (synthetic regression)", bounds=(0.0, None)),
    "train_length_loss": Metric(False, "", False, "the same loss at the (longest) training length", bounds=(0.0, None)),
    "length_gap": Metric(False, "", False, "long_length_loss − train_length_loss (the length-generalisation error)"),
    "loss_ratio": Metric(False, "", False, "long_length_loss / train_length_loss", bounds=(0.0, None)),
    "long_length_accuracy": Metric(True, "", False, "top-1 next-token accuracy (LM) or fraction within tolerance "
                                   "(regression) at the longest evaluation length", bounds=(0.0, 1.0)),
    "train_length_accuracy": Metric(True, "", False, "the same accuracy at the training length", bounds=(0.0, 1.0)),
    "long_length_perplexity": Metric(False, "", False, "exp(long_length_loss) (LM)", bounds=(1.0, None)),
    "train_length_perplexity": Metric(False, "", False, "exp(train_length_loss) (LM)", bounds=(1.0, None)),
    "long_length_excess_loss": Metric(False, "nats", False, "long_length_loss minus the Bayes-optimal NLL (LM)"),
    "misalignment": Metric(False, "nats", False, "Long-Short Misalignment E SCE(g(x[−l1:]), g(x[−l2:])), "
                           "l1, l2 in [l_train/2, l_train] (LM)", bounds=(0.0, None)),
    "corr_misalignment_long_loss": Metric(True, "", False, "Pearson correlation across checkpoints of the misalignment "
                                          "with long_length_loss (LM)", bounds=(-1.0, 1.0)),
    "corr_train_loss_long_loss": Metric(True, "", False, "Pearson correlation across checkpoints of train_length_loss "
                                        "with long_length_loss (LM)", bounds=(-1.0, 1.0)),
    "corr_advantage": Metric(True, "", False, "|corr_misalignment_long_loss| − |corr_train_loss_long_loss|: > 0 "
                             "when the misalignment tracks long-length loss better than the training-length loss "
                             "does (LM)", bounds=(-1.0, 1.0)),
}


# ---- the judge -----------------------------------------------------------------------------------

def sce(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """Symmetrical cross-entropy −Σ P log Q − Σ Q log P over the last axis, from log-probabilities."""
    return -(np.exp(log_p) * log_q).sum(-1) - (np.exp(log_q) * log_p).sum(-1)


def symmetric_kl(log_p: np.ndarray, log_q: np.ndarray) -> np.ndarray:
    """KL(P‖Q) + KL(Q‖P) = SCE(P, Q) − H(P) − H(Q) over the last axis: 0 when P = Q."""
    return ((np.exp(log_p) - np.exp(log_q)) * (log_p - log_q)).sum(-1)


def misalignment(predict: Predictor, tokens: np.ndarray, train_length: int, divergence=sce) -> float:
    """L_misalign of `predict` on held-out rows (m, ≥ l_train), exact over the uniform pairs (l1, l2); the metric
    uses SCE (the paper's form), `divergence=symmetric_kl` the long_short_alignment regulariser's default."""
    lengths = range(max(train_length // 2, 1), train_length + 1)
    final = np.stack([predict(tokens[:, -l:])[:, -1] for l in lengths])  # (n_lengths, m, V): g(x[−l:])
    pair = divergence(final[:, None], final[None, :])  # (n_lengths, n_lengths, m)
    return float(pair.mean())


def _lm_losses(problem: LMProblem, predict: Predictor) -> dict[int, tuple[float, float]]:
    """Length L -> (mean NLL over the L−1 predicted positions, top-1 accuracy)."""
    out = {}
    for length, tokens in sorted(problem.eval_tokens.items()):
        log_p = predict(tokens)[:, :-1]  # (m, L−1, V) predictions of tokens 1..L−1
        nxt = tokens[:, 1:]
        nll = -np.take_along_axis(log_p, nxt[..., None], axis=-1)[..., 0]
        out[length] = (float(nll.mean()), float((log_p.argmax(-1) == nxt).mean()))
    return out


def _bayes_loss(problem: LMProblem, length: int) -> float:
    tokens = problem.eval_tokens[length]
    log_p = problem.bayes_log_probs(tokens)[:, :-1]
    return float(-np.take_along_axis(log_p, tokens[:, 1:, None], axis=-1).mean())


def _pearson(x: list[float], y: list[float]) -> float:
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _headline(losses: dict, train_length: int) -> dict[str, float]:
    (train_loss, train_acc), (long_loss, long_acc) = losses[train_length], losses[max(losses)]
    return {"train_length_loss": train_loss, "long_length_loss": long_loss, "length_gap": long_loss - train_loss,
            "loss_ratio": long_loss / train_loss if train_loss > 0 else float("nan"),
            "train_length_accuracy": train_acc, "long_length_accuracy": long_acc}


def _score_lm(problem: LMProblem, result: LMResult) -> dict[str, float]:
    scores = _headline(_lm_losses(problem, result.log_probs), problem.train_length)
    scores["train_length_perplexity"] = float(np.exp(scores["train_length_loss"]))
    scores["long_length_perplexity"] = float(np.exp(scores["long_length_loss"]))
    scores["long_length_excess_loss"] = scores["long_length_loss"] - _bayes_loss(problem, max(problem.eval_tokens))
    scores["misalignment"] = misalignment(result.log_probs, problem.misalign_tokens, problem.train_length)
    if result.checkpoints:
        mis, train, long = [], [], []
        for _, predict in result.checkpoints:
            head = _headline(_lm_losses(problem, predict), problem.train_length)
            mis.append(misalignment(predict, problem.misalign_tokens, problem.train_length))
            train.append(head["train_length_loss"])
            long.append(head["long_length_loss"])
        scores["corr_misalignment_long_loss"] = _pearson(mis, long)
        scores["corr_train_loss_long_loss"] = _pearson(train, long)
        scores["corr_advantage"] = abs(scores["corr_misalignment_long_loss"]) - abs(scores["corr_train_loss_long_loss"])
    return scores


def _regression_losses(problem: RegressionProblem, result: RegressionResult) -> dict[int, tuple[float, float]]:
    out = {}
    for length, target in sorted(problem.eval_targets.items()):
        pred = np.asarray(result.predictions[length], float)
        if pred.shape != target.shape:
            raise ValueError(f"predictions at length {length} must have shape {target.shape}, got {pred.shape}")
        out[length] = (float(np.mean((pred - target) ** 2)), float(np.mean(np.abs(pred - target) <= problem.tolerance)))
    return out


def score(problem, result) -> dict[str, float]:
    if isinstance(problem, LMProblem):
        return _score_lm(problem, result)
    if isinstance(problem, RegressionProblem):
        return _headline(_regression_losses(problem, result), problem.train_lengths[1])
    raise TypeError(f"not a length_generalization problem: {type(problem).__name__}")


def trace(problem, result) -> dict[str, list[tuple[int, float]]]:
    """Curves over the evaluation length L (the step axis): `loss_at_length` and `accuracy_at_length`."""
    if isinstance(problem, LMProblem):
        losses = _lm_losses(problem, result.log_probs)
    else:
        losses = _regression_losses(problem, result)
    return {"loss_at_length": [(L, loss) for L, (loss, _) in losses.items()],
            "accuracy_at_length": [(L, acc) for L, (_, acc) in losses.items()]}
