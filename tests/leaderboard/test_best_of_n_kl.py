"""Best-of-n (Beirami et al., ICML 2025) : the claims file and its Table values."""

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells

PAPER = "best-of-n-kl"

METHODS = {"bon_exact", "bon_formula", "bon_estimator", "bon_simulation", "kl_regularized_optimum", "rewind_and_repeat"}
CELLS = 378  # with the positive control's planted atom
# + its null, the negative controls' cells, and bon_estimator switched off (bon_formula, ε ≡ 0) where that is not a cell
# already: 16 single-seed settings (12 bon_uniform L x n of the estimator's table, 4 bon_cherry_picked n) and
# bon_random_reference(α = 0.1, 3 reward levels) x 20 seeds (bench reproduce --controls)
CELLS_WITH_CONTROLS = 442 + 16 * 1 + 1 * 20


def test_claims_file_is_valid_and_complete():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    # an identity (best-of-1) and the optimum's dominance by construction: the claims file's checks, with why
    checks = ["win-rate-n1-is-half", "kl-rl-dominates-bon-finite-references", "kl-rl-dominates-bon-random-references"]
    assert [c.id for c in paper.claims][-len(checks):] == checks
    assert [c.id for c in paper.claims if c.role == "check"] == checks
    assert all(bool(c.control) != bool(c.control_none) for c in paper.claims
               if c.role == "claim" and c.scale != "paper-scale")
    assert set(paper.methods) == METHODS
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    # claims over random references or Monte-Carlo methods read 20 seeds; closed forms need one
    for claim in paper.claims:
        random = any(g.task == "bon_random_reference" or g.method == "bon_simulation"
                     or g.method_config.get("samples") for g in claim.groups)
        assert claim.seeds == 20 if random else claim.seeds in (1, 20), claim.id
    assert len(paper_cells(paper, registry, controls=False)) == CELLS
    assert len(paper_cells(paper, registry)) == CELLS_WITH_CONTROLS


def test_table_claims_carry_the_spec_values():
    from tests.tasks.best_of_n.test_bon_uniform import NS, TABLE

    paper = load_paper(Registry.discover(), PAPER)
    by_id = {c.id: c for c in paper.claims}
    for L, rows in TABLE.items():
        for n, (exact, _, estimator) in zip(NS, rows, strict=True):
            assert by_id[f"table-exact-L{L}-n{n}"].paper_value == exact
            assert by_id[f"table-estimator-L{L}-n{n}"].paper_value == estimator
            assert by_id[f"table-exact-L{L}-n{n}"].expect == {"atol": 1e-4}
