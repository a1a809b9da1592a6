"""Population models (tasks/verification/_population.py): exact box masses against scipy and sampling.

Ground truth: scipy's truncated normal CDF, Monte-Carlo frequencies from the models' own samplers
(within 5σ), and normalisation (the whole space has mass 1; enumerated masses sum to 1).
"""

import numpy as np
import pytest
from scipy import stats

from tasks.verification._population import Categorical, Component, Discrete, InputSpace, Normal, Population
from tasks.verification.fairsquare import POPULATIONS, population
from tasks.verification.mini_acs_income import population as acs_population


def random_boxes(rng, pop, n):
    x = pop.sample(2 * n, rng)
    a, b = x[:n], x[n:]
    return np.minimum(a, b), np.maximum(a, b)


@pytest.mark.parametrize("name", POPULATIONS)
def test_fairsquare_box_masses_match_sampling(name):
    pop = population(name)
    rng = np.random.default_rng(0)
    assert pop.probability(pop.space.lb, pop.space.ub)[0] == pytest.approx(1.0, abs=1e-12)
    x = pop.sample(200_000, rng)
    assert np.all((x >= pop.space.lb) & (x <= pop.space.ub))
    lb, ub = random_boxes(rng, pop, 6)
    lb[:, 2], ub[:, 2] = np.array([0, 0, 1, 0, 1, 1]), np.array([0, 1, 1, 1, 1, 1])   # sex: female / both / male
    p = pop.probability(lb, ub)
    freq = np.array([np.mean(np.all((x >= l) & (x <= u), axis=1)) for l, u in zip(lb, ub, strict=True)])
    sigma = np.sqrt(p * (1 - p) / x.shape[0])
    assert np.all(np.abs(freq - p) <= 5 * sigma + 1e-6)


def test_truncated_normal_mass_matches_scipy():
    f = Normal(0, 38.58, 186.06, lo=0.0, hi=125.0)
    a, b = np.array([-5.0, 10.0, 100.0, 124.0]), np.array([20.0, 40.0, 130.0, 200.0])
    sd = np.sqrt(186.06)
    ref = stats.truncnorm(-38.58 / sd, (125 - 38.58) / sd, loc=38.58, scale=sd)
    assert np.allclose(f.mass(a[:, None], b[:, None]), ref.cdf(b) - ref.cdf(a), atol=1e-12)


def test_upper_tail_mass_has_no_cancellation():
    f = Normal(0, 0.0, 1.0)
    m = f.mass(np.array([[9.0]]), np.array([[np.inf]]))[0]
    assert m == pytest.approx(stats.norm.sf(9.0), rel=1e-10)


def test_categorical_and_conditioned_sampling():
    space = InputSpace(np.array([0.0, 0, 0, 1]), np.array([1.0, 1, 1, 4]), ("a", "b", "c", "k"), (3,), ((0, 1, 2),))
    pop = Population(space, (Component(1.0, (Categorical((0, 1, 2), np.array([0.2, 0.3, 0.5])),
                                             Discrete(3, np.arange(1.0, 5.0), np.full(4, 0.25)))),))
    box = (np.array([0.0, 0, 0, 2]), np.array([1.0, 0, 1, 3]))                       # b excluded, k in {2, 3}
    assert pop.probability(*box)[0] == pytest.approx((0.2 + 0.5) * 0.5)
    assert pop.probability(np.array([1.0, 0, 0, 1]), np.array([1.0, 1, 0, 4]))[0] == pytest.approx(0.2)
    x = pop.sample(20_000, np.random.default_rng(1), *box)
    assert np.all((x >= box[0]) & (x <= box[1])) and np.all(x[:, :3].sum(1) == 1)
    assert np.mean(x[:, 0]) == pytest.approx(0.2 / 0.7, abs=5 * np.sqrt(0.25 / 20_000))
    points = np.concatenate([x for x, _ in pop.enumerate()])
    assert points.shape == (12, 4) and sum(p.sum() for _, p in pop.enumerate()) == pytest.approx(1.0)


@pytest.mark.parametrize("k", [2, 3])
def test_mini_acs_enumeration_is_the_pmf(k):
    pop = acs_population(k, np.random.default_rng(k))
    points, masses = map(np.concatenate, zip(*pop.enumerate(chunk=100), strict=True))
    assert len(points) == pop.support_size() and masses.sum() == pytest.approx(1.0, abs=1e-12)
    x = pop.sample(100_000, np.random.default_rng(5))
    index = {tuple(p): i for i, p in enumerate(points)}
    freq = np.bincount([index[tuple(r)] for r in x], minlength=len(points)) / x.shape[0]
    assert np.all(np.abs(freq - masses) <= 5 * np.sqrt(masses * (1 - masses) / x.shape[0]) + 1e-4)


def test_enumerated_masses_are_the_point_box_masses_bit_for_bit():
    # two components whose supports differ (value 4 of k has mass 0 in the first, 2 in neither): the union is
    # enumerated, zero-mass points are dropped, every mass equals probability(x, x) exactly
    space = InputSpace(np.array([0.0, 0, 0, 1]), np.array([1.0, 1, 1, 4]), ("a", "b", "c", "k"), (3,), ((0, 1, 2),))
    first = Component(0.3, (Categorical((0, 1, 2), np.array([0.2, 0.3, 0.5])),
                            Discrete(3, np.array([1.0, 3.0, 4.0]), np.array([0.6, 0.4, 0.0]))))
    second = Component(0.7, (Discrete(3, np.array([1.0, 4.0]), np.array([0.1, 0.9])),
                             Categorical((0, 1, 2), np.array([0.0, 0.25, 0.75]))))
    pop = Population(space, (first, second))
    points, masses = map(np.concatenate, zip(*pop.enumerate(chunk=4), strict=True))
    assert len(points) == 3 * 3 - 1 and not any(p[0] == 1 and p[3] == 4 for p in points)   # (a, k=4) has mass 0
    assert np.array_equal(masses, pop.probability(points, points)) and masses.sum() == pytest.approx(1.0)
    acs = acs_population(4, np.random.default_rng(4))
    points, masses = map(np.concatenate, zip(*acs.enumerate(chunk=5000), strict=True))
    assert np.array_equal(masses, acs.probability(points, points))
