"""MiniACSIncome stand-in: demographic parity of a 10-unit ReLU classifier over k one-hot/integer census variables
(new benchmark).

Paper: Boetius, Leue & Sutter, ICML 2025, arXiv 2405.17556, the MiniACSIncome benchmark (k = 1..8
of SEX, COW, SCHL, WKHP, MAR, RAC1P, RELP, AGEP; input dimensions 2, 10, 34, 35, 40, 49, 67, 68;
one hidden ReLU layer of 10 units; demographic parity with ε = 0.2; the baseline "enumerate" tests
every discrete input). The real networks and population model are downloaded from the Hugging Face
Hub, so this is a synthetic stand-in with the same variables, cardinalities and input dimensions:

- population: a star-shaped Bayesian network rooted at SEX (P(female) = 0.48); every other
  variable depends on SEX only, with conditional categoricals drawn from a Dirichlet(1) and the
  integer variables WKHP ∈ 1..99, AGEP ∈ 17..95 discretised normals whose means depend on SEX —
  all drawn from the task's random stream, so each seed is one fixed instance;
- classifier: k-dim input → 10 ReLU → 2 (ŷ = 1 iff out1 > out0), trained here (Adam, 300 full-batch
  steps, 4000 samples of the BN, labels from a random logistic "income" rule) with the task's
  torch generator: deterministic per seed;
- property: P(ŷ = 1 | female) / P(ŷ = 1 | male) > 1 − ε;
- ground truth: the exact probabilities by enumeration (tasks/verification/_exact.py) when the
  input space has at most `exact_limit` points (k ≤ 6 by default: 1.7 · 10⁶ points), so `score`
  knows the true verdict and whether bounds contain the truth.

Fidelity: approximate (synthetic data; the paper's numbers are not comparable).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bench.context import RunContext
from bench.registry import task
from tasks.verification import VerificationProblem
from tasks.verification._exact import exact_probabilities
from tasks.verification._formula import Prob, inp, out
from tasks.verification._network import Network, one_thread
from tasks.verification._population import Categorical, Component, Discrete, InputSpace, Population

VARIABLES = (("SEX", 2), ("COW", 8), ("SCHL", 24), ("WKHP", range(1, 100)), ("MAR", 5), ("RAC1P", 9),
             ("RELP", 18), ("AGEP", range(17, 96)))   # categorical: its number of values; integer: its range
FEMALE = 0.48
SMALLEST = {"variables": 2}


@dataclass(frozen=True)
class Config:
    variables: int = 4             # k, the first k variables (paper: 1..8)
    epsilon: float = 0.2           # ε of demographic parity
    hidden: int = 10               # width of the hidden ReLU layer (paper: 10; 1000..10000 variants)
    exact_limit: int = 2_000_000   # enumerate the ground truth when the space has at most this many points

    def __post_init__(self) -> None:
        if not 1 <= self.variables <= len(VARIABLES):
            raise ValueError(f"variables must be in 1..{len(VARIABLES)}, got {self.variables}")
        if not 0 < self.epsilon < 1 or self.hidden < 1 or self.exact_limit < 0:
            raise ValueError("epsilon must lie in (0, 1), hidden >= 1, exact_limit >= 0")


def population(k: int, rng: np.random.Generator) -> Population:
    """The star Bayesian network SEX -> each of the other k − 1 variables, one component per sex."""
    dims, names, integer, groups, cursor = [], [], [], [], 0
    for name, card in VARIABLES[:k]:
        if isinstance(card, int):
            dims.append(tuple(range(cursor, cursor + card)))
            names += [f"{name}={v}" for v in range(card)]
            groups.append(dims[-1])
            cursor += card
        else:
            dims.append((cursor,))
            names.append(name)
            integer.append(cursor)
            cursor += 1
    shared = [rng.standard_normal(2) for _ in VARIABLES[:k]]  # per-variable sex effects
    components = []
    for sex in (0, 1):
        factors = [Categorical(dims[0], np.eye(2)[sex] * (FEMALE if sex == 0 else 1 - FEMALE))]
        for (name, card), d, effect in list(zip(VARIABLES, dims, shared))[1:k]:
            if isinstance(card, int):
                factors.append(Categorical(d, rng.dirichlet(np.ones(card))))
            else:
                values = np.array(card, dtype=float)
                centre = values.mean() + 5.0 * effect[sex]
                weights = np.exp(-0.5 * ((values - centre) / (0.2 * (values[-1] - values[0]))) ** 2)
                factors.append(Discrete(d[0], values, weights / weights.sum()))
        components.append(Component(1.0, tuple(factors)))
    lb = np.zeros(cursor)
    ub = np.ones(cursor)
    for (name, card), d in zip(VARIABLES[:k], dims):
        if not isinstance(card, int):
            lb[d[0]], ub[d[0]] = card.start, card.stop - 1
    return Population(InputSpace(lb, ub, tuple(names), tuple(integer), tuple(groups)), tuple(components))


def train_classifier(pop: Population, hidden: int, rng: np.random.Generator, generator: torch.Generator) -> Network:
    """A d → hidden → 2 ReLU classifier fitted to a random logistic income rule on BN samples."""
    x = torch.as_tensor(pop.sample(4000, rng))
    scale = torch.as_tensor(np.where(pop.space.ub > 1, pop.space.ub, 1.0))          # integers to [0, 1]
    rule = torch.as_tensor(rng.standard_normal(x.shape[1])) * 1.5
    logits = (x / scale) @ rule
    labels = (torch.rand(x.shape[0], generator=generator, dtype=torch.float64)
              < torch.sigmoid(logits - logits.median())).long()
    d = x.shape[1]
    W1 = torch.randn(hidden, d, generator=generator, dtype=torch.float64) / d ** 0.5
    W2 = torch.randn(2, hidden, generator=generator, dtype=torch.float64) / hidden ** 0.5
    params = [W1.requires_grad_(), torch.zeros(hidden, dtype=torch.float64, requires_grad=True),
              W2.requires_grad_(), torch.zeros(2, dtype=torch.float64, requires_grad=True)]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    xs = x / scale
    for step in range(1, 301):   # Adam (lr 0.05, β = 0.9, 0.999), written out: torch.optim's import costs seconds
        h = torch.relu(xs @ params[0].T + params[1])
        loss = torch.nn.functional.cross_entropy(h @ params[2].T + params[3], labels)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, (m, v) in zip(params, grads, moments):
                m.mul_(0.9).add_(0.1 * g)
                v.mul_(0.999).add_(0.001 * g * g)
                p -= 0.05 * (m / (1 - 0.9 ** step)) / ((v / (1 - 0.999 ** step)).sqrt() + 1e-8)
    W1, b1, W2, b2 = (p.detach() for p in params)
    return Network(((W1 / scale, b1), (W2, b2)))                                      # on raw inputs


@task(family="verification", config=Config, version=1, smallest=SMALLEST)
@one_thread
def build(config: Config, ctx: RunContext) -> VerificationProblem:
    """Draws the BN and trains the classifier from the task's streams; enumerates the truth when small."""
    pop = population(config.variables, ctx.rng)
    net = train_classifier(pop, config.hidden, ctx.rng, ctx.torch_generator)
    positive = out(1) > out(0)
    female = Prob("P(y=1|female)", positive, inp(0) >= 1.0)
    male = Prob("P(y=1|male)", positive, inp(1) >= 1.0)
    ratio = female / male
    spec = ratio > 1 - config.epsilon
    exact = None
    if pop.support_size() <= config.exact_limit:
        exact = exact_probabilities(net, pop, [female, male])
    return VerificationProblem(f"mini_acs_income k={config.variables}", net, pop, target=ratio, spec=spec, exact=exact)
