"""The Streamlit leaderboard: a read-only view over the store. Start it with `bench leaderboard`.

Pages (sidebar, or the URL's `?view=`): overview (papers x verdict counts), task (methods ranked
with 95% CI error bars and the papers' values as markers), paper (claims, verdicts, the curves
they rest on, links to the runs), runs (explorer with provenance, tracebacks and CSV download).
Every number comes from leaderboard.queries / leaderboard.claims; this file only draws them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from bench.errors import BenchError
from bench.registry import Registry
from bench.store import Store, mask_url, resolve_url
from leaderboard import claims as claims_lib
from leaderboard import lock as lock_lib
from leaderboard import queries

VIEWS = ("overview", "task", "paper", "runs")
TTL_S = 10  # new runs appear within this many seconds (or at once with the refresh button)
REPORTS = Path(__file__).resolve().parent.parent / "docs" / "papers"  # our per-paper reports (a source checkout)
VERDICT_COLORS = {"reproduced": "#2e7d32", "partially": "#f9a825", "not reproduced": "#c62828",
                  "inconclusive": "#6a1b9a", "uninformative": "#ad1457", "insufficient seeds": "#6d4c41",
                  "not run": "#9e9e9e"}


def _db_url() -> str:
    """--db URL after `--` on the streamlit command line, else BENCH_DB_URL, else ./bench.db."""
    args = sys.argv[1:]
    if "--db" in args and args.index("--db") + 1 < len(args):
        return args[args.index("--db") + 1]
    return resolve_url(os.environ.get("BENCH_DB_URL"))


@st.cache_resource
def _registry() -> Registry:
    return Registry.discover()


@st.cache_resource
def _store(url: str) -> Store:
    return Store.open(url, readonly=True)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _overview(url: str) -> list[claims_lib.PaperOverview]:
    return claims_lib.overview(_store(url), _registry())


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _board(url: str, task: str, hardware: str | None, min_seeds: int) -> dict:
    return queries.leaderboard_rows(_store(url), _registry(), task=task, hardware=hardware, min_seeds=min_seeds)


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _verdicts(url: str, slug: str) -> tuple[list[claims_lib.Verdict], str]:
    """The paper's verdicts and their source: "store", or "reference" (the verdict lock, nothing stored yet)."""
    verdicts = claims_lib.evaluate_paper(claims_lib.load_paper(_registry(), slug), _store(url), _registry())
    return lock_lib.with_reference(verdicts, lock_lib.read_lock(slug))


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _runs(url: str, method: str | None, task: str | None, status: str | None, hardware: str | None) -> pd.DataFrame:
    rows = queries.runs_table(_store(url), method=method, task=task, status=status, hardware=hardware)
    return pd.DataFrame(rows, columns=[*queries.RUN_COLUMNS, "method_config", "task_config"])


def _link(view: str, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"view": view, **params}.items())
    return f"?{query}"


def overview_page(url: str) -> None:
    st.header("Papers and verdicts")
    rows = _overview(url)
    if not rows:
        st.info("No claims files registered (leaderboard/papers/*.yaml).")
        return
    st.caption("Claims counted per scale; sanity checks (true by construction) and positive controls are never "
               "counted. 'uninformative': the claim also holds on its negative control. 'shown' says whether the "
               "verdicts come from this store or from the verdict lock's reference run (nothing stored yet).")
    table = pd.DataFrame([{"paper": r.slug, "title": r.title, "scale": scale, **counts,
                           "checks": r.checks, "CPU s": r.cpu_s,
                           "shown": "reference run" if r.source == "reference" else "this store", "problem": ""}
                          for r in rows if not r.error for scale, counts in r.by_scale.items()]
                         + [{"paper": r.slug, "title": r.title, "problem": r.error} for r in rows if r.error])
    st.dataframe(table, hide_index=True)
    for r in rows:
        status = f"error: {r.error}" if r.error else ", ".join(f"{v} {k}" for k, v in r.counts.items() if v)
        shown = " (reference run)" if r.source == "reference" else ""
        st.markdown(f"- [{r.slug}]({_link('paper', paper=r.slug)}){shown}: {status}")
    if _store(url).count() == 0:
        st.info("No runs stored yet: the verdicts shown are the reference runs of the verdict locks "
                "(leaderboard/verdicts/). Run `bench reproduce <paper> --controls` to measure them here, then refresh.")


def _ci_figure(rows: list[queries.BoardRow], markers: list[claims_lib.Marker]) -> go.Figure:
    labels = [r.method + (f" ({r.config_label})" if r.config_label else "") for r in rows]
    figure = go.Figure(go.Bar(
        x=labels, y=[r.mean for r in rows], name="ours (mean over seeds)",
        error_y=dict(type="data", symmetric=False, array=[r.ci_high - r.mean for r in rows],
                     arrayminus=[r.mean - r.ci_low for r in rows])))
    hits = [(label, m) for label, r in zip(labels, rows) for m in markers
            if m.method == r.method and m.metric == r.metric]
    if hits:
        figure.add_trace(go.Scatter(x=[h[0] for h in hits], y=[h[1].value for h in hits], mode="markers",
                                    marker=dict(symbol="x", size=12, color="black"), name="paper's value",
                                    text=[f"{h[1].paper}: {h[1].claim}" + (" (approx.)" if h[1].approximate else "")
                                          for h in hits]))
    figure.update_layout(yaxis_title=rows[0].metric, height=380, margin=dict(t=30, b=10))
    return figure


def task_page(url: str, registry: Registry) -> None:
    tasks = registry.names("task")
    wanted = st.query_params.get("task")
    task = st.selectbox("task", tasks, index=tasks.index(wanted) if wanted in tasks else 0)
    kinds = queries.hardware_kinds(_store(url))
    hardware = st.selectbox("hardware", ["any", *kinds])
    min_seeds = st.slider("minimum seeds", 1, 50, 1)
    board = _board(url, task, None if hardware == "any" else hardware, min_seeds)
    if not board:
        st.info(f"No finished runs of {task} match these filters.")
        return
    markers = claims_lib.paper_markers(registry, task)
    for (title, metric), rows in board.items():
        direction = "higher" if rows[0].higher_is_better else "lower"
        st.subheader(f"{title} — {metric} ({direction} is better)")
        st.dataframe(pd.DataFrame([{"rank": i, "method": r.method, "config": r.config_label, "n": r.n,
                                    "mean": r.mean, "std": r.std, "ci_low": r.ci_low, "ci_high": r.ci_high,
                                    "ci": r.ci_method, "hardware": r.hardware} for i, r in enumerate(rows, 1)]),
                     hide_index=True)
        instance = [m for m in markers if json.dumps(m.task_config, sort_keys=True) == rows[0].task_config]
        st.plotly_chart(_ci_figure(rows, instance))


def _curve_figure(url: str, verdict: claims_lib.Verdict, registry: Registry) -> go.Figure | None:
    claim = verdict.claim
    figure = go.Figure()
    for group in claim.groups:
        keys = [c.run_key for c in claims_lib.group_cells(group, registry, claim.seeds)]
        steps, mean, _ = queries.mean_curve(_store(url), keys, claim.curve)
        if len(steps):
            figure.add_trace(go.Scatter(x=steps, y=mean, mode="lines", name=group.label()))
    if not figure.data:
        return None
    figure.update_layout(xaxis_type="log", yaxis_type="log", xaxis_title="step", yaxis_title=claim.curve,
                         height=320, margin=dict(t=30, b=10))
    return figure


def paper_page(url: str, registry: Registry) -> None:
    papers = registry.papers()
    wanted = st.query_params.get("paper")
    if wanted is not None and wanted not in papers:
        st.error(f"unknown paper {wanted!r}; known: {', '.join(papers)}")
        return
    slug = st.selectbox("paper", papers, index=papers.index(wanted) if wanted in papers else 0)
    try:
        paper = claims_lib.load_paper(registry, slug)
        verdicts, source = _verdicts(url, slug)
    except BenchError as exc:
        st.error(f"the claims file of {slug} cannot be used: {exc}")
        return
    st.header(paper.title)
    st.caption(f"{', '.join(paper.authors)} · {paper.venue} · arXiv {paper.arxiv} · code: {paper.code or 'not public'}")
    report = REPORTS / f"{slug}.md"
    if report.is_file():
        with st.expander(f"reproduction report (docs/papers/{slug}.md)"):
            st.markdown(report.read_text(encoding="utf-8"))
    if source == "reference":
        lock = lock_lib.read_lock(slug)
        st.info(f"Nothing of this paper is stored here: the CPU-scale verdicts shown are the {lock.label}. "
                f"Re-run them locally: `bench reproduce {slug} --scale cpu --controls`.")
    st.dataframe(pd.DataFrame([{"method": m, "fidelity": info.get("fidelity"), "deviations": info.get("deviations", "")}
                               for m, info in paper.methods.items()]), hide_index=True)
    st.dataframe(pd.DataFrame([{"claim": v.claim.id, "verdict": v.verdict, "kind": v.claim.kind_label,
                                "scale": v.claim.scale, "paper": v.paper_text, "ours": v.ours_text,
                                "negative control": v.control, "shown": v.source, "why": v.detail}
                               for v in verdicts]), hide_index=True)
    for v in verdicts:
        color = VERDICT_COLORS[v.verdict]
        with st.expander(f"{v.claim.id}: {v.verdict}"):
            st.markdown(f"**{v.claim.statement}**  \n<span style='color:{color}'>{v.verdict}</span> — {v.detail}",
                        unsafe_allow_html=True)
            st.caption(f"source: {v.claim.source}")
            if v.claim.curve:
                figure = _curve_figure(url, v, registry)
                if figure is not None:
                    st.plotly_chart(figure)
            for group in v.claim.groups:
                keys = [c.run_key for c in claims_lib.group_cells(group, registry, v.claim.seeds)]
                links = " ".join(f"[{k[:8]}]({_link('runs', run_key=k)})" for k in keys[:20])
                st.markdown(f"{group.label()}: {links}")


def runs_page(url: str, registry: Registry) -> None:
    any_ = "any"
    cols = st.columns(4)
    method = cols[0].selectbox("method", [any_, *registry.names("method")])
    task = cols[1].selectbox("task", [any_, *registry.names("task")])
    status = cols[2].selectbox("status", [any_, "done", "failed", "timeout", "skipped", "infeasible"])
    hardware = cols[3].selectbox("hardware", [any_, *queries.hardware_kinds(_store(url))])
    pick = lambda value: None if value == any_ else value  # noqa: E731
    frame = _runs(url, pick(method), pick(task), pick(status), pick(hardware))
    st.caption(f"{len(frame)} runs (newest first, at most 1000)")
    st.dataframe(frame.drop(columns=["method_config", "task_config"]), hide_index=True)
    st.download_button("download CSV", frame.to_csv(index=False), file_name="runs.csv", mime="text/csv")
    wanted = st.query_params.get("run_key")
    keys = list(frame["run_key"])
    if wanted and wanted not in keys:
        keys.insert(0, wanted)
    if not keys:
        return
    key = st.selectbox("run", keys, index=keys.index(wanted) if wanted in keys else 0)
    detail = queries.run_detail(_store(url), key)
    if detail is None:
        st.error(f"no run with key {key}")
        return
    run = detail["run"]
    st.subheader(f"{run['method']} × {run['task']} seed {run['seed']}: {run['status']}")
    st.json({"method_config": run["method_config"], "task_config": run["task_config"], "metrics": detail["metrics"]})
    if run["error"]:
        st.code(run["error"], language="text")
    if run.get("log"):
        with st.expander("log: library warnings and messages while it ran"):
            st.code(run["log"], language="text")
    if detail["environment"]:
        env = detail["environment"]
        st.json({k: (json.loads(v) if isinstance(v, str) and k == "packages" else v)
                 for k, v in env.items() if k not in ("id", "fingerprint")})


def main() -> None:
    st.set_page_config(page_title="ICML 2025 reproductions", layout="wide")
    url = _db_url()
    with st.sidebar:
        st.title("Reproductions")
        wanted = st.query_params.get("view", "overview")
        view = st.radio("view", VIEWS, index=VIEWS.index(wanted) if wanted in VIEWS else 0)
        if st.button("refresh"):
            st.cache_data.clear()
        st.caption(f"store: {mask_url(url)}")  # every viewer sees the sidebar: never the password
    try:
        _store(url)
    except BenchError as exc:
        st.error(str(exc))
        st.stop()
    registry = _registry()
    {"overview": lambda: overview_page(url), "task": lambda: task_page(url, registry),
     "paper": lambda: paper_page(url, registry), "runs": lambda: runs_page(url, registry)}[view]()


main()
