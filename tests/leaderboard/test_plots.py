"""Claim plots: the slope drawn is the slope the verdict reads, the expected band and fit window are there, gaps
are signed in the claimed direction, the paper's tolerance band is drawn, and wide ranges go logarithmic."""

import numpy as np

from leaderboard.claims import CellGroup, Claim, ClaimValues
from leaderboard.plots import claim_figure, ordering_figure, rate_figure, spans_decades, value_figure


def _claim(kind, expect, n_groups=1, **kw) -> Claim:
    return Claim(id="c", statement="s", kind=kind, metric="error",
                 groups=tuple(CellGroup(f"m{i}", "toy_target") for i in range(n_groups)), expect=expect, seeds=3,
                 scale="cpu-full", **kw)


def _data(values, x=None) -> ClaimValues:
    values = np.asarray(values, dtype=float)
    return ClaimValues(tuple(f"m{i}" for i in range(len(values))), values,
                       None if x is None else np.asarray(x, dtype=float), tuple(() for _ in values))


def _trace(figure, prefix):
    return next(t for t in figure.data if (t.name or "").startswith(prefix))


def test_rate_across_settings_draws_the_fitted_slope_and_the_expected_band():
    x = np.array([[1.0, 1.0], [10.0, 10.0], [100.0, 100.0]])
    y = 3.0 * x ** -2.0  # slope -2 exactly
    claim = _claim("rate", {"slope": -2, "tolerance": 0.1}, 3, x_metric="norm")
    figure = rate_figure(claim, _data(y, x))
    fitted = _trace(figure, "fitted slope")
    assert fitted.name == "fitted slope -2.000"
    slope = np.polyfit(np.log(fitted.x), np.log(fitted.y), 1)[0]
    assert abs(slope + 2.0) < 1e-9
    assert _trace(figure, "expected slope -2 ± 0.1").fill == "toself"
    assert figure.layout.xaxis.type == "log" and figure.layout.yaxis.type == "log"


def test_rate_of_a_curve_shades_the_fit_window_and_fits_inside_it_only():
    steps = np.array([1, 10, 100, 1000, 10000])
    seeds = np.array([[5.0, 4.0, 1.0, 0.1, 0.01], [5.0, 4.0, 1.0, 0.1, 0.01]])  # slope -1 from 100 on, flat before
    claim = _claim("rate", {"slope": -1, "tolerance": 0.1}, curve="loss", x_range=(100, 10000))
    figure = rate_figure(claim, _data([[0.0, 0.0]]), [(steps, seeds)])
    assert _trace(figure, "fitted slope").name == "fitted slope -1.000"
    assert figure.layout.shapes[0].x0 == 100 and figure.layout.shapes[0].x1 == 10000  # the window
    assert sum(t.name == "seeds" for t in figure.data) == 2  # every seed's curve


def test_a_semilog_rate_draws_log_y_against_the_step_itself():
    """c·ρ^t: on a semi-log plot a straight line of slope log ρ per step, the step axis linear."""
    steps = np.arange(0, 51)
    seeds = np.array([2.0 * 0.9**steps, 5.0 * 0.9**steps])
    claim = _claim("rate", {"slope": -0.105, "tolerance": 0.01}, curve="loss", x_range=(0, 50), axis="semilog")
    figure = rate_figure(claim, _data([[0.0, 0.0]]), [(steps, seeds)])
    fitted = _trace(figure, "fitted slope")
    assert fitted.name == "fitted slope -0.105"
    assert abs(np.polyfit(fitted.x, np.log(fitted.y), 1)[0] - np.log(0.9)) < 1e-9
    assert figure.layout.xaxis.type is None and figure.layout.yaxis.type == "log"


def test_ordering_plots_per_seed_gaps_in_the_claimed_direction():
    claim = _claim("ordering", {"order": "decreasing", "min_gap": 0.5}, 2)
    figure = ordering_figure(claim, _data([[3.0, 2.0, 1.0], [1.0, 2.5, 0.0]]))
    assert list(figure.data[0].y) == [2.0, -0.5, 1.0]  # a - b: positive where the second is lower, as claimed
    assert {s.y0 for s in figure.layout.shapes} == {0.0, 0.5}


def test_value_plot_draws_the_tolerance_band_of_a_factor():
    claim = _claim("value", {"factor": 2}, paper_value=4.0)
    figure = value_figure(claim, _data([[3.0, 5.0, 4.0]]))
    band = figure.layout.shapes[0]
    assert (band.y0, band.y1) == (2.0, 8.0)


def test_log_axes_only_beyond_two_decades_of_positive_values():
    assert spans_decades([1e-4, 1.0]) and not spans_decades([1.0, 50.0]) and not spans_decades([-1.0, 1000.0])
    claim = _claim("bound", {"max": 0.01}, 2)
    assert claim_figure(claim, _data([[1e-5, 2e-5], [1e-2, 3e-2]])).layout.yaxis.type == "log"
    assert claim_figure(claim, _data([[np.nan], [np.nan]])) is None  # nothing stored: no plot


def test_tracking_draws_each_predictor_standardised_with_its_absolute_correlation():
    """error -3, -1, 1, 3; norm = 2 error + 1 (|r| 1); spread 1, -1, -1, 1 (r 0): standardised, norm's points are
    error's own z-scores, and each legend names its |r|."""
    error = np.array([[-3.0, -1.0], [1.0, 3.0]])
    claim = _claim("tracking", {"against": "spread", "min_advantage": 0.05}, 2, x_metric="norm")
    data = ClaimValues(("m0", "m1"), error, 2 * error + 1, ((), ()), np.array([[1.0, -1.0], [-1.0, 1.0]]))
    figure = claim_figure(claim, data)
    norm, spread = _trace(figure, "norm"), _trace(figure, "spread")
    assert norm.name == "norm (|r| 1.00)" and spread.name == "spread (|r| 0.00)"
    np.testing.assert_allclose(norm.x, error.ravel() / error.std())  # error is centred already
    np.testing.assert_allclose(spread.y, error.ravel())


def test_a_line_is_drawn_at_its_value_and_labelled_at_its_log_on_a_log_axis():
    """Plotly places a shape at the value itself but an annotation, on a log axis, at the value's log10."""
    claim = _claim("bound", {"max": 0.01}, 2)
    figure = claim_figure(claim, _data([[1e-5, 2e-5], [1e-2, 3e-2]]))
    line, label = figure.layout.shapes[0], figure.layout.annotations[0]
    assert figure.layout.yaxis.type == "log" and line.y0 == line.y1 == 0.01
    assert label.text == "max" and label.y == -2.0
    linear = claim_figure(_claim("bound", {"max": 2.0}, 1), _data([[1.0, 1.5]]))
    assert linear.layout.annotations[0].y == 2.0
