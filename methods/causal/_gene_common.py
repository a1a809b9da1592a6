"""GENE's machinery shared by its variants: batched MLP fits, the order fitness (Eq. 6), the greedy
OP_ij order search (Algorithm 1) and the two parent-selection rules (Algorithm 2 and the code's).

Li, Qian, Wang, Li, Zhang & Zhou, ICML 2025 (PMLR 267:35753-35768), §4; code ECNU-ILOG/GENE `GENE.py`.

Regressions. Each (node, input set) is fitted once and cached, as in the code: an MLP
Linear(k, h) → sigmoid → Linear(h, 1), full-batch Adam (lr 0.1) on the MSE, in-sample R² and
residuals r = f̂(V_S) − V_v. Every fit with k inputs starts from the same template initialisation
(the code deep-copies one template per k); templates come from ctx.torch_generator with
torch.nn.Linear's law U(±1/√fan_in). Many fits are trained at once: B models share one (n, d)
input, each masks its first-layer weight to its input columns, and the summed per-model mean losses
give every model exactly its own gradient, so Adam (elementwise) trains each as if alone. The template
rows are laid out in increasing column index (the code lays them out in order-position sequence, so its
result for a set depends on which order asked first); a float32 GEMM over the batch can differ from a
lone fit in the last bits.

Independence term. For each input c of a fit, a χ² contingency test on the 2-D equal-width histogram
(m bins each) of (V_c, r) plus 1e-8 per cell; IT = 1 when p < significance.
fit(π) = Σ_p R²_p · (1 − α · #dependent_p / (p + offset)) over positions p = 0..d−1 (p predecessors):
offset 1 is Eq. 6 (1/i, i the 1-based position), offset 0 is the code's α·R²/i with i = p.
R² is not clipped at 0 (the code's `fitness_iden_origin`); the first position contributes 0.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
from scipy.stats import chi2

from bench.context import RunContext
from tasks.causal import CausalProblem, CausalResult

Key = tuple[int, frozenset]


@dataclass(frozen=True)
class GeneConfig:
    hidden: int = 20               # h, hidden units (paper text: 256; the code, whose numbers Table 1 reports: 20)
    epochs: int = 500              # full-batch Adam steps per regression (code: 500)
    lr: float = 0.1                # Adam learning rate (code: 0.1)
    bins: int = 10                 # m, equal-width bins per axis of the χ² histogram (paper: 10)
    significance: float = 0.05     # IT = 1 when the χ² p-value is below this (paper: 0.05)
    alpha: float = 1.0             # α, weight of the independence term in Eq. 6 (paper: 1)
    penalty_offset: int = 1        # Eq. 6 divides by (#predecessors + offset): paper 1, code 0
    max_sweeps: int = 0            # cap on full OP_ij sweeps; 0: until a sweep improves nothing (Algorithm 1)
    batch: int = 64                # regressions trained together (speed only; results do not depend on it)

    def __post_init__(self) -> None:
        if self.hidden < 1 or self.epochs < 1 or self.lr <= 0 or self.bins < 2 or self.batch < 1:
            raise ValueError(f"need hidden, epochs, batch >= 1, lr > 0 and bins >= 2; got hidden={self.hidden}, "
                             f"epochs={self.epochs}, lr={self.lr}, bins={self.bins}, batch={self.batch}")
        if not 0 < self.significance < 1 or self.alpha < 0 or self.penalty_offset not in (0, 1) or self.max_sweeps < 0:
            raise ValueError("need 0 < significance < 1, alpha >= 0, penalty_offset in (0, 1) and max_sweeps >= 0; "
                             f"got {self.significance}, {self.alpha}, {self.penalty_offset}, {self.max_sweeps}")


@dataclass(frozen=True)
class PruningConfig(GeneConfig):
    theta: float = 0.02            # θ of Algorithm 2: prune while the R² drop is below it (not in the paper)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.theta < 0:
            raise ValueError(f"theta must be >= 0, got {self.theta}")


@dataclass(frozen=True)
class Fit:
    r2: float          # in-sample R² = 1 − MSE / Var(V_v)
    dependent: int     # how many inputs the χ² test finds dependent on the residual


def equal_width_bins(values: np.ndarray, bins: int) -> np.ndarray:
    """Bin index in [0, bins) of each value among equal-width bins over [min, max], exactly as
    np.histogram2d bins them (edges np.linspace(min, max, bins + 1), half-open bins, the last closed;
    a constant column spans [v − ½, v + ½])."""
    lo, hi = float(values.min()), float(values.max())
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, bins + 1)
    return np.minimum(np.searchsorted(edges, values, side="right") - 1, bins - 1)


def chi2_pvalues(inputs: np.ndarray, resid: np.ndarray, bins: int) -> np.ndarray:
    """(k,) p-values of the code's test for each input column: `chi2_contingency` on
    `np.histogram2d(V_c, r, bins=[m, m])[0] + 1e-8` (m − 1)² degrees of freedom, no continuity
    correction), vectorised over the k inputs. inputs: (n, k), resid: (n,)."""
    k = inputs.shape[1]
    col = np.stack([equal_width_bins(inputs[:, c], bins) for c in range(k)])     # (k, n)
    row = equal_width_bins(resid, bins)                                          # (n,)
    flat = (np.arange(k)[:, None] * bins + col) * bins + row[None, :]
    counts = np.bincount(flat.ravel(), minlength=k * bins * bins).reshape(k, bins, bins) + 1e-8
    total = counts.sum(axis=(1, 2), keepdims=True)
    expected = counts.sum(axis=2, keepdims=True) * counts.sum(axis=1, keepdims=True) / total
    stat = np.sum((counts - expected) ** 2 / expected, axis=(1, 2))
    return chi2.sf(stat, (bins - 1) ** 2)


class MLPFits:
    """Cache of in-sample MLP regressions of a node on a set of other columns, trained in batches."""

    def __init__(self, data: np.ndarray, config: GeneConfig, generator: torch.Generator):
        self.data, self.config = data, config
        self.x = torch.as_tensor(data, dtype=torch.float32)                    # (n, d)
        d, h = data.shape[1], config.hidden
        self.templates = {k: _template(k, h, generator) for k in range(1, d)}
        self.cache: dict[Key, Fit] = {}

    def get(self, node: int, inputs: frozenset) -> Fit:
        if not inputs:
            return Fit(0.0, 0)  # the mean predicts V exactly as well as its variance: R² = 0
        return self.cache[(node, inputs)]

    def missing(self, keys: Iterable[Key]) -> list[Key]:
        return [k for k in dict.fromkeys(keys) if k[1] and k not in self.cache]

    def train(self, keys: Iterable[Key]) -> None:
        todo = self.missing(keys)
        for start in range(0, len(todo), self.config.batch):
            chunk = todo[start:start + self.config.batch]
            r2, resid = self._train_batch(chunk)
            for b, (node, inputs) in enumerate(chunk):
                p = chi2_pvalues(self.data[:, sorted(inputs)], resid[b], self.config.bins)
                self.cache[(node, inputs)] = Fit(float(r2[b]), int(np.sum(p < self.config.significance)))

    def _train_batch(self, keys: Sequence[Key]) -> tuple[np.ndarray, np.ndarray]:
        d, h = self.x.shape[1], self.config.hidden
        w1, b1 = torch.zeros(len(keys), d, h), torch.zeros(len(keys), 1, h)
        w2, b2 = torch.zeros(len(keys), h), torch.zeros(len(keys), 1)
        mask = torch.zeros(len(keys), d, 1)
        for b, (_, inputs) in enumerate(keys):
            cols = sorted(inputs)
            tw1, tb1, tw2, tb2 = self.templates[len(cols)]
            w1[b, cols], b1[b, 0], w2[b], b2[b] = tw1, tb1, tw2, tb2
            mask[b, cols] = 1.0
        params = [p.requires_grad_() for p in (w1, b1, w2, b2)]
        y = self.x[:, [node for node, _ in keys]].T                              # (B, n)
        optimizer = torch.optim.Adam(params, lr=self.config.lr)
        for _ in range(self.config.epochs):
            optimizer.zero_grad()
            out = _forward(self.x, w1 * mask, b1, w2, b2)                         # (B, n)
            ((out - y) ** 2).mean(dim=1).sum().backward()
            optimizer.step()
        with torch.no_grad():
            resid = (_forward(self.x, w1 * mask, b1, w2, b2) - y).double().numpy()  # (B, n)
        target = y.double().numpy()
        r2 = 1.0 - np.mean(resid**2, axis=1) / np.var(target, axis=1)
        return r2, resid


def _template(k: int, h: int, generator: torch.Generator) -> tuple[torch.Tensor, ...]:
    """torch.nn.Linear's default initialisation, U(−1/√fan_in, 1/√fan_in), for both layers."""
    def uniform(shape, fan_in):
        return (torch.rand(shape, generator=generator) * 2.0 - 1.0) / fan_in**0.5
    return uniform((k, h), k), uniform((h,), k), uniform((h,), h), uniform((1,), h)


def _forward(x, w1, b1, w2, b2):
    hidden = torch.sigmoid(torch.einsum("nd,bdh->bnh", x, w1) + b1)               # (B, n, h)
    return torch.einsum("bnh,bh->bn", hidden, w2) + b2                           # (B, n)


# ---- the order fitness and Algorithm 1 -----------------------------------------------------------

class OrderFitness:
    """fit(π) of Eq. 6 over an MLPFits cache."""

    def __init__(self, fits: MLPFits, alpha: float, penalty_offset: int):
        self.fits, self.alpha, self.offset = fits, alpha, penalty_offset

    def keys(self, order: Sequence[int]) -> list[Key]:
        return [(int(order[p]), frozenset(int(v) for v in order[:p])) for p in range(1, len(order))]

    def needed(self, order: Sequence[int]) -> list[Key]:
        return self.fits.missing(self.keys(order))

    def train(self, keys: Iterable[Key]) -> None:
        self.fits.train(keys)

    def __call__(self, order: Sequence[int]) -> float:
        total = 0.0
        for p, (node, preds) in enumerate(self.keys(order), start=1):
            fit = self.fits.get(node, preds)
            total += fit.r2 * (1.0 - self.alpha * fit.dependent / (p + self.offset))
        return total


def move(order: Sequence[int], i: int, j: int) -> list[int]:
    """OP_ij: take the element at position i and re-insert it at position j (the code's `move`)."""
    out = list(order)
    out.insert(j, out.pop(i))
    return out


def greedy_order_search(fitness, start: Sequence[int], max_sweeps: int = 0, batch: int = 64,
                        ctx: RunContext | None = None) -> tuple[list[int], float]:
    """Algorithm 1: sweep all (i, j), i ≠ j, accept any OP_ij move that strictly increases fitness;
    stop after a sweep without improvement (or after `max_sweeps` sweeps, if > 0).

    `fitness` has `needed(order)` (untrained keys), `train(keys)` and `__call__(order)`. The moves are
    evaluated in the code's order; the regressions of the next moves are trained ahead in batches of
    about `batch`, which changes the cost, never the path.
    """
    d = len(start)
    pairs = [(i, j) for i in range(d) for j in range(d) if i != j]
    best = list(start)
    fitness.train(fitness.needed(best))
    best_value, step, sweeps = fitness(best), 0, 0
    while True:
        improved, k = False, 0
        while k < len(pairs):
            pending, end = [], k
            while end < len(pairs) and (len(pending) < batch or end == k):
                pending += fitness.needed(move(best, *pairs[end]))
                end += 1
            fitness.train(pending)
            for idx in range(k, end):
                candidate = move(best, *pairs[idx])
                value = fitness(candidate)
                if value > best_value:
                    best, best_value, improved, step = candidate, value, True, step + 1
                    if ctx is not None:
                        ctx.log(step, fitness=best_value)
                        ctx.check_deadline()
                    k = idx + 1
                    break
            else:
                k = end
        sweeps += 1
        if not improved or (max_sweeps and sweeps >= max_sweeps):
            return best, best_value


# ---- parent selection ----------------------------------------------------------------------------

def _select(fits: MLPFits, order: Sequence[int], start: Callable, step: Callable) -> np.ndarray:
    """Run a per-node greedy parent rule for every node at once, batching each round's regressions.

    start(preds) -> the initial parent set; step(node, parents, preds) -> (keys it needs, decide), where
    decide() returns the next parent set or None to stop.
    """
    d = len(order)
    preds = {int(order[p]): frozenset(int(v) for v in order[:p]) for p in range(d)}
    parents = {v: start(preds[v]) for v in preds}
    active = [v for v in preds if preds[v]]
    while active:
        plans = {v: step(v, parents[v], preds[v]) for v in active}
        fits.train(k for keys, _ in plans.values() for k in keys)
        next_active = []
        for v, (_, decide) in plans.items():
            chosen = decide()
            if chosen is not None:
                parents[v] = chosen
                next_active.append(v)
        active = next_active
    adj = np.zeros((d, d), dtype=int)
    for v, ps in parents.items():
        adj[sorted(ps), v] = 1
    return adj


def least_pruning(fits: MLPFits, order: Sequence[int], theta: float) -> np.ndarray:
    """Algorithm 2: start from all predecessors; remove the parent whose removal lowers R² least while
    that drop is below θ."""
    def step(v, parents, preds):
        options = [parents - {c} for c in sorted(parents)]
        def decide():
            if not parents:
                return None
            best = max(options, key=lambda s: fits.get(v, s).r2)
            drop = fits.get(v, parents).r2 - fits.get(v, best).r2
            return best if drop < theta else None
        return [(v, s) for s in options + [parents]], decide
    return _select(fits, order, lambda preds: preds, step)


def forward_selection(fits: MLPFits, order: Sequence[int], threshold: float) -> np.ndarray:
    """The code's `parent_search`: add the predecessor giving the highest R² while the gain is ≥ threshold."""
    def step(v, parents, preds):
        options = [parents | {c} for c in sorted(preds - parents)]
        def decide():
            if not options:
                return None
            best = max(options, key=lambda s: fits.get(v, s).r2)
            gain = fits.get(v, best).r2 - fits.get(v, parents).r2
            return best if gain >= threshold else None
        return [(v, s) for s in options], decide
    return _select(fits, order, lambda preds: frozenset(), step)


def solve_pruned(problem: CausalProblem, config: PruningConfig, ctx: RunContext) -> CausalResult:
    """GENE with Algorithm 2's least pruning at θ = config.theta."""
    return run_gene(problem, config, ctx, lambda fits, order: least_pruning(fits, order, config.theta))


def run_gene(problem: CausalProblem, config: GeneConfig, ctx: RunContext, select: Callable) -> CausalResult:
    """Order search from a random permutation, then `select(fits, order)` for the parents."""
    t0 = time.perf_counter()
    fits = MLPFits(problem.data, config, ctx.torch_generator)
    fitness = OrderFitness(fits, config.alpha, config.penalty_offset)
    start = ctx.rng.permutation(problem.d).tolist()
    order, _ = greedy_order_search(fitness, start, config.max_sweeps, config.batch, ctx)
    adj = select(fits, order)
    ctx.log(0, regressions=len(fits.cache))
    return CausalResult(adjacency=adj, order=np.asarray(order), runtime_s=time.perf_counter() - t0)
