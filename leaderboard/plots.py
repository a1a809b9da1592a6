"""A plot for every claim that has a shape (plotly figures; the app only places them).

rate      log-log (semi-log, a linear x, for `axis: semilog`): every seed's points (or curves), the fitted slope,
          the expected slope's band through the fit's centre, and the fit window shaded.
ordering  per-seed paired gaps in the claimed direction, pair by pair, with 0 and the claim's min_gap marked.
value     every seed's value and the mean, the paper's value with its tolerance band.
bound     every seed's value per group with the bound(s).
tracking  the tracked metric against each predictor (standardised), one point per run, with each |r|.
Axes go logarithmic wherever the values span more than two decades.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from leaderboard.claims import Claim, ClaimValues, abs_correlation

HEIGHT = 340
SEED_COLOR = "rgba(100,100,100,0.45)"


def spans_decades(values, decades: float = 2.0) -> bool:
    """Positive values whose largest is more than 10^decades times their smallest."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return len(v) > 1 and bool((v > 0).all()) and float(np.log10(v.max() / v.min())) > decades


def _layout(figure: go.Figure, x_title: str, y_title: str, log_x: bool = False, log_y: bool = False) -> go.Figure:
    figure.update_layout(height=HEIGHT, margin=dict(t=30, b=10, l=10, r=10), xaxis_title=x_title,
                         yaxis_title=y_title, legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0),
                         xaxis_type="log" if log_x else None, yaxis_type="log" if log_y else None)
    return figure


def rate_figure(claim: Claim, data: ClaimValues, seed_curves: list[tuple[np.ndarray, np.ndarray]] = ()) -> go.Figure:
    """log y against log x (or x itself, semilog): the seeds, the least-squares slope the verdict reads, and the
    expected band."""
    figure = go.Figure()
    if claim.curve:
        steps, values = seed_curves[0] if seed_curves else (np.array([]), np.empty((0, 0)))
        for i, row in enumerate(values):
            figure.add_trace(go.Scatter(x=steps, y=row, mode="lines", line=dict(color=SEED_COLOR, width=1),
                                        name="seeds", legendgroup="seeds", showlegend=i == 0))
        x_all, y_all = steps.astype(float), values.mean(axis=0) if len(values) else np.array([])
        figure.add_trace(go.Scatter(x=x_all, y=y_all, mode="lines", name="mean over seeds", line=dict(width=2)))
        lo, hi = claim.x_range or (float("-inf"), float("inf"))
        inside = (x_all >= lo) & (x_all <= hi)
        x, y = x_all[inside], y_all[inside] if len(y_all) else y_all
        if claim.x_range and len(x_all):
            figure.add_vrect(x0=max(lo, x_all.min()), x1=min(hi, x_all.max()), fillcolor="lightblue", opacity=0.2,
                             line_width=0, annotation_text="fit window", annotation_position="top left")
        x_title, y_title = "step", claim.curve
    else:
        xs, ys = data.x if data.x is not None else np.empty_like(data.values), data.values
        figure.add_trace(go.Scatter(x=xs.ravel(), y=ys.ravel(), mode="markers", name="seeds",
                                    marker=dict(color=SEED_COLOR, size=7)))
        x, y = np.nanmean(xs, axis=1), np.nanmean(ys, axis=1)
        figure.add_trace(go.Scatter(x=x, y=y, mode="markers+text", name="mean per setting", text=list(data.labels),
                                    textposition="top center", textfont=dict(size=9), marker=dict(size=10)))
        x_title, y_title = claim.x_metric, claim.metric
    semilog = claim.axis == "semilog"
    to_fit, from_fit = (np.asarray, np.asarray) if semilog else (np.log, np.exp)  # x as the fit reads it, and back
    ok = np.isfinite(x) & np.isfinite(y) & (y > 0) & (semilog or (x > 0))
    if ok.sum() >= 2:
        lx, ly = to_fit(x[ok]), np.log(y[ok])
        slope, intercept = np.polyfit(lx, ly, 1)
        grid = np.linspace(lx.min(), lx.max(), 20)
        target, tol = float(claim.expect["slope"]), float(claim.expect.get("tolerance", 0.1))
        centre_x, centre_y = lx.mean(), ly.mean()  # the band is drawn through the fit's centre
        upper = np.exp(centre_y + (target + tol) * (grid - centre_x))
        lower = np.exp(centre_y + (target - tol) * (grid - centre_x))
        figure.add_trace(go.Scatter(x=from_fit(np.r_[grid, grid[::-1]]), y=np.r_[upper, lower[::-1]], fill="toself",
                                    fillcolor="rgba(46,125,50,0.15)", line=dict(width=0),
                                    name=f"expected slope {target:g} ± {tol:g}"))
        figure.add_trace(go.Scatter(x=from_fit(grid), y=np.exp(intercept + slope * grid), mode="lines",
                                    line=dict(color="black", dash="dash"), name=f"fitted slope {slope:.3f}"))
    return _layout(figure, x_title, y_title, log_x=not semilog, log_y=True)


def ordering_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """Per seed, each adjacent pair's gap in the claimed direction (positive: as claimed)."""
    order = claim.expect.get("order", "increasing")
    sign = 1.0 if order == "increasing" else -1.0
    figure = go.Figure()
    seeds = np.arange(data.values.shape[1])
    pairs = zip(data.labels, data.labels[1:], strict=False)  # adjacent groups
    for a, b, (la, lb) in zip(data.values, data.values[1:], pairs, strict=False):
        figure.add_trace(go.Bar(x=seeds, y=sign * (b - a), name=f"{lb} vs {la}"))
    figure.add_hline(y=0, line_color="black")
    if claim.expect.get("min_gap"):
        figure.add_hline(y=float(claim.expect["min_gap"]), line_dash="dot", annotation_text="min gap")
    figure.update_xaxes(tickmode="array", tickvals=seeds)
    return _layout(figure, "seed", f"gap in {claim.metric} (claimed direction)")


def value_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """Every seed's value, the mean, and the paper's value with its tolerance band."""
    row = data.values[0]
    figure = go.Figure(go.Scatter(x=np.arange(len(row)), y=row, mode="markers", name="ours, per seed",
                                  marker=dict(size=9)))
    target, tol = float(claim.paper_value), claim.expect
    if "factor" in tol:
        low, high = target / float(tol["factor"]), target * float(tol["factor"])
    elif "rtol" in tol:
        low, high = target - float(tol["rtol"]) * abs(target), target + float(tol["rtol"]) * abs(target)
    else:
        low, high = target - float(tol.get("atol", 0.0)), target + float(tol.get("atol", 0.0))
    figure.add_hrect(y0=low, y1=high, fillcolor="rgba(46,125,50,0.15)", line_width=0)
    figure.add_hline(y=target, line_color="black", annotation_text="paper")
    if np.isfinite(row).any():
        figure.add_hline(y=float(np.nanmean(row)), line_dash="dash", line_color="#1f77b4", annotation_text="ours")
    return _layout(figure, "seed", claim.metric, log_y=spans_decades([*row, low, high]) and low > 0)


def bound_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """Every seed's value per group, with the bound(s) the means must respect."""
    figure = go.Figure()
    for label, row in zip(data.labels, data.values, strict=True):
        figure.add_trace(go.Box(y=row, name=label, boxpoints="all", jitter=0.3, pointpos=0))
    for key in ("min", "max"):
        if key in claim.expect:
            figure.add_hline(y=float(claim.expect[key]), line_dash="dot", annotation_text=key)
    bounds = [float(claim.expect[k]) for k in ("min", "max") if k in claim.expect]
    figure.update_layout(showlegend=False)
    return _layout(figure, "", claim.metric, log_y=spans_decades([*data.values.ravel(), *bounds]))


def tracking_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """The tracked metric against the claimed tracker and the metric it must beat, each standardised over the runs
    (z-score), one point per run: the tighter line is the better tracker; the legend gives each |r|."""
    figure = go.Figure()
    y = data.values.ravel()
    for name, x, colour in ((claim.x_metric, data.x, "#1f77b4"), (claim.expect["against"], data.against, "#ff7f0e")):
        x = np.asarray(x, dtype=float).ravel() if x is not None else np.full_like(y, np.nan)
        keep = np.isfinite(x) & np.isfinite(y)
        r = abs_correlation(x[keep], y[keep])
        if not np.isfinite(r):
            continue
        z = (x[keep] - x[keep].mean()) / x[keep].std()
        figure.add_trace(go.Scatter(x=z, y=y[keep], mode="markers", name=f"{name} (|r| {r:.2f})",
                                    marker=dict(color=colour)))
    return _layout(figure, "predictor, standardised over the runs", claim.metric)


def claim_figure(claim: Claim, data: ClaimValues,
                 seed_curves: list[tuple[np.ndarray, np.ndarray]] = ()) -> go.Figure | None:
    """The claim's figure, or None when nothing of it is stored."""
    if not np.isfinite(data.values).any() and not (claim.curve and seed_curves and len(seed_curves[0][0])):
        return None
    if claim.kind == "rate":
        return rate_figure(claim, data, seed_curves)
    if claim.kind == "tracking":
        return tracking_figure(claim, data)
    if claim.kind == "ordering" and len(data.labels) > 1:
        return ordering_figure(claim, data)
    if claim.kind == "value" and claim.paper_value is not None:
        return value_figure(claim, data)
    return bound_figure(claim, data)
