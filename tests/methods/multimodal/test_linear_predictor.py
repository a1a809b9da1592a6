"""Linear predictor: the ridge closed form against scikit-learn, and exact recovery of a linear pairing."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from bench.context import RunContext
from methods.multimodal import linear_predictor as lp
from tasks.multimodal import PairedProblem, score


def test_ridge_matches_scikit_learn():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((50, 4)), rng.standard_normal((50, 3))
    w, b = lp.fit_ridge(x, y, 0.1)
    ref = Ridge(alpha=50 * 0.1).fit(x, y)                       # (1/n)‖·‖² + λ‖W‖²  ⇔  ‖·‖² + nλ‖W‖²
    np.testing.assert_allclose(w, ref.coef_.T, atol=1e-10)
    np.testing.assert_allclose(b, ref.intercept_, atol=1e-10)


def test_exact_linear_pairing_is_recovered_and_retrieved_perfectly():
    """Text = image · A + c token by token: λ = 0 recovers A, and every query's top match is its pair."""
    rng = np.random.default_rng(1)
    n, m, d = 200, 30, 5
    a = rng.standard_normal((d, d))
    img = rng.standard_normal((n + m, 1, d)).astype(np.float32)
    txt = (img @ a + 0.5).astype(np.float32)
    mask = np.ones((n + m, 1), bool)
    keys = np.arange(n + m)
    problem = PairedProblem(img[:n], txt[:n], mask[:n], keys[:n], img[n:], txt[n:], mask[n:], keys[n:],
                            keys[n:] % 3, txt[n:n + 3], mask[:3], ("a", "b", "c"), ("",) * m, "linear")
    w, _ = lp.fit_ridge(img[:n, 0].astype(float), txt[:n, 0].astype(float), 0.0)
    np.testing.assert_allclose(w, a, atol=1e-4)
    result = lp.solve(problem, lp.Config(ridge=0.0), RunContext(0))
    s = score(problem, result)
    assert s["recall_i2t_at_1"] == 1.0 and s["recall_t2i_at_1"] == 1.0
    assert s["trainable_params"] == 2 * (d * d + d)


def test_config_validation():
    with pytest.raises(ValueError, match="ridge"):
        lp.Config(ridge=-1.0)
