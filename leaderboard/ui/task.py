"""A task's page: per instance, comparison group and primary metric, the methods ranked with 95 % CIs (the metric's
description and unit in the title), and one group's plot, chosen on the page, with the papers' values as markers.
Only like is ranked with like: each task config and each value of the settings the family's methods share (a horizon
T) is its own table (queries.leaderboard_rows); fewer than two seeds are shown but not ranked, methods whose CIs
overlap are tied and share a rank, low-seed settings are marked, reference methods are labelled and never ranked,
fidelity is marked, and a stored run whose method or task is no longer registered is shown with a note, never an
error."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import streamlit as st

from bench.errors import BenchError
from leaderboard import claims as claims_lib
from leaderboard import queries
from leaderboard.cards import fmt_significant
from leaderboard.claims.parsed import read_yaml_naming
from leaderboard.export import place
from leaderboard.plots import spans_decades
from leaderboard.ui.common import (
    TTL_S,
    choice,
    files_now,
    html_table,
    keep_in_url,
    link,
    registry,
    store,
)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _board(url: str, task: str, hardware: str | None, min_seeds: int, every_metric: bool = False) -> dict:
    """One table per task instance and metric: the family's primary metric, or every declared metric the runs
    stored (the in-house scores and, e.g., lm-evaluation-harness's `lm_eval_*` beside them)."""
    return queries.leaderboard_rows(store(url), registry(), task=task, hardware=hardware, min_seeds=min_seeds,
                                    metrics=["all"] if every_metric else None)


@st.cache_data(show_spinner=False)
def _fidelity(files: str, wanted: tuple[str, ...]) -> dict[str, str]:
    """The `wanted` methods' fidelity as the claims files record it (the first paper that lists it; others may come
    along): read from each file's `methods:` alone, not the validated claims (which took a second for the nineteen
    files), and only from the files that can name one of them (a file is parsed once, with the papers' values)."""
    import yaml

    found: dict[str, str] = {}
    for slug in registry().papers():
        try:
            data = read_yaml_naming(registry().paper_path(slug), wanted, encoding="utf-8")
            if data is None:
                continue  # lists none of them
            methods = dict(data.get("methods") or {})
        except (BenchError, OSError, yaml.YAMLError, AttributeError, TypeError, ValueError):
            continue  # a broken claims file is reported on the paper's page
        for method, info in methods.items():
            found.setdefault(str(method), str((info or {}).get("fidelity", "")) if isinstance(info, dict) else "")
    return found


@st.cache_data(show_spinner=False)
def _markers(task: str, files: str) -> list[claims_lib.Marker]:
    """The papers' values on `task`, read once per state of the claims files (every claims file is read)."""
    return claims_lib.paper_markers(registry(), task)


def ranked(rows: list[queries.BoardRow]) -> list[dict]:
    """The table rows of one comparison group (best first): a rank for methods with ≥ 2 seeds (reference methods and
    single seeds are not ranked), one shared rank "=k" for methods whose 95 % CIs overlap that of the rank's first,
    and notes for low-seed settings and methods no longer registered."""
    out = []
    fidelity = _fidelity(files_now(), tuple(sorted({r.method for r in rows})))
    for r in queries.rank_rows(rows):
        notes = []
        if r.reference:
            notes.append(f"reference: {r.reference}")
        elif r.n < 2:
            notes.append("1 seed: not ranked")
        elif r.tied:
            notes.append(f"tied at #{r.rank} (95 % CIs overlap)")
        if r.low_seeds and r.n >= 2:
            notes.append(f"low seeds ({r.n} of {max(r.most_seeds, queries.MIN_SEEDS)})")
        if not r.registered:
            notes.append("method no longer registered (its file is gone): shown, not checked")
        mark = fidelity.get(r.method, "")
        # the numbers right after the method: on a narrow screen they are in view before the table scrolls
        out.append({"rank": place(r), "method": r.method + ("" if mark in ("", "faithful") else f" [{mark}]"),
                    "mean": fmt_significant(r.mean),
                    "95 % CI": f"[{fmt_significant(r.ci_low)}, {fmt_significant(r.ci_high)}]", "n": r.n,
                    "config": r.config_label, "std": fmt_significant(r.std), "note": "; ".join(notes),
                    "hardware": r.hardware})
    return out


def _figure(rows: list[queries.BoardRow], markers: list[claims_lib.Marker]) -> go.Figure:
    """Our means with their 95 % CIs as bars, the papers' values as crosses: built in one go (plotly validates a
    figure built a trace at a time several times slower, and a task page draws one per comparison group)."""
    labels = [r.method + (f" ({r.config_label})" if r.config_label else "") for r in rows]
    colors = ["#9e9e9e" if r.reference or r.n < 2 else "#1f77b4" for r in rows]
    traces = [go.Bar(
        x=labels, y=[r.mean for r in rows], name="ours (mean over seeds, 95 % CI)", marker_color=colors,
        error_y=dict(type="data", symmetric=False, array=[r.ci_high - r.mean for r in rows],
                     arrayminus=[r.mean - r.ci_low for r in rows]))]
    hits = [(label, m) for label, r in zip(labels, rows, strict=True) for m in markers
            if m.method == r.method and m.method_label == r.config_label and m.metric == r.metric]
    if hits:
        traces.append(go.Scatter(x=[h[0] for h in hits], y=[h[1].value for h in hits], mode="markers",
                                 marker=dict(symbol="x", size=12, color="black"), name="paper's value",
                                 text=[f"{h[1].paper}: {h[1].claim}" + (" (approx.)" if h[1].approximate else "")
                                       for h in hits]))
    values = [r.mean for r in rows] + [h[1].value for h in hits]
    return go.Figure(data=traces, layout=dict(
        yaxis=dict(title=rows[0].metric, type="log" if spans_decades(values) else None), height=380,
        margin=dict(t=30, b=10, l=10, r=10), legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0)))


def _title(title: str, metric: str) -> str:
    return f"{title} — {metric}"


def _first_title(board: dict) -> str | None:
    return _title(*next(iter(board))) if board else None


def _plotted(board: dict) -> str | None:
    """The comparison group whose plot is drawn under its table: one, chosen here (the URL's `plot`, else the
    first). Every group's numbers are in its table; a browser took a second and a half to draw performative's 17
    plots at once, and hid none of it in collapsed expanders (their plots are drawn all the same)."""
    titles = [_title(title, metric) for title, metric in board]
    if len(titles) < 2:
        return titles[0] if titles else None
    wanted = st.query_params.get("plot")
    default = wanted if wanted in titles else titles[0]  # a group the filters no longer show: the first
    return st.selectbox("plot the group", titles, index=titles.index(default),
                        help="Each group's means with their 95 % CIs as bars and the papers' values as crosses, "
                             "drawn under its table.")


def _unregistered_task(url: str, task: str) -> None:
    """A stored task whose file is gone: a note, and where its runs still are."""
    st.warning(f"Task {task!r} has stored runs but is no longer registered (no tasks/*/{task}.py here), so its metrics "
               "cannot be ranked. Its runs are in the runs explorer.")
    st.markdown(link(f"runs of {task}", "runs", task=task), unsafe_allow_html=True)


def task_page(url: str) -> None:
    reg = registry()
    tasks, with_runs = reg.names("task"), queries.tasks_with_runs(store(url))
    gone = [t for t in with_runs if t not in tasks]
    if st.query_params.get("task") in gone:
        _unregistered_task(url, st.query_params["task"])
        return
    if gone:
        st.caption(f"Stored runs of tasks no longer registered (not ranked): {', '.join(gone)}.")
    task = choice("task", tasks, default=([t for t in with_runs if t in tasks] or tasks)[0])
    task = st.selectbox("task", tasks, index=tasks.index(task),
                        format_func=lambda t: t if t in with_runs else f"{t} (no runs)")
    kinds = queries.hardware_kinds(store(url))
    hardware = choice("hardware", ["any", *kinds], default="any")
    hardware = st.selectbox("hardware", ["any", *kinds], index=["any", *kinds].index(hardware))
    min_seeds = st.query_params.get("min_seeds", "1")
    min_seeds = st.slider("minimum seeds", 1, 50, int(min_seeds) if min_seeds.isdigit() and 1 <= int(min_seeds) <= 50
                          else 1)
    every_metric = st.toggle("every stored metric", value=st.query_params.get("metrics") == "all",
                             help="Off: the family's primary metric. On: every declared metric the runs stored.")
    shown = dict(task=task, hardware=None if hardware == "any" else hardware,
                 min_seeds=None if min_seeds == 1 else min_seeds, metrics="all" if every_metric else None)
    board = _board(url, task, None if hardware == "any" else hardware, min_seeds, every_metric)
    plotted = _plotted(board)
    keep_in_url("task", **shown, plot=None if plotted == _first_title(board) else plotted)
    if not board:
        st.info(f"No finished runs of {task} match these filters." + (
            f" Tasks with runs: {', '.join(with_runs)}." if with_runs else ""))
        return
    family = reg.declared_metrics(reg.listing("task", task).family)
    try:
        markers = _markers(task, files_now())
    except BenchError as exc:  # a claims file naming a method that is gone: the board still shows
        markers = []
        st.caption(f"The papers' values are not shown: {exc}")
    for (title, metric), rows in board.items():
        declared = family.metric(metric)
        what = f": {declared.description}" if declared and declared.description else ""
        unit = f" [{declared.unit}]" if declared and declared.unit else ""
        direction = "higher" if rows[0].higher_is_better else "lower"
        st.subheader(f"{_title(title, metric)}{unit} ({direction} is better)")
        if what:
            st.caption(what[2:])
        if any(r.low_seeds for r in rows):
            st.caption(f"Low-seed settings are marked: fewer than {queries.MIN_SEEDS} seeds, or fewer than the "
                       f"{rows[0].most_seeds} of this task instance's largest setting.")
        st.markdown(html_table(ranked(rows)), unsafe_allow_html=True)
        instance = [m for m in markers if json.dumps(m.task_config, sort_keys=True) == rows[0].task_config]
        if _title(title, metric) == plotted:
            st.plotly_chart(_figure(rows, instance), key=f"board-{title}-{metric}")
