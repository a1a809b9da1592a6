"""The first paper (clipped SGD, performative prediction): the claims file and `bench claims` on stored runs."""

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells
from tests.leaderboard.paper_cli import bench, verdicts

PAPER = "clipped-sgd-performative"


def test_claims_file_is_valid_and_complete():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    checks = ["pcsgd-bias-grows-with-beta", "bias-amplification"]   # identities of the scalar instance (u = μ̃θ)
    assert [c.id for c in paper.claims][-len(checks):] == checks
    assert [c.id for c in paper.claims if c.role == "check"] == checks
    assert all(c.control for c in paper.claims if c.role == "claim")
    assert set(paper.methods) == {"dicesgd", "pcsgd", "pcsgd_optimal_step", "pcsgd_nonoptimal_step", "sgd"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert all(c.seeds >= 20 for c in paper.claims)
    # with the positive controls' PCSGD at c = 10⁶ (β = 0.01, 0.05)
    assert len(paper_cells(paper, registry, controls=False)) == 15 * 20
    # controls: sgd at β = 0.05, Opt / Non-Opt at β = 0.1 (a = 1, b = 2), the ε sweep's plateau at ε = 10, 100, 1000
    # and the positive controls' nulls, PCSGD at c = 10 (β = 0.01, 0.05); + the credited methods switched off: dicesgd
    # without error feedback (C2 = 1e-300) at β = 0.01, 0.05 and pcsgd_optimal_step as pcsgd_nonoptimal_step at the
    # ε sweep's ε = 0.001 ... 1 (β = 0.1, a = 1, b = 10); pcsgd at c = 10⁶ is the positive controls' cells already;
    # + SGD with its privacy noise (ε = 0.01, β = 0.01) for plot-sgd-no-convergence (its control, SGD at σ = 0.1, ran)
    assert len(paper_cells(paper, registry)) == (23 + 2 + 4 + 1) * 20


def _verdicts(stdout: str) -> dict[str, str]:
    return verdicts(stdout, {c.id for c in load_paper(Registry.discover(), PAPER).claims})


def test_fewer_seeds_than_claimed_is_insufficient(tmp_path):
    db = tmp_path / "few.db"
    assert bench("run", "-m", "dicesgd", "-t", "performative", "--seeds", "0-2", db=db).returncode == 0
    verdicts = _verdicts(bench("claims", "--paper", PAPER, db=db).stdout)
    assert verdicts["dicesgd-unbiased"] == "not run"  # β = 0.05 has no run at all
    assert verdicts["dicesgd-rate-1-over-t"] == "insufficient seeds"
    assert verdicts["bias-amplification"] == "not run"
