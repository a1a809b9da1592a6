"""Borodich, Gasnikov & Kovalev (ICML 2025) end to end: the claims file and `bench claims` on stored runs."""

import pytest

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells
from tests.leaderboard.paper_cli import bench, verdicts

PAPER = "bilinear-saddle"

METHODS = {"bgk_separated", "apdg", "opapc", "extragradient", "optimistic_gda", "pdhg", "saddle_gda"}


def test_claims_file_is_valid_and_complete():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    # the same quantity as a claim or implied by one (the claims file's checks: why)
    checks = ["grad-g-sqrt-kappa-y", "new-class-linear-fit-tail", "new-class-error-decreases"]
    assert [c.id for c in paper.claims][-len(checks):] == checks
    assert [c.id for c in paper.claims if c.role == "check"] == checks
    assert all(bool(c.control) != bool(c.control_none) for c in paper.claims if c.role == "claim")
    assert set(paper.methods) == METHODS
    assert all(info["fidelity"] and info.get("deviations") for info in paper.methods.values())
    assert paper.methods["bgk_separated"]["fidelity"] == "reconstructed"
    assert all(c.seeds >= 3 and c.scale == "cpu-full" for c in paper.claims)
    assert len(paper_cells(paper, registry, controls=False)) == 33 * 3  # with the positive control's optimistic GDA
    # with the negative controls' cells and the control's null (48 settings), + bgk_separated switched off
    # (side = none: APDG without the Chebyshev inner loop) in each of its 15 settings: 9 saddle_coupling_curvature,
    # 3 saddle_constrained (μ_x), 3 saddle_bilinear (μ_xy)
    assert len(paper_cells(paper, registry)) == (48 + 15) * 3


def _verdicts(stdout: str) -> dict[str, str]:
    return verdicts(stdout, {c.id for c in load_paper(Registry.discover(), PAPER).claims})


@pytest.mark.integration
def test_one_claim_end_to_end(tmp_path):
    # extragradient is linear in the new class: 2 cells x 3 seeds, a few seconds
    db = tmp_path / "eg.db"
    for config in ([], ["--set", "task.aligned=true"]):
        run = bench("run", "-m", "extragradient", "-t", "saddle_coupling_curvature", "--seeds", "0-2", *config, db=db)
        assert run.returncode == 0, run.stderr[-2000:]
    verdicts = _verdicts(bench("claims", "--paper", PAPER, db=db).stdout)
    # the fit's R² over 3 seeds, 0.9974 with a 95 % interval [0.988, 1.007] that straddles its bound 0.99: the same
    # verdict as the paper's lock, decided by its interval
    assert verdicts["new-class-linear-fit-eg"] == "underpowered"
    assert verdicts["new-class-linear-fit-bgk"] == "not run"
    assert verdicts["new-class-linear-convergence"] == "not run"
