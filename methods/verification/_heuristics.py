"""Branch-selection and split-selection heuristics of PV (probspecs' `propose_splits`, branch and split heuristics).

Selection (which open branches to split): `prob_mass` (the default: the largest masses first),
`prob_and_log_bounds` (mass / ln(s_ub − s_lb + e)), `random_branches`, `all_branches` (breadth
first, for uniform splitting). Splitting (which dimension of each chosen branch): `smart_branching`
(BaBSR-like: bound both children of every candidate dimension with IBP; better_branch=True),
`longest_edge` (largest width, optionally normalised by the root box). `propose` implements the
splitting rules: midpoints (0 / max(1, 2·lb) / min(−1, 2·ub) for unbounded sides), floor / floor + 1
for integers, "set v" / "exclude v" for one-hot groups.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import torch

from methods.verification._bounds import ibp

# ---- splitting rules ------------------------------------------------------------------------------


def _kinds(space):
    onehot = {d: g for g in space.groups for d in g}
    return set(space.integer), onehot


def propose(lb: torch.Tensor, ub: torch.Tensor, d: int, space):
    """Both children of every box split along dim d: (left_lb, left_ub, right_lb, right_ub, valid)."""
    integer, onehot = _kinds(space)
    l, u = lb[:, d], ub[:, d]
    llb, lub, rlb, rub = lb.clone(), ub.clone(), lb.clone(), ub.clone()
    valid = u > l
    if d in onehot:                            # left: set d to 1 (others 0); right: exclude d
        group = list(onehot[d])
        valid = valid & ~(lb[:, group] >= 1).any(1)                    # a value is already set
        lub[:, group] = 0.0
        llb[:, d], lub[:, d] = 1.0, torch.minimum(ub[:, d], torch.ones_like(l))
        rub[:, d] = 0.0
        left_over = rub[:, group] > 0                                  # (N, K) values still possible
        forced = left_over.sum(1) == 1
        idx = torch.tensor(group)[left_over.to(torch.int64).argmax(1)]
        rows = torch.nonzero(forced).flatten()
        rlb[rows, idx[rows]] = 1.0
        return llb, lub, rlb, rub, valid
    if d in integer:
        mid = torch.floor((l + u) / 2)
        lub[:, d], rlb[:, d] = mid, mid + 1
        return llb, lub, rlb, rub, valid
    fl, fu = torch.isfinite(l), torch.isfinite(u)
    mid = torch.where(fl & fu, (l + u) / 2, torch.zeros_like(l))
    mid = torch.where(fl & ~fu, torch.clamp(2 * l, min=1.0), mid)
    mid = torch.where(~fl & fu, torch.clamp(2 * u, max=-1.0), mid)
    lub[:, d], rlb[:, d] = mid, mid
    return llb, lub, rlb, rub, valid


def _apply(chosen, dims: torch.Tensor, space):
    """Children of each chosen box along its own dim: ((lb, ub) left, (lb, ub) right)."""
    out = [chosen.lb.clone(), chosen.ub.clone(), chosen.lb.clone(), chosen.ub.clone()]
    for d in torch.unique(dims).tolist():
        rows = dims == d
        parts = propose(chosen.lb[rows], chosen.ub[rows], d, space)
        for o, p in zip(out, parts[:4]):
            o[rows] = p
    return (out[0], out[1]), (out[2], out[3])


def _argmax_random_ties(scores: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
    """(N, D) scores -> (N,) argmax, ties broken by a random permutation of the dims."""
    perm = torch.as_tensor(rng.permutation(scores.shape[1]))
    return perm[torch.argmax(scores[:, perm], dim=1)]


# ---- split selection ------------------------------------------------------------------------------


def smart_branching(pb, chosen, better_branch: bool = True, bound=ibp):
    """Score every candidate dim by the children's IBP satisfaction bounds; split the best."""
    space = pb.problem.population.space
    n, dims = len(chosen), range(space.dim)
    proposals = [propose(chosen.lb, chosen.ub, d, space) for d in dims]       # D × (N, d) children
    lbs = torch.cat([p[0] for p in proposals] + [p[2] for p in proposals])    # (2·D·N, d): one bound call
    ubs = torch.cat([p[1] for p in proposals] + [p[3] for p in proposals])
    s_lo, s_hi, _ = pb.sat(lbs, ubs, bound)
    s_lo, s_hi = s_lo.view(2, space.dim, n), s_hi.view(2, space.dim, n)      # (side, D, N)
    pick, other = (torch.maximum, torch.minimum) if better_branch else (torch.minimum, torch.maximum)
    scores = torch.maximum(pick(s_lo[0], s_lo[1]), -other(s_hi[0], s_hi[1])).T  # (N, D)
    scores = torch.round(torch.nan_to_num(scores, nan=-math.inf), decimals=4)
    valid = torch.stack([p[4] for p in proposals], 1)
    unbounded = ~(torch.isfinite(chosen.lb) & torch.isfinite(chosen.ub))
    scores = torch.where(unbounded & valid, math.inf, scores)
    scores = torch.where(valid, scores, -math.inf)
    return _apply(chosen, _argmax_random_ties(scores, pb.rng), space)


def _widths(lb, ub, space):
    _, onehot = _kinds(space)
    width = ub - lb
    for d in onehot:
        width[:, d] = (ub[:, d] > lb[:, d]).to(width.dtype)  # an unfixed one-hot value counts as 1
    return width


def longest_edge(pb, chosen, normalise: bool = False):
    """Split the widest dimension (relative to the root box when `normalise`)."""
    space = pb.problem.population.space
    width = _widths(chosen.lb, chosen.ub, space)
    if normalise:
        root = _widths(torch.as_tensor(space.lb)[None], torch.as_tensor(space.ub)[None], space)[0]
        scale = torch.where(torch.isfinite(root) & (root > 0), root, torch.ones_like(root))
        width = width / scale
    valid = torch.stack([propose(chosen.lb, chosen.ub, d, space)[4] for d in range(space.dim)], 1)
    width = torch.where(valid, width, -math.inf)
    return _apply(chosen, _argmax_random_ties(width, pb.rng), space)


uniform_grid = partial(longest_edge, normalise=True)


# ---- branch selection -----------------------------------------------------------------------------


def prob_mass(branches, rng) -> torch.Tensor:
    return torch.argsort(branches.mass, descending=True, stable=True)


def prob_and_log_bounds(branches, rng) -> torch.Tensor:
    width = branches.s_ub - branches.s_lb
    finite = torch.isfinite(width)
    fill = width[finite].mean() if finite.any() else torch.tensor(1.0, dtype=width.dtype)
    width = torch.where(finite, width, fill)
    return torch.argsort(branches.mass / torch.log(width + math.e), descending=True, stable=True)


def random_branches(branches, rng) -> torch.Tensor:
    return torch.as_tensor(rng.permutation(len(branches)))


def all_branches(branches, rng) -> torch.Tensor:
    return torch.arange(len(branches))
