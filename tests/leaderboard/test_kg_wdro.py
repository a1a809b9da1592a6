"""kg-wdro claims: the file validates against the registry."""

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells

PAPER = "kg-wdro"

DISTINCT_CELLS = 15
CONTROL_CELLS = 8   # ρ = 0 worlds (wdro and KG-WDRO for Sims 1-3), wdro at Sim 2 ρ = 0.3 and Sim 3 unequal weights
# the credited methods switched off, where that is not a cell already: kg_wdro_weak at λ = 10²⁰ (knowledge weight ≈ 0)
# in Sim 2 at ρ = 0.3 and the default ρ = 0.8, and kg_wdro_strong as vanilla wdro in Sim 2 at ρ = 0.9
SWITCHED_CELLS = 2 + 1


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"kg_wdro_strong", "kg_wdro_weak", "kg_wdro_multi", "wdro", "trans_glm",
                                  "trans_lasso", "trans_ridge"}
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    # with the positive controls' perfect-knowledge (ρ = 1) KG-WDRO in the three simulations (wdro's cells are shared)
    assert len(paper_cells(paper, registry, controls=False)) == (DISTINCT_CELLS + 6) * 20
    # the positive controls' nulls (ρ = 0) are cells of the negative controls already
    assert len(paper_cells(paper, registry)) == (DISTINCT_CELLS + 6 + CONTROL_CELLS + SWITCHED_CELLS) * 20
    assert all(c.control for c in paper.claims)
