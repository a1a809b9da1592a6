"""LOGO (Tang et al., ICML 2025): the claims file and its CPU-scale verdicts."""

import pytest

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells
from tests.leaderboard.paper_cli import cpu_scale_verdicts

PAPER = "logo"
# Regression pin (3 seeds, the π_SFT a fresh machine trains; cache version 2). Accuracy at 32 chunks: SFT 0.097,
# LOGO 0.049, SimPO 0.090, LOGO on real positions 0.097 (chance 0.1): π_SFT does not retrieve beyond its training
# length, and LOGO falls below chance where SFT stays at it (gaps -0.049, -0.042, -0.049 against 3, -1 and 3 points).
EXPECTED = {
    "logo-beats-sft-long-context": "not reproduced",
    "logo-m2-not-worse-than-simpo": "not reproduced",
    "synthesised-positions-matter": "not reproduced",
}



def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"logo", "simpo", "sft"} and paper.methods["logo"]["fidelity"] == "faithful"
    assert [c.id for c in paper.claims if c.scale == "paper-scale"] == ["table1-llama3-80k-logo-vs-instruct-tuning",
                                                                        "table1-llama3-8k-logo-64k"]
    assert len(set(paper_cells(paper, registry, seeds=1))) == 7


@pytest.mark.slow
def test_cpu_claims_give_the_pinned_verdicts(tmp_path):
    assert cpu_scale_verdicts(PAPER, tmp_path, seeds=3) == EXPECTED
