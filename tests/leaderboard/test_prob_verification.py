"""prob-verification claims: the file validates, and its cells run for real and give the expected verdicts."""

import pytest

from bench.registry import Registry
from leaderboard.claims import load_paper
from tests.leaderboard.paper_cli import cpu_scale_verdicts

PAPER = "prob-verification"

# Regression pin (seed 0, measured when the family was added, on a shared 2-core CPU). The MiniACSIncome
# k = 7 comparison is not run here: enumerating 3.1e7 inputs takes minutes. The two wall-time orderings
# are measured, not pinned: they flip with the machine's load (CI measured PV 0.67 s against MC 0.19 s,
# and 6.8 s against enumeration's 4.8 s), so the test asks only that they were judged;
# benchmarks/verification_fairsquare.py prints the timings.
TIMED = {"pv-faster-than-monte-carlo", "pv-beats-enumeration-k6"}
EXPECTED = {
    "fairsquare-all-decided": "reproduced",
    "fairsquare-fair-verdicts": "reproduced",
    "fairsquare-unfair-verdicts": "reproduced",
    "soundness-mini-acs-income": "reproduced",
    "pv-verdicts-correct-mini-acs-income": "reproduced",
    "pv-faster-than-monte-carlo": "measured",
    "pv-beats-enumeration-k6": "measured",
    "pv-beats-enumeration-k7": "not run",
    "heuristics-prob-mass-smart-branching-beat-random": "reproduced",
}
NOT_RUN = {"pv-beats-enumeration-k7"}


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert [c.id for c in paper.claims] == list(EXPECTED)
    assert all(bool(c.control) != bool(c.control_none) for c in paper.claims)  # a negative control, or why none exists
    assert set(paper.methods) == {"pv", "pv_longest_edge", "pv_ibp", "pv_random", "uniform_split", "monte_carlo",
                                  "enumeration"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    fairsquare = {(g.task_config["network"], g.task_config["population"], g.task_config.get("qualified", False))
                  for c in paper.claims if c.id == "fairsquare-all-decided" for g in c.groups}
    assert len(fairsquare) == 36
    assert all(c.paper_value is None and all(g.paper_value is None for g in c.groups) for c in paper.claims)


@pytest.mark.slow
def test_reproduce_gives_expected_verdicts(tmp_path):
    verdicts = cpu_scale_verdicts(PAPER, tmp_path, claims=lambda c: c.id not in NOT_RUN, judge_all=True)
    assert {k: v for k, v in verdicts.items() if k not in TIMED} == {k: v for k, v in EXPECTED.items() if k not in TIMED}
    assert all(verdicts[k] in ("reproduced", "not reproduced") for k in TIMED)
