"""Paper-scale checks (slow tier): every FairSquare instance decided, verdicts against 10⁶-sample
Monte-Carlo, ACAS Xu property 2 bounds against Monte-Carlo, and the heuristic comparison as an
inequality of medians."""

from pathlib import Path

import numpy as np
import pytest
import torch

from bench.context import RunContext
from methods.verification import pv, pv_random
from tasks.verification.acasxu_safety import Config as ACAS
from tasks.verification.acasxu_safety import build as acasxu
from tasks.verification.fairsquare import NETWORKS, POPULATIONS
from tasks.verification.fairsquare import Config as FS
from tasks.verification.fairsquare import build as fairsquare
from tasks.verification.mini_acs_income import Config as ACS
from tasks.verification.mini_acs_income import build as mini_acs
from tests.methods.verification.test_pv import mc_estimate

pytestmark = pytest.mark.slow
DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "acasxu"
INSTANCES = [(n, p, q) for n in NETWORKS for p in POPULATIONS for q in (False, True)]
FAIRSQUARE_PV = pv.Config(batch_size=1024, split_bounds="crown", time_limit_s=60)


@pytest.mark.parametrize("network,population,qualified", INSTANCES)
def test_every_fairsquare_instance_is_decided_in_agreement_with_monte_carlo(network, population, qualified):
    problem = fairsquare(FS(network=network, population=population, qualified=qualified), RunContext(0))
    result = pv.solve(problem, FAIRSQUARE_PV, RunContext(0))
    assert result.verdict is not None
    mc = mc_estimate(problem, n=1_000_000)
    (f, sf), (m, sm) = mc["P(hi|female)"], mc["P(hi|male)"]
    for name, (est, se) in mc.items():
        lo, hi = result.bounds[name]
        assert lo - 5 * se <= est <= hi + 5 * se
    ratio, se = f / m, f / m * np.hypot(sf / f, sm / m)
    if abs(ratio - 0.85) > 5 * se:
        assert result.verdict is (ratio > 0.85)


@pytest.mark.skipif(not DATA.is_dir(), reason=f"ACAS Xu .nnet files not at {DATA}")
def test_acasxu_property_2_bounds_contain_monte_carlo():
    problem = acasxu(ACAS(property=2, network="4_3", nnet_dir=str(DATA)), RunContext(0).for_task())
    result = pv.solve(problem, pv.Config(time_limit_s=20, batch_size=256), RunContext(0))
    rng = np.random.default_rng(0)                      # uniform on the region (ρ, v_own, v_int restricted)
    lo_box, hi_box = problem.population.space.lb.copy(), problem.population.space.ub.copy()
    lo_box[0], lo_box[3], hi_box[4] = 55947.691, 1145.0, 60.0
    x = torch.as_tensor(rng.uniform(lo_box, hi_box, size=(400_000, 5)))
    y = problem.network.forward(x)
    violated = (y[:, :1] >= y[:, 1:]).all(1).double()   # clear-of-conflict has the maximal score
    est = float(violated.mean())
    se = np.sqrt(est * (1 - est) / x.shape[0])
    lo, hi = result.target
    assert lo - 5 * se <= est <= hi + 5 * se and hi < 0.2
    assert est > 0.005   # net 4_3 violates property 2 on a measurable part of the region


def test_prob_mass_smart_branching_needs_fewer_iterations_than_random_selection():
    """Median over problems of the iterations to reach precision 1e-2 (spec: an inequality of medians)."""
    problems = [fairsquare(FS(network=n, population=p), RunContext(0)) for n, p in
                [("V2H1", "uind"), ("V2H2", "eBN"), ("V3H2", "rind"), ("V2H2", "rBNc")]]
    problems += [mini_acs(ACS(variables=3), RunContext(s).for_task()) for s in range(2)]
    counts = {}
    for module in (pv, pv_random):
        config = module.Config(batch_size=64, precision=1e-2, max_iterations=2000, split_bounds="crown")
        counts[module.__name__] = [module.solve(p, config, RunContext(0)).iterations for p in problems]
    assert np.median(counts["methods.verification.pv"]) < np.median(counts["methods.verification.pv_random"])
