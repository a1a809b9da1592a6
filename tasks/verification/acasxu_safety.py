"""ACAS Xu safety: the probability that a network violates property 2, 7 or 8 under uniform inputs (paper's benchmark).

Paper: Boetius, Leue & Sutter, ICML 2025, arXiv 2405.17556 (compared there with ProVe_SLR and
eProVe). The input distribution is uniform over the network's .nnet input box (ρ, θ, ψ, v_own,
v_int); the quantity is P(violation | property region); the advisory is the output with the
*minimal* score. Property 2 (nets 4_3, 4_9, 5_8; extended: all 2_1 … 5_9): region ρ ≥ 55947.691,
v_own ≥ 1145, v_int ≤ 60, safe iff OR_{i=1..4} y0 < y_i (clear-of-conflict is not maximal).
Property 7 (net 1_9): region v_own ∈ [100, 1200], v_int ∈ [0, 1200], safe iff
(OR_{i<3} y3 > y_i) AND (OR_{i<3} y4 > y_i). Property 8 (net 2_9): θ ∈ [−π, −0.75π],
ψ ∈ [−0.1, 0.1], v_own, v_int ∈ [600, 1200], safe iff (AND_{i=2..4} y0 < y_i) OR (AND_{i=2..4} y1 < y_i).
This is quantification (no formula to decide): methods report [lb, ub] within their budget.

Data: the .nnet files are not part of this project; `nnet_dir` names their folder (see _nnet.WHERE
for where to get them). network="random" builds our structural stand-in instead: a seeded
random 5-50×6-5 ReLU network with the ACAS Xu normalisation, drawn from the task's random stream
(its numbers are not comparable with the paper's).

Fidelity: faithful for the properties and the distribution; the paper's time budgets (10 s …
3600 s) are the method's Config.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from tasks.verification import VerificationProblem
from tasks.verification._formula import Not, Prob, all_of, any_of, inp, out
from tasks.verification._network import Network, affine_then, one_thread
from tasks.verification._nnet import acasxu_path, read_nnet
from tasks.verification._population import Component, InputSpace, Population, Uniform

NAMES = ("rho", "theta", "psi", "v_own", "v_int")
RHO, THETA, PSI, V_OWN, V_INT = range(5)
BOX_MIN = np.array([0.0, -3.141593, -3.141593, 100.0, 0.0])       # the .nnet input box of every ACAS Xu net
BOX_MAX = np.array([60760.0, 3.141593, 3.141593, 1200.0, 1200.0])
MEANS, RANGES = np.array([19791.091, 0.0, 0.0, 650.0, 600.0]), np.array([60261.0, 2 * math.pi, 2 * math.pi, 1100.0,
                                                                         1200.0])
PROPERTIES = (2, 7, 8)
SMALLEST = {"network": "random"}


@dataclass(frozen=True)
class Config:
    property: int = 2            # ACAS Xu property φ_2, φ_7 or φ_8 (Katz et al. 2017)
    network: str = "4_3"         # "a_b" with a ∈ 1..5, b ∈ 1..9, or "random" (structural stand-in)
    nnet_dir: str = "acasxu"     # folder of the .nnet files (not shipped; see _nnet.WHERE)

    def __post_init__(self) -> None:
        if self.property not in PROPERTIES:
            raise ValueError(f"property {self.property!r} unknown; allowed: {', '.join(map(str, PROPERTIES))}")
        if self.network != "random" and not re.fullmatch(r"[1-5]_[1-9]", self.network):
            raise ValueError(f"network {self.network!r} unknown; allowed: a_b with a in 1..5, b in 1..9 "
                             f"(e.g. 4_3), or random")


def region(prop: int):
    """The property's input region as input-bound atoms (applied to the box symbolically)."""
    if prop == 2:
        return all_of(inp(RHO) >= 55947.691, inp(V_OWN) >= 1145.0, inp(V_INT) <= 60.0)
    if prop == 7:
        return all_of(inp(V_OWN) >= 100.0, inp(V_OWN) <= 1200.0, inp(V_INT) >= 0.0, inp(V_INT) <= 1200.0)
    return all_of(inp(THETA) >= -math.pi, inp(THETA) <= -0.75 * math.pi, inp(PSI) >= -0.1, inp(PSI) <= 0.1,
                  inp(V_OWN) >= 600.0, inp(V_OWN) <= 1200.0, inp(V_INT) >= 600.0, inp(V_INT) <= 1200.0)


def safe(prop: int):
    if prop == 2:
        return any_of(*(out(0) < out(i) for i in range(1, 5)))
    if prop == 7:
        return all_of(any_of(*(out(3) > out(i) for i in range(3))), any_of(*(out(4) > out(i) for i in range(3))))
    return any_of(all_of(*(out(0) < out(i) for i in range(2, 5))), all_of(*(out(1) < out(i) for i in range(2, 5))))


def random_network(rng: np.random.Generator) -> Network:
    """A 5-50×6-5 ReLU network, He-initialised, on the ACAS Xu-normalised inputs."""
    sizes = [5] + [50] * 6 + [5]
    layers = tuple((torch.tensor(rng.normal(0.0, math.sqrt(2.0 / i), size=(o, i))),
                    torch.tensor(rng.normal(0.0, 0.1, size=o)))
                   for i, o in zip(sizes, sizes[1:]))
    return affine_then(Network(layers), torch.tensor(1.0 / RANGES), torch.tensor(-MEANS / RANGES))


@task(family="verification", config=Config, version=1, smallest=SMALLEST)
@one_thread
def build(config: Config, ctx: RunContext) -> VerificationProblem:
    """Reads the .nnet file (or draws the random stand-in from ctx.rng)."""
    if config.network == "random":
        net, lo, hi = random_network(ctx.rng), BOX_MIN, BOX_MAX
    else:
        nnet = read_nnet(acasxu_path(config.nnet_dir, config.network))
        net, lo, hi = nnet.network, nnet.input_min, nnet.input_max
    space = InputSpace(lo.copy(), hi.copy(), NAMES)
    population = Population(space, (Component(1.0, tuple(Uniform(d, lo[d], hi[d]) for d in range(5))),))
    violation = Prob("P(violation|region)", Not(safe(config.property)), region(config.property))
    return VerificationProblem(f"acasxu {config.network} property {config.property}", net, population, target=violation)
