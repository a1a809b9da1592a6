"""Two-city task: hand-computed MAE/RMSE/R²/MAPE, the ridge protocol against sklearn, the generator, the
released-data reader."""

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from bench.context import RunContext
from tasks.urban import (
    INDICATORS,
    City,
    TwoCityProblem,
    TwoCityResult,
    regression_metrics,
    ridge_transfer,
    score,
    two_city,
)


def test_metrics_hand_computed_with_clipping():
    # ŷ = [1, 3, 2, −1] is clipped to [1, 3, 2, 0]: errors [0, −1, 1, 4]; SSE 18; SST 5 (ȳ = 2.5)
    m = regression_metrics(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, -1.0]))
    assert m["mae"] == pytest.approx(1.5)
    assert m["rmse"] == pytest.approx(np.sqrt(4.5))
    assert m["r2"] == pytest.approx(1 - 18 / 5)
    assert m["mape"] == pytest.approx((0 + 1 / 2 + 1 / 3 + 4 / 4) / 4)


def test_mape_skips_zero_targets_and_perfect_prediction():
    m = regression_metrics(np.array([0.0, 2.0]), np.array([1.0, 1.0]))
    assert m["mape"] == pytest.approx(0.5) and m["mae"] == pytest.approx(1.0)
    y = np.array([3.0, 1.0, 7.0])
    assert regression_metrics(y, y) == {"mae": 0.0, "rmse": 0.0, "r2": 1.0, "mape": 0.0}


def _city(labels):
    n = len(labels)
    return City(od=np.ones((n, n)), graph=np.zeros((n, n)), features=np.zeros((n, 1)), labels=np.asarray(labels, float))


def test_score_averages_indicators_and_checks_shapes():
    target = np.array([[1.0, 10.0, 100.0], [3.0, 30.0, 300.0]])
    problem = TwoCityProblem(_city(target), _city(target), ("a", "b"))
    pred = target + np.array([[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]])
    s = score(problem, TwoCityResult(pred))
    assert [s[f"mae_{i}"] for i in INDICATORS] == pytest.approx([1.0, 2.0, 3.0])
    assert s["mae"] == pytest.approx(2.0)
    assert s["r2_population"] == pytest.approx(1 - 2 / 2)  # SSE 2, SST 2
    with pytest.raises(ValueError, match="shape"):
        score(problem, TwoCityResult(pred[:1]))


def test_constant_prediction_has_nonpositive_r2():
    """R² uses the target's own mean: any constant (e.g. the source mean) scores R² = −(c − ȳ)²/Var(y) ≤ 0."""
    y = np.array([1.0, 2.0, 6.0])
    assert regression_metrics(y, np.full(3, 3.0))["r2"] == pytest.approx(0.0)
    assert regression_metrics(y, np.full(3, 4.0))["r2"] == pytest.approx(-1 / (14 / 3))


def test_ridge_transfer_equals_sklearn_ridge():
    rng = np.random.default_rng(0)
    xs, ys, xt = rng.normal(size=(40, 5)), rng.normal(size=(40, 3)), rng.normal(size=(30, 5))
    ref = Ridge(alpha=1.0).fit(xs, ys).predict(xt)
    np.testing.assert_allclose(ridge_transfer(xs, ys, xt, 1.0), ref, atol=1e-10)


def test_synthetic_cities_are_well_formed_and_seeded():
    config = two_city.Config(n_source=40, n_target=30)
    p = two_city.build(config, RunContext(3).for_task())
    assert (p.source.n, p.target.n) == (40, 30)
    assert p.source.labels.shape == (40, 3) and np.all(p.target.labels > 0)
    for city in (p.source, p.target):
        assert np.all(np.diag(city.graph) == 0)
        rows = city.graph.sum(1)
        np.testing.assert_allclose(rows[rows > 0], 1.0)  # .mob-like weights: outgoing trip shares
        assert (city.graph > 0).sum(1).max() <= config.graph_degree
        assert np.all((city.graph > 0) <= (city.od > 0))
    again = two_city.build(config, RunContext(3).for_task())
    assert np.array_equal(p.target.od, again.target.od)
    other = two_city.build(config, RunContext(4).for_task())
    assert not np.array_equal(p.source.labels, other.source.labels)


def test_label_shift_scales_the_target_labels_only():
    a = two_city.build(two_city.Config(n_source=30, n_target=25, label_shift=1.0), RunContext(0).for_task())
    b = two_city.build(two_city.Config(n_source=30, n_target=25, label_shift=2.0), RunContext(0).for_task())
    np.testing.assert_allclose(b.target.labels, 2.0 * a.target.labels)
    np.testing.assert_allclose(b.source.labels, a.source.labels)


@pytest.mark.parametrize("bad", [{"n_source": 2}, {"tau_target": 0.0}, {"label_noise": -1.0},
                                 {"data_dir": "x", "source_city": "xa", "target_city": "xa"}])
def test_bad_config_is_rejected(bad):
    with pytest.raises(ValueError):
        two_city.Config(**bad)


def write_city(root, city, n, rng):
    """The released layout (AIMUrban/CoRE raw_data/<city>/), tiny."""
    folder = root / city / f"regionmap_{city}"
    folder.mkdir(parents=True)
    geo_ids = np.arange(10, 10 + n)
    pd.DataFrame({"geo_id": geo_ids, "type": "POLYGON", "MIX": rng.random(n), "FUNCTION": np.arange(n),
                  "DENSITY": rng.random(n), "Shape_Area": 1.0, "geometry": "POLYGON ((0 0, 1 0, 1 1, 0 0))",
                  "m_lon": 108.9, "m_lat": 34.2}).to_csv(folder / f"regionmap_{city}.geo", index=False)
    edges = [(10, 11, 0.25), (11, 10, 0.5), (10, 10, 0.9), (12, 99, 0.7)]  # a self loop, an id not in .geo
    pd.DataFrame({"rel_id": range(len(edges)), "type": "mob", "origin_id": [e[0] for e in edges],
                  "destination_id": [e[1] for e in edges], "mobility_weight": [e[2] for e in edges]}
                 ).to_csv(folder / f"regionmap_{city}.mob", index=False)
    np.save(root / city / f"region_od_flow_{city}_11.npy", rng.integers(0, 5, (n, n)).astype(float))
    for k, ind in enumerate(INDICATORS):
        np.save(root / city / f"{ind}_{city}_sum.npy", np.arange(n) + 100.0 * (k + 1))


def test_reads_the_released_format(tmp_path):
    rng = np.random.default_rng(0)
    write_city(tmp_path, "bj", 4, rng)
    write_city(tmp_path, "xa", 3, rng)
    p = two_city.build(two_city.Config(data_dir=str(tmp_path)), RunContext(0).for_task())
    assert p.names == ("bj", "xa") and (p.source.n, p.target.n) == (4, 3)
    expected = np.zeros((4, 4))
    expected[0, 1], expected[1, 0] = 0.25, 0.5  # self loop removed, unknown destination 99 skipped
    np.testing.assert_array_equal(p.source.graph, expected)
    np.testing.assert_array_equal(p.target.labels[:, 1], [200.0, 201.0, 202.0])  # gdp column
    assert p.source.features.shape == (4, 3)  # MIX, FUNCTION, DENSITY (ids and geometry excluded)
    np.testing.assert_array_equal(p.source.features[:, 1], np.arange(4))
    np.testing.assert_array_equal(p.source.od, np.load(tmp_path / "bj" / "region_od_flow_bj_11.npy"))


def test_missing_data_dir_says_what_is_expected(tmp_path):
    with pytest.raises(ValueError, match="expected the released AIMUrban/CoRE raw_data layout"):
        two_city.build(two_city.Config(data_dir=str(tmp_path / "nowhere")), RunContext(0).for_task())


def test_mismatched_od_matrix_is_rejected(tmp_path):
    rng = np.random.default_rng(0)
    write_city(tmp_path, "bj", 4, rng)
    write_city(tmp_path, "xa", 3, rng)
    np.save(tmp_path / "xa" / "region_od_flow_xa_11.npy", np.ones((5, 5)))
    with pytest.raises(ValueError, match="3 regions but the OD matrix is"):
        two_city.build(two_city.Config(data_dir=str(tmp_path)), RunContext(0).for_task())


def test_the_graph_keeps_each_origins_largest_flows():
    flows = np.array([[0.0, 5.0, 1.0, 3.0, 3.0],
                      [2.0, 0.0, 0.0, 0.0, 0.0],
                      [1.0, 4.0, 9.0, 4.0, 0.0]])
    kept = two_city._strongest(flows, 2)
    np.testing.assert_array_equal(kept, [[0.0, 5.0, 0.0, 3.0, 0.0],    # 5 and the first of the tied 3s
                                         [2.0, 0.0, 0.0, 0.0, 0.0],    # fewer flows than k: all kept
                                         [0.0, 4.0, 9.0, 0.0, 0.0]])


def test_graph_degree_zero_links_every_pair_with_a_trip_and_the_default_is_sparse():
    dense = two_city.build(two_city.Config(n_source=60, n_target=50, graph_degree=0), RunContext(0).for_task())
    sparse = two_city.build(two_city.Config(n_source=60, n_target=50), RunContext(0).for_task())
    for d, s in ((dense.source, sparse.source), (dense.target, sparse.target)):
        np.testing.assert_array_equal(d.od, s.od)                     # the same trips: only the graph differs
        assert np.array_equal(d.graph > 0, (d.od > 0) & ~np.eye(d.n, dtype=bool))
        assert (s.graph > 0).sum(1).max() == 10 < (d.graph > 0).sum(1).max()
        for i in range(s.n):                                          # the kept flows are the row's 10 largest
            off = np.delete(d.od[i], i)
            kept = np.delete(s.graph[i] > 0, i)
            assert off[kept].min() >= off[~kept].max()
    with pytest.raises(ValueError, match="graph_degree"):
        two_city.Config(graph_degree=-1)
