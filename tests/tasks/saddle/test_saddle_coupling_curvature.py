"""R4, the paper's new class: f, g convex but not strongly convex, curvature from B (the paper's claim 2: linear
convergence for smooth, non-strongly-convex f and g)."""

import numpy as np
import pytest

from bench.context import RunContext
from tasks.saddle.saddle_coupling_curvature import Config, aligned_spectra, build
from tests.tasks.saddle._checks import assert_constants_match_the_spectra, assert_exact_saddle_point, assert_seeded


def make(**overrides):
    return build(Config(**overrides), RunContext(seed=0).for_task())


@pytest.mark.parametrize("overrides", [{}, {"aligned": True}, {"L_xy": 16.0}, {"d": 100},
                                       {"mu_xy": 0.0625, "aligned": True}])
def test_kkt_solution_is_the_saddle_point(overrides):
    p = make(**overrides)
    assert_exact_saddle_point(p)
    assert_constants_match_the_spectra(p)


@pytest.mark.parametrize("aligned", [False, True])
def test_f_and_g_are_not_strongly_convex_but_the_coupling_is_nonsingular(aligned):
    p = make(aligned=aligned)
    eA, eC = np.linalg.eigvalsh(p.data.A), np.linalg.eigvalsh(p.data.C)
    assert np.sum(np.abs(eA) < 1e-12) == 25 and np.sum(np.abs(eC) < 1e-12) == 25
    assert p.mu_x == p.mu_y == 0.0 and p.mu_xy == p.mu_yx == pytest.approx(0.1)
    # δ_x = μ_yx²/L_y, δ_y = μ_xy²/L_x, κ_x = κ_y = L_x L_y/μ_xy² (the paper's claim 2: g*(Bx) strongly convex)
    assert p.delta_x == pytest.approx(0.01) and p.delta_y == pytest.approx(0.01)
    assert p.kappa_x == pytest.approx(100.0) and p.kappa_xy == pytest.approx(1e4)


def test_aligned_instance_realises_the_curvature_delta_exactly():
    p = make(aligned=True, L_x=2.0, L_y=0.5)
    d = p.data
    # shared bases: BᵀB commutes with A and BBᵀ with C
    np.testing.assert_allclose(d.B.T @ d.B @ d.A, d.A @ d.B.T @ d.B, atol=1e-10)
    np.testing.assert_allclose(d.B @ d.B.T @ d.C, d.C @ d.B @ d.B.T, atol=1e-10)
    # the right singular vector of σ_min lies in null(A) and B maps it onto C's top eigenvector:
    # along it, max_y ⟨y,Bx⟩ − g(y) has curvature μ_xy²/L_y = δ_x exactly
    _, s, vt = np.linalg.svd(d.B)
    q = vt[-1]
    assert s[-1] == pytest.approx(0.1)
    assert np.linalg.norm(d.A @ q) < 1e-10
    p_dir = d.B @ q / s[-1]
    assert p_dir @ d.C @ p_dir == pytest.approx(p.L_y)
    assert s[-1] ** 2 / (p_dir @ d.C @ p_dir) == pytest.approx(p.delta_x)
    # and the next singular pair gives δ_y: its left vector is in null(C), Bᵀ maps it onto A's top
    u2 = np.linalg.svd(d.B)[0][:, -2]
    assert np.linalg.norm(d.C @ u2) < 1e-10
    q2 = d.B.T @ u2 / s[-2]
    assert q2 @ d.A @ q2 == pytest.approx(p.L_x)


def test_aligned_spectra_alternate_zero_and_descending_curvature():
    A, C = aligned_spectra(np.array([0, 0, 0, 1.0, 2, 3]), np.array([0, 0, 0, 4.0, 5, 6]))
    assert list(A) == [0, 3, 0, 2, 0, 1] and list(C) == [6, 0, 5, 0, 4, 0]
    with pytest.raises(ValueError, match="zero_fraction"):
        make(aligned=True, zero_fraction=0.25)


def test_instances_come_from_the_run_seed():
    assert_seeded(build, Config(d=10), lambda s: RunContext(seed=s).for_task())
    assert_seeded(build, Config(d=10, aligned=True), lambda s: RunContext(seed=s).for_task())


@pytest.mark.parametrize("bad", [{"mu_xy": 0.0}, {"zero_fraction": 0.0}, {"spread": 0.5}, {"L_x": 0.0}])
def test_bad_configs_are_rejected(bad):
    with pytest.raises(ValueError):
        make(**bad)
