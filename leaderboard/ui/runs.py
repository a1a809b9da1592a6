"""The runs explorer: filters and a page of runs (short key, configs and metrics as columns, "N of M"), then one
run: its configs, metrics, curves, log, traceback and provenance."""

from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from leaderboard import queries
from leaderboard.ui.common import choice, keep_in_url, registry, store

PAGE = 100
STATUSES = ["done", "failed", "timeout", "skipped", "infeasible"]
MAX_METRIC_COLUMNS = 8


def runs_frame(url: str, rows: list[dict]) -> pd.DataFrame:
    """A page of runs as the explorer shows them: short key, configs as k=v labels, metrics as columns."""
    reg, metrics = registry(), store(url).metrics(r["run_key"] for r in rows)
    names = sorted({m for values in metrics.values() for m in values})[:MAX_METRIC_COLUMNS]
    frame = []
    for r in rows:
        method_config, task_config = (json.loads(r[k]) if isinstance(r[k], str) else r[k]
                                      for k in ("method_config", "task_config"))
        frame.append({"run": r["run_key"][:10], "method": r["method"], "task": r["task"], "seed": r["seed"],
                      "status": r["status"],
                      "method config": queries.config_label(method_config, queries.defaults_of(reg, "method",
                                                                                                r["method"])),
                      "task config": queries.config_label(task_config, queries.defaults_of(reg, "task", r["task"])),
                      **{m: metrics.get(r["run_key"], {}).get(m) for m in names},
                      "hardware": r["hardware"], "wall s": r["wall_s"], "finished": str(r["finished_at"] or "")[:19]})
    return pd.DataFrame(frame)


def _curves(url: str, key: str) -> go.Figure | None:
    names = queries.curve_names(store(url), [key])
    if not names:
        return None
    figure = go.Figure()
    for name in names:
        steps, values = queries.curves(store(url), [key], name)
        if len(steps):
            figure.add_trace(go.Scatter(x=steps, y=values[0], mode="lines", name=name))
    figure.update_layout(height=320, margin=dict(t=30, b=10, l=10, r=10), xaxis_title="step",
                         legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0))
    return figure


def _selected(url: str) -> str | None:
    """The URL's run_key: a full key or a prefix of 8 characters or more naming one run."""
    wanted = st.query_params.get("run_key")
    if not wanted:
        return None
    found = queries.find_run_keys(store(url), wanted, limit=2) if len(wanted) >= 8 else []
    if len(found) != 1:
        st.error(f"no run with key {wanted!r}" if not found else f"run key prefix {wanted!r} names several runs")
        return None
    return found[0]


def runs_page(url: str) -> None:
    reg, any_ = registry(), "any"
    cols = st.columns(4)
    filters = {}
    known = {kind: sorted({*reg.names(kind), *queries.stored_names(store(url), kind)})  # a name whose file is gone
             for kind in ("method", "task")}                                           # still has its runs here
    for col, (name, allowed) in zip(cols, (("method", known["method"]), ("task", known["task"]),
                                          ("status", STATUSES), ("hardware", queries.hardware_kinds(store(url)))),
                                     strict=True):
        options = [any_, *allowed]
        value = choice(name, options, default=any_)
        filters[name] = col.selectbox(name, options, index=options.index(value))
    picked = {k: None if v == any_ else v for k, v in filters.items()}
    total = queries.runs_count(store(url), **picked)
    pages = max(1, -(-total // PAGE))
    page = st.query_params.get("page", "1")
    page = int(page) if page.isdigit() and 1 <= int(page) <= pages else 1
    if pages > 1:
        page = st.number_input(f"page (of {pages})", 1, pages, page)
    key = _selected(url)
    keep_in_url("runs", **picked, page=None if page == 1 else page, run_key=key)
    rows = queries.runs_table(store(url), **picked, limit=PAGE, offset=(page - 1) * PAGE)
    first = (page - 1) * PAGE + 1 if rows else 0
    st.caption(f"runs {first}–{first + len(rows) - 1 if rows else 0} of {total} (newest first)")
    frame = runs_frame(url, rows)
    st.dataframe(frame, hide_index=True)
    st.download_button("download this page as CSV", frame.to_csv(index=False), file_name="runs.csv", mime="text/csv")
    keys = [r["run_key"] for r in rows]
    if key is None and not keys:
        return
    choices = keys if key in keys or key is None else [key, *keys]
    key = st.selectbox("run", choices, index=choices.index(key) if key else 0, format_func=lambda k: k[:16])
    detail = queries.run_detail(store(url), key)
    if detail is None:
        st.error(f"no run with key {key}")
        return
    run = detail["run"]
    st.subheader(f"{run['method']} × {run['task']} seed {run['seed']}: {run['status']}")
    st.caption(f"run_key {key}")
    st.json({"method_config": run["method_config"], "task_config": run["task_config"], "metrics": detail["metrics"]})
    figure = _curves(url, key)
    if figure is not None:
        st.plotly_chart(figure, key="run-curves")
    if run["error"]:
        st.code(run["error"], language="text")
    if run.get("log"):
        with st.expander("log: library warnings and messages while it ran"):
            st.code(run["log"], language="text")
    if detail["environment"]:
        env = detail["environment"]
        st.json({k: (json.loads(v) if isinstance(v, str) and k == "packages" else v)
                 for k, v in env.items() if k not in ("id", "fingerprint")})
