"""Best-of-n (Beirami et al., ICML 2025) end to end: `bench reproduce` runs the claims' cells, `bench claims` judges them."""

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells
from tests.leaderboard.paper_cli import reproduce_then_claims

PAPER = "best-of-n-kl"
TABLE_IDS = [f"table-{kind}-L{L}-n{n}" for kind in ("exact", "estimator") for L in (10, 100, 1000)
             for n in (2, 16, 64, 256, 1024)]

# Regression pin of the verdicts (commit "best_of_n family"). Every claim is reproduced: the
# closed forms (Theorem 3.1, Theorem 5.3, the estimator, the §7 trade-off) are exact here, and the
# values are the spec's, computed from the same closed forms (the paper's plotted values were not
# accessible). What does not hold on every finite reference (best-of-n ≥ rewind-and-repeat at equal
# KL) is pinned in tests/methods/best_of_n/test_rewind_and_repeat.py, not claimed.
EXPECTED = {
    "kl-below-formula-uniform": "reproduced",
    "kl-below-formula-random-references": "reproduced",
    "kl-below-formula-lm": "reproduced",
    "binary-kl-tends-to-log2": "reproduced",
    "binary-formula-gap-unbounded": "reproduced",
    "kl-saturates-at-log-L": "reproduced",
    **{cid: "reproduced" for cid in TABLE_IDS},
    "estimator-tracks-exact-uniform": "reproduced",
    "estimator-beats-formula-L10-n64": "reproduced",
    "estimator-beats-formula-L100-n256": "reproduced",
    "estimator-beats-formula-L1000-n1024": "reproduced",
    "estimator-upper-bounds-kl": "reproduced",
    "estimator-upper-bounds-kl-random-references": "reproduced",
    "cherry-picked-formula-far-off": "reproduced",
    "cherry-picked-estimator-tracks": "reproduced",
    "lm-low-entropy-estimator-beats-formula": "reproduced",
    "lm-low-entropy-formula-error": "reproduced",
    "lm-high-entropy-all-agree": "reproduced",
    "lm-monte-carlo-kl-agrees": "reproduced",
    "simulated-bon-matches-closed-form": "reproduced",
    "win-rate-below-bound": "reproduced",
    "win-rate-below-bound-random-references": "reproduced",
    "win-rate-n1-is-half": "reproduced",
    "win-rate-uniform-L10-n3": "reproduced",
    "win-rate-uniform-L10-n10": "reproduced",
    "win-rate-uniform-L10-n100": "reproduced",
    "win-rate-L1000-at-bound": "reproduced",
    "tradeoff-n2": "reproduced",
    "tradeoff-n4": "reproduced",
    "tradeoff-n16": "reproduced",
    "tradeoff-n64": "reproduced",
    "tradeoff-n256": "reproduced",
    "bon-near-kl-rl-optimum": "reproduced",
    "kl-rl-dominates-bon-finite-references": "reproduced",
    "kl-rl-dominates-bon-random-references": "reproduced",
    "bon-beats-rewind-finite-references": "reproduced",
}
METHODS = {"bon_exact", "bon_formula", "bon_estimator", "bon_simulation", "kl_regularized_optimum", "rewind_and_repeat"}
CELLS = 377
CELLS_WITH_CONTROLS = 440  # and the negative controls' cells (bench reproduce --controls)


def test_claims_file_is_valid_and_complete():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    # an identity (best-of-1) and the optimum's dominance by construction: the claims file's checks, with why
    checks = ["win-rate-n1-is-half", "kl-rl-dominates-bon-finite-references", "kl-rl-dominates-bon-random-references"]
    assert [c.id for c in paper.claims] == [k for k in EXPECTED if k not in checks] + checks
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
        for n, (exact, _, estimator) in zip(NS, rows):
            assert by_id[f"table-exact-L{L}-n{n}"].paper_value == exact
            assert by_id[f"table-estimator-L{L}-n{n}"].paper_value == estimator
            assert by_id[f"table-exact-L{L}-n{n}"].expect == {"atol": 1e-4}


def test_reproduce_then_claims(tmp_path):
    db = tmp_path / "paper.db"
    claims = reproduce_then_claims(PAPER, db, EXPECTED, CELLS)  # in-process: ~600 cells of milliseconds each
    assert claims.count("measured at cpu-reduced") == 5
