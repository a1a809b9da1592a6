"""prob-verification claims: the file validates against the registry."""

from bench.registry import Registry
from leaderboard.claims import load_paper

PAPER = "prob-verification"


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert all(bool(c.control) != bool(c.control_none) for c in paper.claims)  # a negative control, or why none exists
    assert set(paper.methods) == {"pv", "pv_longest_edge", "pv_ibp", "pv_random", "uniform_split", "monte_carlo",
                                  "enumeration"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    fairsquare = {(g.task_config["network"], g.task_config["population"], g.task_config.get("qualified", False))
                  for c in paper.claims if c.id == "fairsquare-all-decided" for g in c.groups}
    assert len(fairsquare) == 36
    assert all(c.paper_value is None and all(g.paper_value is None for g in c.groups) for c in paper.claims)
