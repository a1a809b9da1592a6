"""cmdp-bobw claims: the file validates against the registry."""

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells

PAPER = "cmdp-bobw"


def cpu_claims(paper):
    return [c for c in paper.claims if c.role == "claim"]


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    checks = ["multipliers-bounded"]   # λ is projected onto [0, T^1/4]: it holds by construction
    assert [c.id for c in paper.claims][-len(checks):] == checks
    assert [c.id for c in paper.claims if c.role == "check"] == checks
    assert set(paper.methods) == {"bobw_po", "cmdp_full_feedback", "cmdp_unconstrained_po", "cmdp_primal_dual"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    # bobw_po at T = 5000 in both regimes and the unconstrained learner; the regret's rate adds T = 1250, 2500, 10⁴
    # and the positive control's known-model UCB learner at the four horizons
    assert len(paper_cells(paper, registry, controls=False)) == 10 * 3
    # negative controls: the uniform policy (fixed share σ = 1) in both regimes and at the regret fit's four horizons,
    # the unconstrained learner adversarially, and the UCB learner without its bonus at the four horizons; + bobw_po
    # switched off (cmdp_unconstrained_po) in the regret's rate at T = 1250, 2500, 10⁴ (at T = 5000 it is a claim's
    # cell already)
    assert len(paper_cells(paper, registry)) == (20 + 3) * 3
    regret = next(c for c in cpu_claims(paper) if c.id == "stochastic-regret-sqrt-t")
    assert (regret.kind, regret.metric, regret.x_metric) == ("rate", "regret", "horizon")
    cpu = cpu_claims(paper)
    assert all(c.control for c in cpu)
