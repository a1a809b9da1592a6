"""A task's page: per instance and primary metric, the methods ranked with 95 % CIs (the metric's description and
unit in the title), the papers' values as markers; fewer than two seeds are shown but not ranked, overlapping CIs
are marked as ties, reference methods are labelled and never ranked, and fidelity is marked."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import streamlit as st

from bench.errors import BenchError
from leaderboard import claims as claims_lib
from leaderboard import queries
from leaderboard.cards import fmt_significant
from leaderboard.plots import spans_decades
from leaderboard.ui.common import TTL_S, choice, html_table, keep_in_url, registry, store


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _board(url: str, task: str, hardware: str | None, min_seeds: int) -> dict:
    return queries.leaderboard_rows(store(url), registry(), task=task, hardware=hardware, min_seeds=min_seeds)


@st.cache_data(show_spinner=False)
def _fidelity() -> dict[str, str]:
    """Each method's fidelity as the claims files record it (the first paper that lists it)."""
    found: dict[str, str] = {}
    for slug in registry().papers():
        try:
            paper = claims_lib.load_paper(registry(), slug)
        except BenchError:
            continue
        for method, info in paper.methods.items():
            found.setdefault(method, info.get("fidelity", ""))
    return found


def ranked(rows: list[queries.BoardRow], references: dict[str, str]) -> list[dict]:
    """The table rows: a rank for methods with ≥ 2 seeds (reference methods and single seeds are not ranked), and
    a tie mark where a method's 95 % CI overlaps the one ranked above it."""
    out, previous, rank = [], None, 0
    fidelity = _fidelity()
    for r in rows:
        note = ""
        if r.method in references:
            place, note = "ref.", f"reference: {references[r.method]}"
        elif r.n < 2:
            place, note = "—", "1 seed: not ranked"
        else:
            rank += 1
            place = str(rank)
            if previous is not None and r.ci_low <= previous.ci_high and previous.ci_low <= r.ci_high:
                note = f"tie with #{rank - 1} (95 % CIs overlap)"
            previous = r
        mark = fidelity.get(r.method, "")
        out.append({"rank": place, "method": r.method + ("" if mark in ("", "faithful") else f" [{mark}]"),
                    "config": r.config_label, "n": r.n, "mean": fmt_significant(r.mean),
                    "95 % CI": f"[{fmt_significant(r.ci_low)}, {fmt_significant(r.ci_high)}]",
                    "std": fmt_significant(r.std), "note": note, "hardware": r.hardware})
    return out


def _figure(rows: list[queries.BoardRow], markers: list[claims_lib.Marker], references: dict[str, str]) -> go.Figure:
    labels = [r.method + (f" ({r.config_label})" if r.config_label else "") for r in rows]
    colors = ["#9e9e9e" if r.method in references or r.n < 2 else "#1f77b4" for r in rows]
    figure = go.Figure(go.Bar(
        x=labels, y=[r.mean for r in rows], name="ours (mean over seeds, 95 % CI)", marker_color=colors,
        error_y=dict(type="data", symmetric=False, array=[r.ci_high - r.mean for r in rows],
                     arrayminus=[r.mean - r.ci_low for r in rows])))
    hits = [(label, m) for label, r in zip(labels, rows) for m in markers
            if m.method == r.method and m.method_label == r.config_label and m.metric == r.metric]
    if hits:
        figure.add_trace(go.Scatter(x=[h[0] for h in hits], y=[h[1].value for h in hits], mode="markers",
                                    marker=dict(symbol="x", size=12, color="black"), name="paper's value",
                                    text=[f"{h[1].paper}: {h[1].claim}" + (" (approx.)" if h[1].approximate else "")
                                          for h in hits]))
    values = [r.mean for r in rows] + [h[1].value for h in hits]
    figure.update_layout(yaxis_title=rows[0].metric, height=380, margin=dict(t=30, b=10, l=10, r=10),
                         yaxis_type="log" if spans_decades(values) else None,
                         legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0))
    return figure


def task_page(url: str) -> None:
    reg = registry()
    tasks, with_runs = reg.names("task"), queries.tasks_with_runs(store(url))
    task = choice("task", tasks, default=(with_runs or tasks)[0])
    task = st.selectbox("task", tasks, index=tasks.index(task),
                        format_func=lambda t: t if t in with_runs else f"{t} (no runs)")
    kinds = queries.hardware_kinds(store(url))
    hardware = choice("hardware", ["any", *kinds], default="any")
    hardware = st.selectbox("hardware", ["any", *kinds], index=["any", *kinds].index(hardware))
    min_seeds = st.query_params.get("min_seeds", "1")
    min_seeds = st.slider("minimum seeds", 1, 50, int(min_seeds) if min_seeds.isdigit() and 1 <= int(min_seeds) <= 50
                          else 1)
    keep_in_url("task", task=task, hardware=None if hardware == "any" else hardware,
                min_seeds=None if min_seeds == 1 else min_seeds)
    board = _board(url, task, None if hardware == "any" else hardware, min_seeds)
    if not board:
        st.info(f"No finished runs of {task} match these filters." + (
            f" Tasks with runs: {', '.join(with_runs)}." if with_runs else ""))
        return
    family = reg.declared_metrics(reg.listing("task", task).family)
    references = {m: reg.reference(m) for r in board.values() for m in {x.method for x in r} if reg.reference(m)}
    markers = claims_lib.paper_markers(reg, task)
    for (title, metric), rows in board.items():
        declared = family.metric(metric)
        what = f": {declared.description}" if declared and declared.description else ""
        unit = f" [{declared.unit}]" if declared and declared.unit else ""
        direction = "higher" if rows[0].higher_is_better else "lower"
        st.subheader(f"{title} — {metric}{unit} ({direction} is better)")
        if what:
            st.caption(what[2:])
        st.markdown(html_table(ranked(rows, references)), unsafe_allow_html=True)
        instance = [m for m in markers if json.dumps(m.task_config, sort_keys=True) == rows[0].task_config]
        st.plotly_chart(_figure(rows, instance, references), key=f"board-{title}-{metric}")
