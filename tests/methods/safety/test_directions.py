"""The safety residual space's linear algebra against known answers (the fine-tuning
shift's SVD, its effective rank and its dominant direction, as the paper defines them)."""

import numpy as np
import pytest

from methods.safety._directions import fit_shift, orient, shift_residual
from methods.safety.single_direction import mean_difference
from tasks.safety import components, effective_rank, probe_accuracy, threshold_accuracy


@pytest.fixture
def planted():
    """X (300, 12) and Y = X (I + A) with A = 3 a1 b1ᵀ + 1 a2 b2ᵀ, orthonormal a's and b's (rank-2 shift)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 12))
    q, _ = np.linalg.qr(rng.standard_normal((12, 4)))
    a1, a2, b1, b2 = q.T
    shift = 3.0 * np.outer(a1, b1) + 1.0 * np.outer(a2, b2)
    return x, x @ (np.eye(12) + shift), shift, (b1, b2)


def test_lstsq_recovers_the_linear_map_and_the_shift(planted):
    x, y, shift, _ = planted
    np.testing.assert_allclose(fit_shift(x, y), np.eye(12) + shift, atol=1e-10)
    np.testing.assert_allclose(shift_residual(x, y), x @ shift, atol=1e-10)


def test_directions_are_orthonormal_reconstruct_the_shift_and_span_the_planted_plane(planted):
    x, y, shift, (b1, b2) = planted
    r = shift_residual(x, y)
    v, s, lam = components(r)
    np.testing.assert_allclose(v @ v.T, np.eye(len(v)), atol=1e-10)              # orthonormal rows
    u = r @ v.T / np.where(s > 1e-12, s, 1.0)
    np.testing.assert_allclose((u * s) @ v, r, atol=1e-9)                        # U S Vᵀ = R
    np.testing.assert_allclose(r @ v[:2].T @ v[:2], r, atol=1e-9)                # two directions carry it all
    np.testing.assert_allclose(lam, s**2 / 299, rtol=1e-12)
    assert s[2] < 1e-9 * s[0]
    plane = np.stack([b1, b2])
    np.testing.assert_allclose(np.linalg.svd(plane @ v[:2].T, compute_uv=False), [1.0, 1.0], atol=1e-9)  # same span
    # the dominant direction is b1 (σ = 3 on an isotropic X): |cos| ≈ 1 up to sampling of X
    assert abs(v[0] @ b1) > 0.99
    assert effective_rank(lam, 0.6) == 1 and effective_rank(lam, 0.99) == 2


@pytest.mark.parametrize("tau,rank", [(0.4, 1), (0.6, 2), (0.7, 2), (0.8, 3), (0.9, 3), (1.0, 4)])
def test_effective_rank_of_a_known_spectrum(tau, rank):
    # λ = 4, 3, 2, 1: cumulative shares 0.4, 0.7, 0.9, 1.0
    assert effective_rank(np.array([4.0, 3.0, 2.0, 1.0]), tau) == rank


def test_effective_rank_of_a_zero_spectrum_is_zero():
    assert effective_rank(np.zeros(5), 0.9) == 0


def test_orientation_follows_the_shift_not_the_svd_sign():
    r = np.array([[2.0, 0.0], [1.0, 0.0], [-0.5, 0.0]])
    np.testing.assert_array_equal(orient(np.array([-1.0, 0.0]), r), [1.0, 0.0])
    np.testing.assert_array_equal(orient(np.array([1.0, 0.0]), r), [1.0, 0.0])


def test_threshold_accuracy_by_hand():
    labels = np.array([1, 1, 0, 0, 0], bool)           # refusal rate 0.4 → threshold at the 60th percentile
    scores = np.array([5.0, 1.0, 2.0, 0.0, -1.0])      # 60th percentile of the scores = 1.4: predicts {5, 2}
    assert threshold_accuracy(scores, labels) == pytest.approx(3 / 5)
    assert threshold_accuracy(np.array([5.0, 4.0, 2.0, 0.0, -1.0]), labels) == 1.0


def test_probe_separates_separable_data_and_mean_difference_is_the_normalised_gap():
    rng = np.random.default_rng(1)
    labels = np.arange(200) % 2 == 0
    x = rng.standard_normal((200, 5)) + 8.0 * labels[:, None] * np.eye(5)[0]
    train = np.arange(200) < 100
    assert probe_accuracy(x, labels, train, ~train) >= 0.98
    h = np.stack([x, 2 * x])                            # (2 layers, n, d)
    gap = x[labels].mean(0) - x[~labels].mean(0)
    np.testing.assert_allclose(mean_difference(h, labels), np.stack([gap, gap]) / np.linalg.norm(gap), atol=1e-12)
