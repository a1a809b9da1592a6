"""Exact probabilities by enumeration of a discrete input space (the paper's "enumerate" baseline).

Every input with positive probability is visited once (in chunks), the network is evaluated on it,
and P(φ ∧ ψ), P(ψ) are summed exactly: P(φ | ψ) = P(φ ∧ ψ) / P(ψ). Used by the MiniACSIncome
stand-in's build (ground truth) and by the `enumeration` method.
"""

from __future__ import annotations

import torch

from tasks.verification._formula import holds
from tasks.verification._network import Network
from tasks.verification._population import Population


def exact_probabilities(network: Network, population: Population, probs, check=None,
                        chunk: int = 1 << 16) -> dict[str, float]:
    """{Prob name: exact P(event | given)}; `check()` is called per chunk (e.g. a deadline)."""
    joint = {p.name: 0.0 for p in probs}
    given = dict(joint)
    for x, px in population.enumerate(chunk):
        xt, pt = torch.as_tensor(x), torch.as_tensor(px)
        y = network.forward(xt)
        for p in probs:
            g = holds(p.given, y, xt)
            given[p.name] += float(pt[g].sum())
            joint[p.name] += float(pt[g & holds(p.event, y, xt)].sum())
        if check is not None:
            check()
    return {name: joint[name] / given[name] if given[name] > 0 else float("nan") for name in joint}
