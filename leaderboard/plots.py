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


def _figure(traces: list, x_title: str, y_title: str, log_x: bool = False, log_y: bool = False,
            lines: tuple = (), rects: tuple = (), **layout) -> go.Figure:
    """The figure built in one go: plotly validates a figure built a piece at a time (add_trace, add_hline, ...)
    about five times slower, which a page of fifteen plots paid in full.

    rects: ((x0, x1) or None, (y0, y1) or None, fill colour, label) shaded between the two values on one axis and
    across the other (the first shapes); lines: (y, label, dash, colour) drawn across the plot. Labels sit at the
    right end of a line, at the top left of a band; on a log axis a label's position is the value's log10, as
    plotly reads it."""
    shapes, notes = [], []
    for xs, ys, fill, label in rects:
        shapes.append(dict(type="rect", xref="x" if xs else "paper", x0=xs[0] if xs else 0, x1=xs[1] if xs else 1,
                           yref="y" if ys else "paper", y0=ys[0] if ys else 0, y1=ys[1] if ys else 1,
                           fillcolor=fill, line=dict(width=0), layer="below"))
        if label:
            notes.append(dict(text=label, xref="x" if xs else "paper", x=_at(xs[0], log_x) if xs else 0,
                              xanchor="left", yref="paper", y=1, yanchor="top", showarrow=False))
    for y, label, dash, colour in lines:
        shapes.append(dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=y, y1=y,
                           line=dict(dash=dash, color=colour)))
        if label:
            notes.append(dict(text=label, xref="paper", x=1, xanchor="right", yref="y", y=_at(y, log_y),
                              yanchor="bottom", showarrow=False))
    return go.Figure(data=traces, layout=dict(
        height=HEIGHT, margin=dict(t=30, b=10, l=10, r=10), xaxis=dict(title=x_title, type="log" if log_x else None),
        yaxis=dict(title=y_title, type="log" if log_y else None), shapes=shapes, annotations=notes,
        legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0), **layout))


def _at(value: float, log: bool) -> float:
    return float(np.log10(value)) if log and value > 0 else float(value)


def rate_figure(claim: Claim, data: ClaimValues, seed_curves: list[tuple[np.ndarray, np.ndarray]] = ()) -> go.Figure:
    """log y against log x (or x itself, semilog): the seeds, the least-squares slope the verdict reads, and the
    expected band."""
    semilog = claim.axis == "semilog"
    traces, rects = [], []
    if claim.curve:
        steps, values = seed_curves[0] if seed_curves else (np.array([]), np.empty((0, 0)))
        traces += [go.Scatter(x=steps, y=row, mode="lines", line=dict(color=SEED_COLOR, width=1), name="seeds",
                              legendgroup="seeds", showlegend=i == 0) for i, row in enumerate(values)]
        x_all, y_all = steps.astype(float), values.mean(axis=0) if len(values) else np.array([])
        traces.append(go.Scatter(x=x_all, y=y_all, mode="lines", name="mean over seeds", line=dict(width=2)))
        lo, hi = claim.x_range or (float("-inf"), float("inf"))
        inside = (x_all >= lo) & (x_all <= hi)
        x, y = x_all[inside], y_all[inside] if len(y_all) else y_all
        if claim.x_range and len(x_all):
            rects.append(((max(lo, x_all.min()), min(hi, x_all.max())), None, "rgba(173,216,230,0.2)", "fit window"))
        x_title, y_title = "step", claim.curve
    else:
        xs, ys = data.x if data.x is not None else np.empty_like(data.values), data.values
        traces.append(go.Scatter(x=xs.ravel(), y=ys.ravel(), mode="markers", name="seeds",
                                 marker=dict(color=SEED_COLOR, size=7)))
        x, y = np.nanmean(xs, axis=1), np.nanmean(ys, axis=1)
        traces.append(go.Scatter(x=x, y=y, mode="markers+text", name="mean per setting", text=list(data.labels),
                                 textposition="top center", textfont=dict(size=9), marker=dict(size=10)))
        x_title, y_title = claim.x_metric, claim.metric
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
        traces.append(go.Scatter(x=from_fit(np.r_[grid, grid[::-1]]), y=np.r_[upper, lower[::-1]], fill="toself",
                                 fillcolor="rgba(46,125,50,0.15)", line=dict(width=0),
                                 name=f"expected slope {target:g} ± {tol:g}"))
        traces.append(go.Scatter(x=from_fit(grid), y=np.exp(intercept + slope * grid), mode="lines",
                                 line=dict(color="black", dash="dash"), name=f"fitted slope {slope:.3f}"))
    return _figure(traces, x_title, y_title, log_x=not semilog, log_y=True, rects=tuple(rects))


def ordering_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """Per seed, each adjacent pair's gap in the claimed direction (positive: as claimed)."""
    order = claim.expect.get("order", "increasing")
    sign = 1.0 if order == "increasing" else -1.0
    seeds = np.arange(data.values.shape[1])
    pairs = zip(data.labels, data.labels[1:], strict=False)  # adjacent groups
    traces = [go.Bar(x=seeds, y=sign * (b - a), name=f"{lb} vs {la}")
              for a, b, (la, lb) in zip(data.values, data.values[1:], pairs, strict=False)]
    lines = [(0.0, "", None, "black")]
    if claim.expect.get("min_gap"):
        lines.append((float(claim.expect["min_gap"]), "min gap", "dot", None))
    figure = _figure(traces, "seed", f"gap in {claim.metric} (claimed direction)", lines=tuple(lines))
    figure.layout.xaxis.update(tickmode="array", tickvals=seeds)
    return figure


def value_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """Every seed's value, the mean, and the paper's value with its tolerance band."""
    row = data.values[0]
    target, tol = float(claim.paper_value), claim.expect
    if "factor" in tol:
        low, high = target / float(tol["factor"]), target * float(tol["factor"])
    elif "rtol" in tol:
        low, high = target - float(tol["rtol"]) * abs(target), target + float(tol["rtol"]) * abs(target)
    else:
        low, high = target - float(tol.get("atol", 0.0)), target + float(tol.get("atol", 0.0))
    lines = [(target, "paper", None, "black")]
    if np.isfinite(row).any():
        lines.append((float(np.nanmean(row)), "ours", "dash", "#1f77b4"))
    traces = [go.Scatter(x=np.arange(len(row)), y=row, mode="markers", name="ours, per seed", marker=dict(size=9))]
    return _figure(traces, "seed", claim.metric, log_y=spans_decades([*row, low, high]) and low > 0,
                   lines=tuple(lines), rects=((None, (low, high), "rgba(46,125,50,0.15)", ""),))


def bound_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """Every seed's value per group, with the bound(s) the means must respect."""
    traces = [go.Box(y=row, name=label, boxpoints="all", jitter=0.3, pointpos=0)
              for label, row in zip(data.labels, data.values, strict=True)]
    lines = tuple((float(claim.expect[key]), key, "dot", None) for key in ("min", "max") if key in claim.expect)
    bounds = [line[0] for line in lines]
    return _figure(traces, "", claim.metric, log_y=spans_decades([*data.values.ravel(), *bounds]), lines=lines,
                   showlegend=False)


def tracking_figure(claim: Claim, data: ClaimValues) -> go.Figure:
    """The tracked metric against the claimed tracker and the metric it must beat, each standardised over the runs
    (z-score), one point per run: the tighter line is the better tracker; the legend gives each |r|."""
    traces = []
    y = data.values.ravel()
    for name, x, colour in ((claim.x_metric, data.x, "#1f77b4"), (claim.expect["against"], data.against, "#ff7f0e")):
        x = np.asarray(x, dtype=float).ravel() if x is not None else np.full_like(y, np.nan)
        keep = np.isfinite(x) & np.isfinite(y)
        r = abs_correlation(x[keep], y[keep])
        if not np.isfinite(r):
            continue
        z = (x[keep] - x[keep].mean()) / x[keep].std()
        traces.append(go.Scatter(x=z, y=y[keep], mode="markers", name=f"{name} (|r| {r:.2f})",
                                 marker=dict(color=colour)))
    return _figure(traces, "predictor, standardised over the runs", claim.metric)


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
