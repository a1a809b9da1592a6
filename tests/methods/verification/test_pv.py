"""PV and its variants (methods/verification/pv*.py, _bab.py, _heuristics.py) against known answers.

Ground truth: exact probabilities by enumeration (MiniACSIncome stand-in), Monte-Carlo estimates
with 5σ tolerance (FairSquare), and monotonicity of the anytime bounds at every iteration.
"""

from functools import partial

import numpy as np
import pytest
import torch

from bench.context import RunContext
from methods.verification import pv, pv_ibp, pv_longest_edge, pv_random, uniform_split
from methods.verification._bab import ProbabilityBounds, finite_rows
from methods.verification._bounds import crown, ibp
from methods.verification._heuristics import longest_edge, prob_mass, propose, smart_branching
from tasks.verification import score
from tasks.verification._exact import exact_probabilities
from tasks.verification._formula import And, Prob, holds
from tasks.verification.fairsquare import Config as FS
from tasks.verification.fairsquare import build as fairsquare
from tasks.verification.mini_acs_income import Config as ACS
from tasks.verification.mini_acs_income import build as mini_acs

TOL = 1e-9
VARIANTS = [(pv, {}), (pv_ibp, {}), (pv_longest_edge, {}), (pv_random, {}), (uniform_split, {})]


@pytest.fixture(scope="module")
def acs3():
    return mini_acs(ACS(variables=3), RunContext(0).for_task())


def assert_monotone_and_containing(curves, truth):
    lower, upper = [v for _, v in curves["lower"]], [v for _, v in curves["upper"]]
    assert all(b >= a - TOL for a, b in zip(lower, lower[1:], strict=False))
    assert all(b <= a + TOL for a, b in zip(upper, upper[1:], strict=False))
    assert all(lo - TOL <= truth <= hi + TOL for lo, hi in zip(lower, upper, strict=True))


@pytest.mark.parametrize("module,overrides", VARIANTS)
def test_bounds_contain_the_enumerated_truth_and_tighten_monotonically(acs3, module, overrides):
    ctx = RunContext(0)
    result = module.solve(acs3, module.Config(max_iterations=40, precision=1e-3, **overrides), ctx)
    assert_monotone_and_containing(ctx.curves, acs3.exact_target)
    scores = score(acs3, result)
    assert scores["contains_truth"] == 1.0
    if result.verdict is not None:
        assert scores["correct_verdict"] == 1.0


@pytest.mark.parametrize("seed", range(3))
def test_each_generator_brackets_its_exact_probability_at_every_step(seed):
    problem = mini_acs(ACS(variables=3), RunContext(seed).for_task())
    p = problem.probabilities[0]
    joint = Prob("joint", And((p.event, p.given)))
    exact = exact_probabilities(problem.network, problem.population, [joint])["joint"]
    gen = ProbabilityBounds(problem, joint.event, crown, prob_mass, smart_branching, 64, np.random.default_rng(seed))
    previous = (gen.lower, gen.upper)
    for _ in range(400):
        lo, hi = gen.step()
        assert lo - TOL <= exact <= hi + TOL
        assert lo >= previous[0] and hi <= previous[1]
        previous = (lo, hi)
        if gen.done:
            break
    assert gen.done  # a discrete space is exhausted: lb = ub = the exact value
    assert gen.lower == pytest.approx(exact, rel=2e-5)


def mc_estimate(problem, n=400_000, seed=3):
    rng = np.random.default_rng(seed)
    x = torch.as_tensor(problem.population.sample(n, rng))
    y = problem.network.forward(x)
    out = {}
    for p in problem.probabilities:
        g = holds(p.given, y, x)
        est = float(holds(p.event, y, x)[g].double().mean())
        out[p.name] = (est, np.sqrt(est * (1 - est) / int(g.sum())))
    return out


@pytest.mark.parametrize("population", ["uind", "rBN"])
def test_fairsquare_bounds_contain_the_monte_carlo_estimate(population):
    problem = fairsquare(FS(network="V2H1", population=population), RunContext(0))
    result = pv.solve(problem, pv.Config(max_iterations=30, precision=1e-3, split_bounds="crown"), RunContext(0))
    for name, (est, se) in mc_estimate(problem).items():
        lo, hi = result.bounds[name]
        assert lo - 5 * se <= est <= hi + 5 * se
        assert hi - lo <= 2e-2


def test_guarantee_heuristics_close_the_gap():
    """prob-mass + longest-edge: ub − lb < 1e-3 for every probability of V2H1 / uind."""
    problem = fairsquare(FS(network="V2H1", population="uind"), RunContext(0))
    result = pv_longest_edge.solve(problem, pv_longest_edge.Config(max_iterations=400, batch_size=1024, precision=1e-3),
                                   RunContext(0))
    assert result.iterations < 400
    assert all(hi - lo <= 1e-3 for lo, hi in result.bounds.values())


def test_pv_decides_a_fairsquare_instance_in_agreement_with_sampling():
    problem = fairsquare(FS(network="V2H1", population="uind"), RunContext(0))
    result = pv.solve(problem, pv.Config(), RunContext(0))
    mc = mc_estimate(problem)
    ratio = mc["P(hi|female)"][0] / mc["P(hi|male)"][0]
    assert result.verdict is (ratio > 0.85) and abs(ratio - 0.85) > 0.01
    assert result.target[0] > 0.85


def test_splitting_rules():
    from tasks.verification._population import InputSpace
    space = InputSpace(np.array([-np.inf, 0.0, 0, 0, 0]), np.array([np.inf, 7.0, 1, 1, 1]),
                       ("a", "k", "c0", "c1", "c2"),
                       integer=(1,), groups=((2, 3, 4),))
    lb = torch.tensor([[-np.inf, 0.0, 0, 0, 0], [3.0, 2.0, 0, 0, 0], [-np.inf, 2.0, 0, 1, 0]], dtype=torch.float64)
    ub = torch.tensor([[np.inf, 7.0, 1, 1, 1], [np.inf, 2.0, 1, 0, 1], [-2.0, 7.0, 1, 1, 0]], dtype=torch.float64)
    llb, lub, rlb, rub, valid = propose(lb, ub, 0, space)
    assert lub[:, 0].tolist() == [0.0, 6.0, -4.0] and valid.all()               # 0, max(1, 2·lb), min(−1, 2·ub)
    llb, lub, rlb, rub, valid = propose(lb, ub, 1, space)
    assert lub[0, 1] == 3 and rlb[0, 1] == 4 and not valid[1]                    # floor / floor + 1; one value left
    llb, lub, rlb, rub, valid = propose(lb, ub, 2, space)
    assert llb[0, 2:].tolist() == [1, 0, 0] and lub[0, 2:].tolist() == [1, 0, 0] and rub[0, 2] == 0
    assert rlb[1, 4] == 1                                                      # c1 excluded already: c2 forced
    assert valid.tolist() == [True, True, False]                               # c1 set already


def test_longest_edge_prefers_unbounded_then_widest():
    problem = fairsquare(FS(network="V2H1", population="uind"), RunContext(0))
    gen = ProbabilityBounds(problem, problem.probabilities[0].event, ibp, prob_mass, partial(longest_edge), 4,
                            np.random.default_rng(0))
    (llb, lub), _ = longest_edge(gen, gen.branches)
    assert torch.isfinite(lub[0]).sum() == 2   # one unbounded dim was split (its left child is capped)


@pytest.mark.parametrize("width", [1, 2, 5, 67])
def test_finite_rows_is_isfinite_all(width):
    # every mix of finite values, ±inf, NaN and the largest doubles: the same rows as torch.isfinite(x).all(1)
    values = torch.tensor([0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e308, -1e308], dtype=torch.float64)
    weights = torch.tensor([10.0, 10, 10, 1, 1, 1, 10, 10])                      # non-finite entries rare
    draws = torch.multinomial(weights, 5000 * width, replacement=True, generator=torch.Generator().manual_seed(width))
    x = values[draws].reshape(5000, width)
    expected = torch.isfinite(x).all(1)
    assert torch.equal(finite_rows(x), expected) and 0 < int(expected.sum()) < 5000
    assert finite_rows(x[:0]).shape == (0,)
