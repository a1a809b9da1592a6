"""The authors' released embeddings as a method: their numbers through our protocol, a skip where the release has
none, and the shuffled null."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.urban import released_core
from tasks.urban import ridge_transfer, score, two_city, urban_cities
from tests.tasks.urban.test_urban_cities import FIXTURE, REAL, THEIRS, needs_real


def _build(data, source="bj", target="xa"):
    return urban_cities.build(urban_cities.Config(data=data, source=source, target=target), RunContext(0).for_task())


def test_predictions_are_the_ridge_transfer_of_the_released_embeddings():
    problem = _build(FIXTURE)
    es, et = urban_cities.released_embeddings(FIXTURE, "bj", "xa")
    out = released_core.solve(problem, released_core.Config(), RunContext(0))
    np.testing.assert_allclose(out.predictions, ridge_transfer(es, problem.source.labels, et))


def test_skipped_where_the_release_has_no_embeddings():
    synthetic = two_city.build(two_city.Config(n_source=20, n_target=15), RunContext(0).for_task())
    assert "has no embeddings for" in released_core.skip(synthetic, released_core.Config())
    assert released_core.skip(_build(FIXTURE), released_core.Config()) is None


def test_shuffle_permutes_the_target_rows_only():
    problem = _build(FIXTURE)
    base = released_core.solve(problem, released_core.Config(), RunContext(0)).predictions
    shuffled = released_core.solve(problem, released_core.Config(shuffle=True), RunContext(0)).predictions
    # the same ridge applied to permuted target rows: the same multiset of predictions, in another order
    np.testing.assert_allclose(np.sort(shuffled, axis=0), np.sort(base, axis=0))
    assert not np.allclose(shuffled, base)


@needs_real
@pytest.mark.parametrize("pair", [("bj", "xa"), ("cd", "bj"), ("cd", "xa")])
def test_on_the_real_cities_it_gives_the_authors_numbers(pair):
    problem = _build(str(REAL), *pair)
    metrics = score(problem, released_core.solve(problem, released_core.Config(), RunContext(0)))
    for indicator, (mae, rmse, mape) in THEIRS[pair].items():
        assert metrics[f"mae_{indicator}"] == pytest.approx(mae, abs=2e-3)
        assert metrics[f"rmse_{indicator}"] == pytest.approx(rmse, abs=2e-3)
        assert metrics[f"mape_{indicator}"] == pytest.approx(mape, abs=2e-3)
    assert metrics["mae"] == pytest.approx(np.mean([v[0] for v in THEIRS[pair].values()]), abs=2e-3)
