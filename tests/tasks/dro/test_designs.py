"""The three KG-WDRO simulation designs carry the ground truth the spec describes (§5): the
sparsity pattern, the (β, θ) correlation ρ, the covariate law, the response models of target and
sources, the sample sizes; and `score` measures β̂ against that β."""

import numpy as np
import pytest

from bench.context import RunContext
from tasks.dro import DROResult, multi_source_linear, score, strong_transfer_logistic, weak_transfer_linear


def build(module, seed=0, **cfg):
    return module.build(module.Config(**cfg), RunContext(seed=seed).for_task())


def test_sim1_sparsity_sizes_and_labels():
    p = build(strong_transfer_logistic, n_test=500)
    assert p.kind == "classification" and p.penalty_norm == 1
    assert p.x_train.shape == (20, 150) and p.x_val.shape == (20, 150) and p.x_test.shape == (500, 150)
    assert p.theta.shape == (150, 1) and p.x_source[0].shape == (200, 150)
    assert np.count_nonzero(p.beta) == 50 and np.count_nonzero(p.theta) == 50
    assert np.all(p.beta[50:] == 0) and np.all(p.theta[50:] == 0)
    assert set(np.unique(np.concatenate([p.y_train, p.y_test, p.y_source[0]]))) == {-1.0, 1.0}


@pytest.mark.parametrize("module,cfg", [
    (strong_transfer_logistic, dict(rho=0.5, n_test=10, n_source=10)),
    (weak_transfer_linear, dict(rho=0.5, n_test=10, n_source=10)),
])
def test_coefficient_pairs_have_correlation_rho_and_scale_s(module, cfg):
    # 40 instances × 50 (Sim 1) or 100 (Sim 2) active pairs: the sample correlation's sd ≈ 0.02
    pairs = [(p.beta[p.beta != 0], p.theta[p.beta != 0, 0])
             for p in (build(module, seed=s, **cfg) for s in range(40))]
    b, t = np.concatenate([x for x, _ in pairs]), np.concatenate([y for _, y in pairs])
    signal = module.Config().signal
    assert np.corrcoef(b, t)[0, 1] == pytest.approx(0.5, abs=0.06)
    assert np.std(t) == pytest.approx(signal, rel=0.05) and np.std(b) == pytest.approx(signal, rel=0.05)


def test_sim2_covariates_are_ar1_with_correlation_0_3_and_responses_linear():
    p = build(weak_transfer_linear, dim=8, n_test=40_000, n_source=40_000)
    emp = np.cov(p.x_test.T)
    idx = np.arange(8)
    np.testing.assert_allclose(emp, 0.3 ** np.abs(idx[:, None] - idx[None, :]), atol=0.03)
    # OLS on the large test and source samples recovers β and θ; residual sd = σ = 1
    b = np.linalg.lstsq(p.x_test, p.y_test, rcond=None)[0]
    np.testing.assert_allclose(b, p.beta, atol=0.03)
    np.testing.assert_allclose(np.std(p.y_test - p.x_test @ p.beta), 1.0, rtol=0.02)
    np.testing.assert_allclose(np.linalg.lstsq(p.x_source[0], p.y_source[0], rcond=None)[0], p.theta[:, 0], atol=0.03)


def test_sim1_labels_follow_the_logistic_model_of_beta():
    from scipy.optimize import minimize
    p = build(strong_transfer_logistic, dim=6, support=3, n_test=40_000, n_source=10)
    x, y = p.x_test, p.y_test
    mle = minimize(lambda b: np.mean(np.logaddexp(0, -y * (x @ b))), np.zeros(6),
                   jac=lambda b: -(x.T @ (y / (1 + np.exp(y * (x @ b))))) / len(y), method="BFGS").x
    np.testing.assert_allclose(mle, p.beta, atol=0.06)   # MLE sd ≈ 0.01–0.02 per coordinate


@pytest.mark.parametrize("unequal,weights", [(False, (1 / 3, 1 / 3, 1 / 3)), (True, (0.7, 0.2, 0.1))])
def test_sim3_target_is_correlated_with_the_weighted_source_combination(unequal, weights):
    w = np.array(weights)
    insts = [build(multi_source_linear, seed=s, rho=0.6, unequal=unequal, n_test=10, n_source=10) for s in range(40)]
    p = insts[0]
    assert p.theta.shape == (100, 3) and len(p.x_source) == 3 and p.penalty_norm == 1
    assert np.count_nonzero(p.beta) == 20 and np.all(p.theta[20:] == 0)
    b = np.concatenate([q.beta[:20] for q in insts])
    s = np.concatenate([q.theta[:20] @ w / np.linalg.norm(w) for q in insts])
    assert np.corrcoef(b, s)[0, 1] == pytest.approx(0.6, abs=0.06)
    # the sources themselves are independent of each other
    t = np.concatenate([q.theta[:20] for q in insts])
    assert abs(np.corrcoef(t[:, 0], t[:, 1])[0, 1]) < 0.1


def test_sim3_each_source_sample_follows_its_own_theta():
    p = build(multi_source_linear, dim=8, support=4, n_test=10, n_source=20_000)
    for m in range(3):
        est = np.linalg.lstsq(p.x_source[m], p.y_source[m], rcond=None)[0]
        np.testing.assert_allclose(est, p.theta[:, m], atol=0.04)


def test_score_of_the_truth_is_zero_error_and_the_oracle():
    for module in (strong_transfer_logistic, weak_transfer_linear, multi_source_linear):
        p = build(module, n_test=500, n_source=10)
        s = score(p, DROResult(coef=p.beta.copy()))
        assert s["coef_error"] == 0.0
        key = "test_accuracy" if p.kind == "classification" else "test_r2"
        assert s[key] == s["oracle_score"]
    p = build(weak_transfer_linear, n_test=500, n_source=10)
    assert score(p, DROResult(coef=np.zeros(100)))["coef_error"] == pytest.approx(np.linalg.norm(p.beta))


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="n_train"):
        weak_transfer_linear.Config(n_train=1)
    with pytest.raises(ValueError, match="rho"):
        build(strong_transfer_logistic, rho=1.5, n_test=10)
