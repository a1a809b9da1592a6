"""LOGO (Tang et al., ICML 2025): the claims file and its CPU-scale verdicts."""

import pytest

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells
from tests.leaderboard.paper_cli import cpu_scale_verdicts

PAPER = "logo"
# Regression pin (the claims' 3 seeds, the π_SFT a fresh machine trains; cache version 2; 192 evaluation contexts per
# length; the environment of constraints.txt). Accuracy at 32 chunks per seed: SFT 0.036 / 0.010 / 0.031, SFT on
# 32-chunk contexts (the positive control) 0.198 / 0.109 / 0.182, LOGO 0.063 / 0.063 / 0.115, LOGO at M = 1, λ = 0
# 0.078 / 0.073 / 0.109, LOGO on real positions 0.016 / 0.057 / 0.063: gaps 13.7 (control), 5.4, -0.7 and 3.5 points
# against 3, 3, -1 and 3.
EXPECTED = {
    "long-context-training-shows-a-gain": "reproduced",
    "logo-beats-sft-long-context": "reproduced",
    "logo-m2-not-worse-than-simpo": "reproduced",
    "synthesised-positions-matter": "reproduced",
}


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"logo", "simpo", "sft"} and paper.methods["logo"]["fidelity"] == "faithful"
    assert [c.id for c in paper.claims if c.scale == "paper-scale"] == ["table1-llama3-80k-logo-vs-instruct-tuning",
                                                                        "table1-llama3-8k-logo-64k"]
    # 5 CPU-scale settings (the positive control included) + 3 hub
    assert len(set(paper_cells(paper, registry, seeds=1, controls=False))) == 8
    assert len(set(paper_cells(paper, registry, seeds=1))) == 9   # + LOGO at position_window 64 (a negative control)
    assert all(c.control and c.control_why for c in paper.claims if c.scale != "paper-scale" and c.role == "claim")
    (control,) = [c for c in paper.claims if c.role == "control"]
    assert set(control.gates) == {c.id for c in paper.claims if c.scale != "paper-scale" and c.role == "claim"}


@pytest.mark.slow
def test_cpu_claims_give_the_pinned_verdicts(tmp_path):
    assert cpu_scale_verdicts(PAPER, tmp_path, seeds=3) == EXPECTED
