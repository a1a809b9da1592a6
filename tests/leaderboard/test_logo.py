"""LOGO (Tang et al., ICML 2025): the claims file."""

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells

PAPER = "logo"


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"logo", "simpo", "sft"} and paper.methods["logo"]["fidelity"] == "faithful"
    assert [c.id for c in paper.claims if c.scale == "paper-scale"] == ["table1-llama3-80k-logo-vs-instruct-tuning",
                                                                        "table1-llama3-8k-logo-64k"]
    # 5 CPU-scale settings (the positive control included) + 3 hub
    assert len(set(paper_cells(paper, registry, seeds=1, controls=False))) == 8
    # + LOGO at position_window 64 (a negative control); + LOGO switched off: with both switches at once (M = 1, λ = 0
    # and no position synthesis) where a claim compares it with one of them, and on the 2 paper-scale hub settings
    # under each of the 2 switches
    assert len(set(paper_cells(paper, registry, seeds=1))) == 9 + 1 + 2 * 2
    assert all(c.control and c.control_why for c in paper.claims if c.scale != "paper-scale" and c.role == "claim")
    (control,) = [c for c in paper.claims if c.role == "control"]
    assert set(control.gates) == {c.id for c in paper.claims if c.scale != "paper-scale" and c.role == "claim"}
