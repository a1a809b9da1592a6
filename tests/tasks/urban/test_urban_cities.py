"""The real-cities task (urban_cities): the release's layout read as its loader reads it, and the authors' released
embeddings scored by our evaluator against the numbers their evaluator gives.

The fixture (tests/tasks/urban/fixture_cities) is made up; the real cities are read from ../shared/data/urban when
present (the project never ships them) and the tests that need them skip otherwise.
"""

from pathlib import Path

import numpy as np
import pytest

from bench.context import RunContext
from tasks.urban import INDICATORS, TwoCityProblem, TwoCityResult, ridge_transfer, score, urban_cities

FIXTURE = "tests/tasks/urban/fixture_cities"
REAL = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "urban"
needs_real = pytest.mark.skipif(not (REAL / "raw_data").is_dir(), reason=f"the released cities are not at {REAL}")

# MAE, RMSE, MAPE per (source, target, indicator) of the authors' released embeddings under their protocol, computed
# once by their evaluator (evaluator/evaluator_cross_city.py evaluation_reg, Ridge(alpha=1.0), float32) with
#   .venv/bin/python benchmarks/anchors/core-urban.py --authors /tmp/CoRE --data ../shared/data/urban
# (/tmp/CoRE = `git archive HEAD evaluator` of AIMUrban/CoRE at 0ec2a520d002)
THEIRS = {
    ("bj", "xa"): {"gdp": (164.888, 321.405, 3.621), "population": (621.250, 949.082, 4.642),
                   "co2": (178.574, 277.681, 4.734)},
    ("xa", "bj"): {"gdp": (155.309, 241.351, 6.660), "population": (605.051, 1221.228, 4.459),
                   "co2": (172.779, 417.418, 3.351)},
    ("cd", "bj"): {"gdp": (142.204, 236.445, 5.739), "population": (672.462, 1216.640, 5.978),
                   "co2": (154.043, 434.807, 1.511)},
    ("bj", "cd"): {"gdp": (142.056, 305.255, 5.464), "population": (637.867, 1189.209, 3.206),
                   "co2": (150.056, 190.480, 8.744)},
    ("cd", "xa"): {"gdp": (170.125, 314.041, 4.563), "population": (591.915, 940.160, 4.317),
                   "co2": (136.239, 292.983, 1.592)},
    ("xa", "cd"): {"gdp": (179.604, 305.820, 11.246), "population": (609.838, 1197.513, 3.320),
                   "co2": (130.397, 162.289, 9.273)},
}


def build(data: str, source: str = "bj", target: str = "xa") -> TwoCityProblem:
    return urban_cities.build(urban_cities.Config(data=data, source=source, target=target), RunContext(0).for_task())


def test_fixture_is_read_as_the_release_reads_it():
    problem = build(FIXTURE)
    assert problem.names == ("bj", "xa") and (problem.source.n, problem.target.n) == (12, 10)
    city = problem.source
    assert np.all(np.diag(city.graph) == 0) and city.graph.shape == (12, 12)
    np.testing.assert_array_equal(city.graph, city.od - np.diag(np.diag(city.od)))  # no OD file: M = .mob weights
    assert np.count_nonzero(city.od) == 12 * 3                                        # the id outside .geo dropped
    assert city.features.shape == (12, 4)                     # MIX, FUNCTION, DENSITY, BLD_Count (no geometry, id)
    assert city.labels.shape == (12, len(INDICATORS)) and city.latent is None


def test_the_data_path_may_be_raw_data_itself_and_bad_configs_say_what_is_allowed(monkeypatch, tmp_path):
    a, b = build(FIXTURE), build(FIXTURE + "/raw_data")
    np.testing.assert_array_equal(a.target.labels, b.target.labels)
    # an empty task.data looks in data_places(), in order; with none holding the cities the task is unavailable
    monkeypatch.setattr(urban_cities, "data_places", lambda: [tmp_path / "a", tmp_path / "b"])
    assert "looked in " + str(tmp_path / "a") in urban_cities.unavailable(urban_cities.Config())
    with pytest.raises(ValueError, match="set BENCH_URBAN_DATA"):
        build("")
    monkeypatch.setattr(urban_cities, "data_places", lambda: [tmp_path / "a", urban_cities.ROOT / FIXTURE])
    assert urban_cities.unavailable(urban_cities.Config()) is None
    np.testing.assert_array_equal(build("").target.labels, a.target.labels)
    with pytest.raises(ValueError, match="allowed: bj, cd, xa"):
        urban_cities.Config(data=FIXTURE, target="sh")
    with pytest.raises(ValueError, match="must differ"):
        urban_cities.Config(data=FIXTURE, source="xa", target="xa")
    with pytest.raises(ValueError, match="no raw_data"):
        build("/nonexistent/urban")


def test_fixture_embeddings_are_found_in_either_direction_and_ride_on_the_problem():
    es, et = urban_cities.released_embeddings(FIXTURE, "xa", "bj")
    assert es.shape == (10, 4) and et.shape == (12, 4)
    np.testing.assert_array_equal(build(FIXTURE, "xa", "bj").released[0], es)


def test_data_places_start_with_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCH_URBAN_DATA", str(tmp_path))
    places = urban_cities.data_places()
    assert places[0] == tmp_path and places[1].parts[-3:] == ("shared", "data", "urban")


@needs_real
def test_real_cities_have_the_release_sizes():
    sizes = {c: urban_cities.load_city(str(REAL), c) for c in urban_cities.CITIES}
    assert {c: city.n for c, city in sizes.items()} == {"bj": 1311, "cd": 1306, "xa": 1056}
    # .mob rows: bj 39,807, cd 9,498, xa 7,300 (every id is in .geo), of which 189, 670, 499 are self loops
    assert {c: int(np.count_nonzero(city.od)) for c, city in sizes.items()} == {"bj": 39807, "cd": 9498, "xa": 7300}
    assert {c: int(np.count_nonzero(city.graph)) for c, city in sizes.items()} == \
        {"bj": 39807 - 189, "cd": 9498 - 670, "xa": 7300 - 499}


@needs_real
@pytest.mark.parametrize("pair", sorted(THEIRS))
def test_released_embeddings_scored_by_our_evaluator_give_the_authors_numbers(pair):
    source, target = pair
    problem = build(str(REAL), source, target)
    es, et = urban_cities.released_embeddings(str(REAL), source, target)
    got = score(problem, TwoCityResult(predictions=ridge_transfer(es, problem.source.labels, et)))
    for ind, (mae, rmse, mape) in THEIRS[pair].items():
        assert got[f"mae_{ind}"] == pytest.approx(mae, abs=1e-3)
        assert got[f"rmse_{ind}"] == pytest.approx(rmse, abs=1e-3)
        assert got[f"mape_{ind}"] == pytest.approx(mape, abs=1e-3)
