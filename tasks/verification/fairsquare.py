"""FairSquare benchmark: demographic parity of three tiny income classifiers (the paper's benchmark).

Paper: Boetius, Leue & Sutter, ICML 2025, arXiv 2405.17556, the FairSquare benchmark (Albarghouthi
et al. 2017) as in probspecs' experiments/fairsquare. 36 instances = networks {V2H1, V2H2, V3H2} ×
population models {uind, rind, eBN, rBN, eBNc, rBNc} × qualified {False, True}; the property is

    P(hi | female [∧ age ≥ 18]) / P(hi | male [∧ age ≥ 18]) > 1 − ε,   ε = 0.15,

with "high income" hi = out0 < out1 of relu(W2 relu(W1 n(x) + b1) + b2) (weights and the
normalisation n from the FairSquare benchmark). Populations: independent normals (ind), the FairSquare Bayesian
network (BN: sex → capital gain → four cases, the other variables normal given the case), and BNc
(the integrity constraint edu := min(edu, age), folded into the network as
min(e, a) = a − relu(a − e)). "u" (unrealistic) variants are unbounded normals; "r" variants are
truncated to the realistic box age, edu ∈ [0, 125], capital gain ∈ [0, 65000].

Fidelity: faithful for weights, normalisation and population parameters. Deviations: variables
the network does not read (capital loss, hours per week; capital gain for V2 networks) are
integrated out exactly, which leaves every probability unchanged; "valid" (the input lies in
the input space) is always true here, since the "r" distributions live on the box and the "u"
ones on all of R^d, so it is left out; the BN's case-4 age variance is 187.2747 (the layer version;
the explicit BN in the source says 187.2435). The paper's verdict table is not available.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from tasks.verification import VerificationProblem
from tasks.verification._formula import Prob, all_of, inp, out
from tasks.verification._network import Network, affine_then
from tasks.verification._population import Component, Discrete, InputSpace, Normal, Population, marginalise

NETWORKS = {  # name: (inputs, W1, b1, W2, b2)
    "V2H1": (2, [[0.1718, 1.1416]], [0.4754], [[0.4778], [1.9717]], [1.2091, -0.3104]),
    "V2H2": (2, [[0.0326, 0.9998], [-0.4210, -0.6857]], [-0.8278, 0.8345],
             [[0.6004, 1.1573], [1.5905, 1.0555]], [0.8849, 0.9152]),
    "V3H2": (3, [[-0.227, 0.6434, 2.3643], [-0.0236, -3.3556, -1.8183]], [3.7146, -1.7810],
             [[0.4865, 1.0685], [1.7044, -1.3880]], [-1.8079, 0.6830]),
}
POPULATIONS = ("uind", "rind", "eBN", "rBN", "eBNc", "rBNc")
AGE, EDU, SEX, CG, CL, HPW = range(6)
NAMES = ("age", "edu_num", "sex", "capital_gain", "capital_loss", "hours_per_week")
REALISTIC = {AGE: (0.0, 125.0), EDU: (0.0, 125.0), CG: (0.0, 65000.0), CL: (0.0, 4000.0), HPW: (0.0, 150.0)}
FEMALE = 0.3307  # P(sex = 0); sex = 1 is male
INDEPENDENT = {AGE: (38.5816, 186.0614), EDU: (10.0806, 6.6188), CG: (1077.6488, 54542539.1784),
               CL: (87.3038, 162376.9378), HPW: (40.4374, 152.4589)}  # (mean, variance)
BN_CG = {0: (568.4105, 24248365.5428), 1: (1329.3700, 69327473.1006)}   # capital gain | sex
BN_CASES = ((0, 7298.0, False), (0, 7298.0, True), (1, 5178.0, False), (1, 5178.0, True))  # (sex, cut, cg >= cut)
BN_GIVEN_CASE = {  # (mean, variance) in case order 1..4
    AGE: [(38.4208, 184.9151), (38.8125, 193.4918), (38.6361, 187.2435), (38.2668, 187.2747)],
    EDU: [(10.0827, 6.5096), (10.1041, 6.1522), (10.0817, 6.4841), (10.0974, 7.1793)],
    CL: [(86.5949, 157731.9553), (117.8083, 252612.0300), (87.0152, 161032.4157), (101.7672, 189798.1926)],
    HPW: [(40.4959, 151.4148), (41.6916, 165.3773), (40.3897, 150.6723), (40.6473, 153.4823)],
}
SMALLEST = {"network": "V2H1", "population": "uind"}


@dataclass(frozen=True)
class Config:
    network: str = "V2H1"       # NN_V2H1 | NN_V2H2 | NN_V3H2
    population: str = "uind"    # {u, r}ind, {e, r}BN, {e, r}BNc (e = u: unbounded normals)
    qualified: bool = False     # condition on age >= 18 as well
    epsilon: float = 0.15       # ε: fair iff the ratio > 1 − ε

    def __post_init__(self) -> None:
        if self.network not in NETWORKS:
            raise ValueError(f"network {self.network!r} unknown; allowed: {', '.join(NETWORKS)}")
        if self.population not in POPULATIONS:
            raise ValueError(f"population {self.population!r} unknown; allowed: {', '.join(POPULATIONS)}")
        if not 0 < self.epsilon < 1:
            raise ValueError(f"epsilon must lie in (0, 1), got {self.epsilon}")


def _normal(dim: int, mean: float, var: float, realistic: bool, **restrict) -> Normal:
    lo, hi = REALISTIC[dim] if realistic else (-np.inf, np.inf)
    return Normal(dim, mean, var, lo, hi, **restrict)


def population(name: str) -> Population:
    """The six-variable population model (age, edu, sex, capital gain, capital loss, hours)."""
    realistic = name.startswith("r")
    box = [REALISTIC.get(d, (0.0, 1.0)) if realistic or d == SEX else (-np.inf, np.inf) for d in range(6)]
    space = InputSpace(np.array([b[0] for b in box]), np.array([b[1] for b in box]), NAMES, integer=(SEX,))
    if name.endswith("ind"):
        sex = Discrete(SEX, np.array([0.0, 1.0]), np.array([FEMALE, 1 - FEMALE]))
        normals = tuple(_normal(d, *INDEPENDENT[d], realistic) for d in (AGE, EDU, CG, CL, HPW))
        return Population(space, (Component(1.0, (sex,) + normals),))
    components = []
    for case, (sex, cut, above) in enumerate(BN_CASES):
        sex_factor = Discrete(SEX, np.array([0.0, 1.0]), np.array([FEMALE, 0.0] if sex == 0 else [0.0, 1 - FEMALE]))
        cg = _normal(CG, *BN_CG[sex], realistic, **({"a": cut} if above else {"b": cut}))
        rest = tuple(_normal(d, *BN_GIVEN_CASE[d][case], realistic) for d in (AGE, EDU, CL, HPW))
        components.append(Component(1.0, (sex_factor, cg) + rest))
    return Population(space, tuple(components))


def classifier(name: str, constrained: bool) -> Network:
    """relu(W2 relu(W1 n(x) + b1) + b2) on the raw (age, edu[, cg]) inputs; edu := min(edu, age) if constrained."""
    k, W1, b1, W2, b2 = NETWORKS[name]
    f64 = lambda v: torch.tensor(v, dtype=torch.float64)  # noqa: E731
    net = Network(((f64(W1), f64(b1)), (f64(W2), f64(b2))), final_relu=True)
    scale = f64([1 / 7.3, 1 / 1.3, 1 / 2204.0][:k])                  # n(x) = (x − offset) / scale
    shift = -f64([49.85 / 7.3, 8.85 / 1.3, 9918.0 / 2204.0][:k])
    net = affine_then(net, scale, shift)
    if not constrained:
        return net
    # relu layer [a − e, a, −a, (c, −c)] then the linear map back to (a, min(a, e), (c))
    pre = torch.tensor([[1.0, -1, 0], [1, 0, 0], [-1, 0, 0], [0, 0, 1], [0, 0, -1]],
                       dtype=torch.float64)[: 3 + 2 * (k == 3), :k]
    post = torch.tensor([[0.0, 1, -1, 0, 0], [-1, 1, -1, 0, 0], [0, 0, 0, 1, -1]],
                        dtype=torch.float64)[:k, : 3 + 2 * (k == 3)]
    (W, b), rest = net.layers[0], net.layers[1:]
    return Network(((pre, torch.zeros(pre.shape[0])), (W @ post, b)) + rest, final_relu=True)


def instance(config: Config) -> tuple[Network, Population]:
    """The network on (age, edu, sex[, cg]) and the population marginalised to those inputs."""
    k = NETWORKS[config.network][0]
    keep = [AGE, EDU, SEX] + ([CG] if k == 3 else [])
    net = classifier(config.network, config.population.endswith("c"))
    (W, b), rest = net.layers[0], net.layers[1:]
    wide = torch.zeros(W.shape[0], len(keep), dtype=torch.float64)
    wide[:, [0, 1] + ([3] if k == 3 else [])] = W                         # sex is not a network input
    return Network(((wide, b),) + rest, True), marginalise(population(config.population), keep)


@task(family="verification", config=Config, version=2, smallest=SMALLEST)  # 2: score counts mass_calls, mass_boxes
def build(config: Config, ctx: RunContext) -> VerificationProblem:
    """The instance is deterministic; ctx is unused."""
    net, pop = instance(config)
    hi = out(0) < out(1)
    conditions = [inp(0) >= 18.0] if config.qualified else []
    female = Prob("P(hi|female)", hi, all_of(inp(2) <= 0.0, *conditions))
    male = Prob("P(hi|male)", hi, all_of(inp(2) >= 1.0, *conditions))
    ratio = female / male
    name = f"fairsquare {config.network} {config.population}" + (" qualified" if config.qualified else "")
    return VerificationProblem(name, net, pop, target=ratio, spec=ratio > 1 - config.epsilon)
