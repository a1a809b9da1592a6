"""FairSquare instances (tasks/verification/fairsquare.py): the fused networks equal the spec's
formula relu(W2 relu(W1 n(x) + b1) + b2) (with edu := min(edu, age) for BNc) on sampled inputs,
and bad names are refused."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from tasks.verification.fairsquare import NETWORKS, POPULATIONS, Config, build, instance


def direct(name, x, constrained):
    _, W1, b1, W2, b2 = NETWORKS[name]
    age, edu, cg = x[:, 0], x[:, 1], x[:, 3] if x.shape[1] > 3 else np.zeros(len(x))
    if constrained:
        edu = np.minimum(edu, age)
    z = np.stack([(age - 17 - 36.5 + 3.65) / 7.3, (edu - 3 - 6.5 + 0.65) / 1.3,
                  (cg - 11020 + 1102) / 2204][:len(W1[0])], 1)
    return np.maximum(np.maximum(z @ np.array(W1).T + b1, 0) @ np.array(W2).T + b2, 0)


@pytest.mark.parametrize("network", list(NETWORKS))
@pytest.mark.parametrize("population", ["uind", "rBNc"])
def test_network_is_the_spec_formula(network, population):
    net, pop = instance(Config(network=network, population=population))
    x = pop.sample(5000, np.random.default_rng(0))
    x[:100, 1] = x[:100, 0] + 3.0          # edu > age: the integrity constraint binds
    assert np.allclose(net.forward(torch.tensor(x)).numpy(), direct(network, x, population.endswith("c")), atol=1e-10)


def test_instances_and_bad_names():
    problem = build(Config(network="V3H2", population="eBN", qualified=True), RunContext(0))
    assert [p.name for p in problem.probabilities] == ["P(hi|female)", "P(hi|male)"]
    assert problem.network.in_dim == 4 and len(POPULATIONS) * len(NETWORKS) * 2 == 36
    with pytest.raises(ValueError, match="allowed: V2H1, V2H2, V3H2"):
        Config(network="V4")
    with pytest.raises(ValueError, match="allowed: uind"):
        Config(population="bn")
