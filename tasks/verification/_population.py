"""Input spaces and population models with exact box probabilities (as in probspecs).

A population model is a finite mixture of products of independent factors,

    P(B) = Σ_c w_c Π_f P_f(B ∩ restriction_f),

which covers every model the benchmarks use: independent normals, truncated normals (scipy's
normal CDF, renormalised on the truncation box), uniforms, integer-valued and one-hot categorical
variables, the FairSquare Bayesian network (four cases of (sex, capital gain), within which the
other variables are independent normals: the total-probability rule over the cases) and the
star-shaped Bayesian network of the MiniACSIncome stand-in (mixture over the root SEX).
A box may be unbounded (±inf); masses are then CDF differences of the unbounded normal, so the
mass outside any finite box is exact and lands in the gap between PV's lower and upper bound.
`probability` is the one way to a box's mass (and `point_masses` its table form for enumerated points), so they are
where a problem's meter counts branch-and-bound work
(`Population.count_into`): every branch a method opens needs its exact mass (docs/papers/prob-verification.md, "What
the paper claims": PV bounds probabilities by branching over input boxes).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace

import numpy as np
from scipy import special, stats

INF = float("inf")


@dataclass(frozen=True, eq=False)
class InputSpace:
    """The box of possible inputs, which dimensions are integer, and the one-hot groups."""

    lb: np.ndarray
    ub: np.ndarray
    names: tuple[str, ...]
    integer: tuple[int, ...] = ()            # dims holding integers (their splits are floor / floor + 1)
    groups: tuple[tuple[int, ...], ...] = ()  # one-hot categorical groups

    @property
    def dim(self) -> int:
        return len(self.names)


def _phi_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Φ(hi) − Φ(lo) without cancellation in the upper tail (both standardised)."""
    upper = lo > 0
    mass = np.where(upper, special.ndtr(-lo) - special.ndtr(-hi), special.ndtr(hi) - special.ndtr(lo))
    return np.clip(mass, 0.0, 1.0)


@dataclass(frozen=True, eq=False)
class Normal:
    """N(mean, var) on dim, truncated to [lo, hi] (renormalised) and restricted to [a, b] (not)."""

    dim: int
    mean: float
    var: float
    lo: float = -INF
    hi: float = INF
    a: float = -INF
    b: float = INF

    @property
    def dims(self) -> tuple[int, ...]:
        return (self.dim,)

    def _std(self, x):
        return (np.asarray(x, dtype=float) - self.mean) / np.sqrt(self.var)

    def mass(self, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
        lo = np.maximum(lb[:, self.dim], max(self.lo, self.a))
        hi = np.minimum(ub[:, self.dim], min(self.hi, self.b))
        m = np.where(hi > lo, _phi_mass(self._std(lo), self._std(np.maximum(hi, lo))), 0.0)
        return m / _phi_mass(self._std(self.lo), self._std(self.hi))

    def total(self) -> float:
        return float(self.mass(np.full((1, self.dim + 1), -INF), np.full((1, self.dim + 1), INF))[0])

    def sample(self, n: int, rng: np.random.Generator, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
        lo = self._std(max(self.lo, self.a, lb[self.dim]))
        hi = self._std(min(self.hi, self.b, ub[self.dim]))
        z = stats.truncnorm.rvs(lo, hi, size=n, random_state=rng)
        return (self.mean + np.sqrt(self.var) * z)[:, None]


@dataclass(frozen=True, eq=False)
class Uniform:
    dim: int
    lo: float
    hi: float

    @property
    def dims(self) -> tuple[int, ...]:
        return (self.dim,)

    def mass(self, lb, ub):
        lo, hi = np.maximum(lb[:, self.dim], self.lo), np.minimum(ub[:, self.dim], self.hi)
        return np.clip(hi - lo, 0.0, None) / (self.hi - self.lo)

    def total(self) -> float:
        return 1.0

    def sample(self, n, rng, lb, ub):
        return rng.uniform(max(self.lo, lb[self.dim]), min(self.hi, ub[self.dim]), size=(n, 1))


@dataclass(frozen=True, eq=False)
class Discrete:
    """An integer-valued variable on one dim: P(x = values[i]) = probs[i]."""

    dim: int
    values: np.ndarray
    probs: np.ndarray

    @property
    def dims(self) -> tuple[int, ...]:
        return (self.dim,)

    def support(self) -> list[tuple[float, ...]]:
        return [(float(v),) for v, p in zip(self.values, self.probs) if p > 0]

    def mass(self, lb, ub):
        inside = (self.values[None, :] >= lb[:, self.dim, None]) & (self.values[None, :] <= ub[:, self.dim, None])
        return inside.astype(float) @ self.probs

    def total(self) -> float:
        return float(np.sum(self.probs))

    def sample(self, n, rng, lb, ub):
        p = self.probs * (self.values >= lb[self.dim]) * (self.values <= ub[self.dim])
        return rng.choice(self.values, size=n, p=p / p.sum()).astype(float)[:, None]


@dataclass(frozen=True, eq=False)
class Categorical:
    """A one-hot group: value k sets dims[k] = 1 and the others 0, with probability probs[k]."""

    dims: tuple[int, ...]
    probs: np.ndarray

    def support(self) -> list[tuple[float, ...]]:
        eye = np.eye(len(self.dims))
        return [tuple(eye[k]) for k, p in enumerate(self.probs) if p > 0]

    def _allowed(self, lb, ub) -> np.ndarray:
        """(N, K): value k lies in the box (dims[k] may be 1 and every other dim 0)."""
        lo, hi = lb[:, list(self.dims)], ub[:, list(self.dims)]       # (N, K)
        can_one, can_zero = (lo <= 1) & (hi >= 1), (lo <= 0) & (hi >= 0)
        bad = ~can_zero
        others = bad.sum(axis=1, keepdims=True) - bad    # other dims of the group that cannot be 0
        return can_one & (others == 0)

    def mass(self, lb, ub):
        return self._allowed(lb, ub).astype(float) @ self.probs

    def total(self) -> float:
        return float(np.sum(self.probs))

    def sample(self, n, rng, lb, ub):
        p = self.probs * self._allowed(lb[None], ub[None])[0]
        k = rng.choice(len(self.dims), size=n, p=p / p.sum())
        return np.eye(len(self.dims))[k]


@dataclass(frozen=True, eq=False)
class Component:
    weight: float
    factors: tuple


@dataclass(frozen=True, eq=False)
class Population:
    """Σ_c w_c Π_f P_f over an input space; each component's factors cover every dim once."""

    space: InputSpace
    components: tuple[Component, ...]

    def __post_init__(self) -> None:
        for c in self.components:
            covered = sorted(d for f in c.factors for d in f.dims)
            if covered != list(range(self.space.dim)):
                raise ValueError(f"a component's factors must cover dims 0..{self.space.dim - 1} once, got {covered}")
        object.__setattr__(self, "_meters", weakref.WeakSet())  # not a field: no part of the model

    def count_into(self, meter) -> None:
        """Count every evaluation of `probability` from now on into `meter` (a VerificationProblem's
        bench.observe.Meter): `mass_calls` += 1 per call, `mass_boxes` += the boxes it was given. The meter is
        held weakly, so a population shared by several problems counts into each live one only (as
        bench.observe.count_forwards does)."""
        self._meters.add(meter)

    def __getstate__(self) -> dict:
        """Pickled without the meters (weak references do not pickle); a VerificationProblem links its own again."""
        return {k: v for k, v in self.__dict__.items() if k != "_meters"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _meters=weakref.WeakSet())

    def probability(self, lb: np.ndarray, ub: np.ndarray) -> np.ndarray:
        """(N,) exact P(x ∈ [lb, ub]) for (N, d) boxes."""
        lb, ub = np.atleast_2d(lb), np.atleast_2d(ub)
        self._count(lb.shape[0])
        total = np.zeros(lb.shape[0])
        for c in self.components:
            term = np.full(lb.shape[0], c.weight)
            for f in c.factors:
                term = term * f.mass(lb, ub)
            total += term
        return total

    def sample(self, n: int, rng: np.random.Generator, lb: np.ndarray | None = None,
               ub: np.ndarray | None = None) -> np.ndarray:
        """(n, d) i.i.d. inputs, from D conditioned on the box [lb, ub] when given."""
        lb = self.space.lb if lb is None else np.asarray(lb, dtype=float)
        ub = self.space.ub if ub is None else np.asarray(ub, dtype=float)
        weights = np.array([c.weight * np.prod([f.mass(lb[None], ub[None])[0] for f in c.factors])
                            for c in self.components])
        if not weights.sum() > 0:
            raise ValueError("cannot sample from a box of probability 0")
        comp = rng.choice(len(self.components), size=n, p=weights / weights.sum())
        x = np.empty((n, self.space.dim))
        for c_idx, c in enumerate(self.components):
            rows = np.flatnonzero(comp == c_idx)
            for f in c.factors:
                if rows.size:
                    x[np.ix_(rows, list(f.dims))] = f.sample(rows.size, rng, lb, ub)
        return x

    @property
    def discrete(self) -> bool:
        return all(hasattr(f, "support") for c in self.components for f in c.factors)

    def support_size(self) -> int:
        return int(np.prod([len(v) for _, v in self._supports()]))

    def _supports(self):
        by_dims: dict[tuple[int, ...], list] = {}
        for c in self.components:
            for f in c.factors:
                values = by_dims.setdefault(tuple(f.dims), [])
                values += [v for v in f.support() if v not in values]
        return sorted(by_dims.items())

    def enumerate(self, chunk: int = 1 << 16):
        """Every input with positive probability, in chunks: yields ((n, d) points, (n,) P(x)).

        A point's mass is `probability(x, x)`, computed from tables (`point_masses`): each factor's mass at each
        value of its dims' support, looked up by the point's digit and multiplied in `probability`'s order, so
        every mass is the same float (a factor's mass at a point depends only on its own dims). On MiniACSIncome's
        7 variables (3.1·10⁷ points) this takes the enumeration from 77 s to 10 (the point-as-box masses built an
        (N, K) indicator per factor per chunk)."""
        groups = [(tuple(dims), np.array(values, dtype=float)) for dims, values in self._supports()]
        columns = [_columns(dims) for dims, _ in groups]
        sizes = np.array([len(v) for _, v in groups], dtype=np.int64)
        strides = np.concatenate([np.cumprod(sizes[::-1])[::-1][1:], [1]])   # mixed radix, last fastest
        total = int(np.prod(sizes))
        tables = self._mass_tables(groups)
        for start in range(0, total, chunk):
            index = np.arange(start, min(start + chunk, total), dtype=np.int64)
            digits = [(index // stride) % size for size, stride in zip(sizes, strides)]
            x = np.empty((index.size, self.space.dim))
            for column, (_, values), digit in zip(columns, groups, digits):
                x[:, column] = values[digit]
            p = self.point_masses(tables, digits)
            keep = p > 0
            yield (x, p) if keep.all() else (x[keep], p[keep])

    def point_masses(self, tables, digits: list[np.ndarray]) -> np.ndarray:
        """(N,) exact P(x) of the points whose support digits are `digits` (one (N,) array per group), from
        `_mass_tables`: the same floats as `probability(x, x)`, counted into the meters as N boxes."""
        n = len(digits[0])
        self._count(n)
        p = np.zeros(n)
        for weight, factors in tables:
            term = np.full(n, weight)
            for group, table in factors:
                term = term * table[digits[group]]
            p += term
        return p

    def _mass_tables(self, groups) -> list[tuple[float, list[tuple[int, np.ndarray]]]]:
        """Per component: (weight, [(group of the factor, the factor's mass at each of the group's values)])."""
        group_of = {dims: g for g, (dims, _) in enumerate(groups)}
        tables = []
        for c in self.components:
            factors = []
            for f in c.factors:
                g = group_of[tuple(f.dims)]
                dims, values = groups[g]
                points = np.zeros((len(values), self.space.dim))
                points[:, list(dims)] = values
                factors.append((g, f.mass(points, points)))
            tables.append((c.weight, factors))
        return tables

    def _count(self, boxes: int) -> None:
        for meter in self._meters:
            meter.count("mass_calls")
            meter.count("mass_boxes", boxes)


def _columns(dims: tuple[int, ...]) -> slice | list[int]:
    """The columns of `dims`: a slice when they are consecutive (a slice assignment is several times faster)."""
    if list(dims) == list(range(dims[0], dims[0] + len(dims))):
        return slice(dims[0], dims[0] + len(dims))
    return list(dims)


def marginalise(population: Population, keep: list[int]) -> Population:
    """The population of the inputs `keep` (in that order): factors of dropped dims integrate out."""
    index = {d: i for i, d in enumerate(keep)}
    comps = []
    for c in population.components:
        weight, factors = c.weight, []
        for f in c.factors:
            if all(d in index for d in f.dims):
                factors.append(_remap(f, index))
            elif not any(d in index for d in f.dims):
                weight *= f.total()
            else:
                raise ValueError(f"cannot keep part of a multi-dim factor {f.dims}")
        comps.append(Component(weight, tuple(factors)))
    s = population.space
    space = InputSpace(s.lb[keep], s.ub[keep], tuple(s.names[d] for d in keep),
                       tuple(index[d] for d in s.integer if d in index),
                       tuple(tuple(index[d] for d in g) for g in s.groups if all(d in index for d in g)))
    return Population(space, tuple(comps))


def _remap(f, index):
    if isinstance(f, Categorical):
        return replace(f, dims=tuple(index[d] for d in f.dims))
    return replace(f, dim=index[f.dim])
