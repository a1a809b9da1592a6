"""The probabilistic specification language (the paper's problem; probspecs formula.py, trinary_logic.py).

Two levels, both small typed expression trees:

- Events φ(x, f(x)) over one input x and the network's outputs y = f(x): atoms `e >= 0` / `e > 0`
  of a linear expression e = Σ a_i y_i + Σ c_j x_j + k (built with `out(i)`, `inp(j)` and the
  operators + − × and comparisons), combined with And, Or, Not. Their satisfaction function s
  (probspecs' satisfaction function) is e for an atom, −s for Not, min for And, max for Or; on a box it is
  bounded by interval arithmetic from bounds on y and x (correlations between outputs are lost,
  as in the paper). Satisfaction is tracked in three-valued (Kleene) logic: +1 true, −1 false,
  0 unknown, because s = 0 alone cannot tell `>=` from `>`.
- Probabilistic formulas over probability terms Prob(φ | ψ): arithmetic + − × ÷ of terms and
  constants, comparisons between them, And / Or / Not; evaluated on per-probability intervals
  with interval arithmetic and three-valued logic (None = undecided).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import torch

TRUE_, FALSE_, UNKNOWN = 1, -1, 0


# ---- events over one input and the network's outputs ----------------------------------------------

@dataclass(frozen=True, eq=False)
class Lin:
    """Σ a_i y_i + Σ c_j x_j + k: `out` and `inp` are ((index, coefficient), ...)."""

    out: tuple[tuple[int, float], ...] = ()
    inp: tuple[tuple[int, float], ...] = ()
    const: float = 0.0

    def _combine(self, other: "Lin | float", sign: float) -> "Lin":
        other = other if isinstance(other, Lin) else Lin(const=float(other))
        merge = lambda a, b: _merge(a + tuple((i, sign * c) for i, c in b))  # noqa: E731
        return Lin(merge(self.out, other.out), merge(self.inp, other.inp), self.const + sign * other.const)

    def __add__(self, other): return self._combine(other, 1.0)
    def __radd__(self, other): return self._combine(other, 1.0)
    def __sub__(self, other): return self._combine(other, -1.0)
    def __rsub__(self, other): return (-self)._combine(other, 1.0)
    def __neg__(self): return self * -1.0

    def __mul__(self, k: float) -> "Lin":
        return Lin(tuple((i, c * k) for i, c in self.out), tuple((j, c * k) for j, c in self.inp), self.const * k)

    __rmul__ = __mul__

    def __ge__(self, other): return Atom(self - other, strict=False)
    def __gt__(self, other): return Atom(self - other, strict=True)
    def __le__(self, other): return Atom(-(self - other), strict=False)
    def __lt__(self, other): return Atom(-(self - other), strict=True)

    def interval(self, y_lb, y_ub, x_lb, x_ub):
        lo = torch.full(y_lb.shape[:1], self.const, dtype=y_lb.dtype)
        hi = lo.clone()
        for terms, a, b in ((self.out, y_lb, y_ub), (self.inp, x_lb, x_ub)):
            for i, c in terms:
                lo = lo + (c * a[:, i] if c >= 0 else c * b[:, i])
                hi = hi + (c * b[:, i] if c >= 0 else c * a[:, i])
        return lo, hi

    def value(self, y, x):
        return self.interval(y, y, x, x)[0]


def _merge(terms):
    acc: dict[int, float] = {}
    for i, c in terms:
        acc[i] = acc.get(i, 0.0) + c
    return tuple((i, c) for i, c in sorted(acc.items()) if c != 0.0)


def out(i: int) -> Lin:
    """The network's output y_i."""
    return Lin(out=((i, 1.0),))


def inp(j: int) -> Lin:
    """The input variable x_j."""
    return Lin(inp=((j, 1.0),))


@dataclass(frozen=True, eq=False)
class Atom:
    expr: Lin      # satisfied when expr >= 0 (strict: expr > 0)
    strict: bool = False


@dataclass(frozen=True, eq=False)
class And:
    parts: tuple


@dataclass(frozen=True, eq=False)
class Or:
    parts: tuple


@dataclass(frozen=True, eq=False)
class Not:
    part: object


Event = Union[Atom, And, Or, Not]
TRUE = And(())


def all_of(*parts) -> And:
    return And(tuple(parts))


def any_of(*parts) -> Or:
    return Or(tuple(parts))


def sat_bounds(phi, y_lb, y_ub, x_lb, x_ub):
    """Bounds (N,) on the satisfaction function over N boxes, and the three-valued status (N,)."""
    if isinstance(phi, Atom):
        lo, hi = phi.expr.interval(y_lb, y_ub, x_lb, x_ub)
        sat = (lo > 0) if phi.strict else (lo >= 0)
        viol = (hi <= 0) if phi.strict else (hi < 0)
        return lo, hi, sat.to(torch.int8) - viol.to(torch.int8)
    if isinstance(phi, Not):
        lo, hi, status = sat_bounds(phi.part, y_lb, y_ub, x_lb, x_ub)
        return -hi, -lo, -status
    n = y_lb.shape[0]
    parts = [sat_bounds(p, y_lb, y_ub, x_lb, x_ub) for p in phi.parts]
    if not parts:
        fill = float("inf") if isinstance(phi, And) else float("-inf")
        value = TRUE_ if isinstance(phi, And) else FALSE_
        full = torch.full((n,), fill, dtype=y_lb.dtype)
        return full, full.clone(), torch.full((n,), value, dtype=torch.int8)
    los, his, statuses = (torch.stack(v) for v in zip(*parts))
    if isinstance(phi, And):   # Kleene: min of the statuses
        return los.min(0).values, his.min(0).values, statuses.min(0).values
    return los.max(0).values, his.max(0).values, statuses.max(0).values


def holds(phi, y, x) -> torch.Tensor:
    """(N,) bool: φ at N points (exact evaluation, for sampling and enumeration)."""
    return sat_bounds(phi, y, y, x, x)[2] == TRUE_


def uses_outputs(phi) -> bool:
    if isinstance(phi, Atom):
        return bool(phi.expr.out)
    if isinstance(phi, Not):
        return uses_outputs(phi.part)
    return any(uses_outputs(p) for p in phi.parts)


def split_input_bounds(phi) -> tuple[object, list[tuple[int, float, float, bool]]]:
    """`apply_symbolic_bounds`: top-level conjuncts c·x_j + k >= 0 leave φ and become box bounds.

    Returns the rest of φ and [(j, lower, upper, strict)] with ±inf for the open side.
    """
    conjuncts = list(phi.parts) if isinstance(phi, And) else [phi]
    rest, bounds = [], []
    for c in conjuncts:
        if isinstance(c, Atom) and not c.expr.out and len(c.expr.inp) == 1:
            (j, a), = c.expr.inp
            t = -c.expr.const / a
            bounds.append((j, t, float("inf"), c.strict) if a > 0 else (j, float("-inf"), t, c.strict))
        else:
            rest.append(c)
    return (rest[0] if len(rest) == 1 else And(tuple(rest))), bounds


# ---- probabilistic formulas -------------------------------------------------------------------

class _PExprOps:
    def __add__(self, o): return PBin("+", self, _p(o))
    def __radd__(self, o): return PBin("+", _p(o), self)
    def __sub__(self, o): return PBin("-", self, _p(o))
    def __rsub__(self, o): return PBin("-", _p(o), self)
    def __mul__(self, o): return PBin("*", self, _p(o))
    def __rmul__(self, o): return PBin("*", _p(o), self)
    def __truediv__(self, o): return PBin("/", self, _p(o))
    def __rtruediv__(self, o): return PBin("/", _p(o), self)
    def __gt__(self, o): return PCmp(self, ">", _p(o))
    def __ge__(self, o): return PCmp(self, ">=", _p(o))
    def __lt__(self, o): return PCmp(_p(o), ">", self)
    def __le__(self, o): return PCmp(_p(o), ">=", self)


@dataclass(frozen=True, eq=False)
class Prob(_PExprOps):
    """P(event | given) under the problem's input distribution; `name` identifies it in Results."""

    name: str
    event: object
    given: object = TRUE


@dataclass(frozen=True, eq=False)
class PConst(_PExprOps):
    value: float


@dataclass(frozen=True, eq=False)
class PBin(_PExprOps):
    op: str
    a: object
    b: object


@dataclass(frozen=True, eq=False)
class PCmp:
    a: object
    op: str      # ">" or ">="
    b: object


@dataclass(frozen=True, eq=False)
class PAnd:
    parts: tuple


@dataclass(frozen=True, eq=False)
class POr:
    parts: tuple


@dataclass(frozen=True, eq=False)
class PNot:
    part: object


def _p(o):
    return o if isinstance(o, _PExprOps) else PConst(float(o))


def probabilities(node) -> list[Prob]:
    """Every Prob in a formula or expression, once each, in order of appearance."""
    if isinstance(node, Prob):
        return [node]
    children = {PBin: lambda n: (n.a, n.b), PCmp: lambda n: (n.a, n.b), PAnd: lambda n: n.parts,
                POr: lambda n: n.parts, PNot: lambda n: (n.part,)}.get(type(node), lambda n: ())(node)
    found = [p for c in children for p in probabilities(c)]
    return list({id(p): p for p in found}.values())


def _mul(a, b):
    products = [x * y if not (x == 0 or y == 0) else 0.0 for x in a for y in b]
    return min(products), max(products)


def interval(expr, bounds: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """Interval arithmetic; `bounds` maps each Prob's name to its [lb, ub]."""
    if isinstance(expr, Prob):
        return bounds[expr.name]
    if isinstance(expr, PConst):
        return expr.value, expr.value
    a, b = interval(expr.a, bounds), interval(expr.b, bounds)
    if expr.op == "+":
        return a[0] + b[0], a[1] + b[1]
    if expr.op == "-":
        return a[0] - b[1], a[1] - b[0]
    if expr.op == "*":
        return _mul(a, b)
    if b[0] > 0 or b[1] < 0:
        return _mul(a, (1.0 / b[1], 1.0 / b[0]))
    return float("-inf"), float("inf")


def decide(formula, bounds: dict[str, tuple[float, float]]) -> bool | None:
    """Three-valued truth of a probabilistic formula on interval bounds (None: undecided)."""
    if isinstance(formula, PCmp):
        (alo, ahi), (blo, bhi) = interval(formula.a, bounds), interval(formula.b, bounds)
        if (alo > bhi) if formula.op == ">" else (alo >= bhi):
            return True
        if (ahi <= blo) if formula.op == ">" else (ahi < blo):
            return False
        return None
    if isinstance(formula, PNot):
        v = decide(formula.part, bounds)
        return None if v is None else not v
    values = [decide(p, bounds) for p in formula.parts]
    if isinstance(formula, PAnd):
        return False if False in values else (True if all(v is True for v in values) else None)
    return True if True in values else (False if all(v is False for v in values) else None)


def value(expr, values: dict[str, float]) -> float:
    """The exact value of an expression from exact probabilities."""
    return interval(expr, {k: (v, v) for k, v in values.items()})[0]


def truth(formula, values: dict[str, float]) -> bool:
    return bool(decide(formula, {k: (v, v) for k, v in values.items()}))
