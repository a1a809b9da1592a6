"""The overview: one row per paper, its claims as a stacked verdict bar per scale (CPU-measured, paper-scale),
totals above, sortable; names link to the paper's page in the same tab."""

from __future__ import annotations

import time

import streamlit as st

from leaderboard import claims as claims_lib
from leaderboard.cards import VERDICT_COLORS
from leaderboard.claims import CPU_SCALES, VERDICTS
from leaderboard.ui.common import TTL_S, keep_in_url, link, prefetched, registry, safe, store

SORTS = {"reproduced share": lambda r: (-_share(r), r.slug), "paper": lambda r: r.slug,
         "claims": lambda r: (-sum(r.counts.values()), r.slug), "CPU seconds": lambda r: -(r.cpu_s or 0.0)}


def _fresh_prefetch(url: str) -> list[claims_lib.PaperOverview] | None:
    """The launcher's rows for `url`, once, if no older than the cache's own TTL; else None."""
    started, rows = prefetched.pop(url, (None, None))
    return rows if started is not None and time.monotonic() - started < TTL_S else None


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _overview(url: str) -> list[claims_lib.PaperOverview]:
    rows = _fresh_prefetch(url)
    return rows if rows is not None else claims_lib.overview(store(url), registry())


def _cpu_counts(row: claims_lib.PaperOverview) -> dict[str, int]:
    counts = {v: 0 for v in VERDICTS}
    for scale in CPU_SCALES:
        for verdict, n in row.by_scale.get(scale, {}).items():
            counts[verdict] += n
    return counts


def _share(row: claims_lib.PaperOverview) -> float:
    counts = _cpu_counts(row)
    measured = sum(n for v, n in counts.items() if v != "not run")
    return counts["reproduced"] / measured if measured else -1.0


def verdict_bar(counts: dict[str, int]) -> str:
    """A stacked bar of verdict counts (HTML), with the counts in words beneath it."""
    total = sum(counts.values())
    if not total:
        return "<span class='meta'>none</span>"
    segments = "".join(f"<span style='background:{VERDICT_COLORS[v]};flex:{n}' title='{n} {v}'>{n}</span>"
                       for v, n in counts.items() if n)
    words = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return f"<div class='bar'>{segments}</div><div class='meta'>{words}</div>"


def totals(rows: list[claims_lib.PaperOverview]) -> str:
    cpu = {v: sum(_cpu_counts(r)[v] for r in rows) for v in VERDICTS}
    paper = {v: sum(r.by_scale.get("paper-scale", {}).get(v, 0) for r in rows) for v in VERDICTS}
    n_cpu, n_paper = sum(cpu.values()), sum(paper.values())
    return (f"**{len(rows)} papers, {n_cpu + n_paper} claims.** CPU-measured ({n_cpu}): "
            + ", ".join(f"{n} {v}" for v, n in cpu.items() if n)
            + f". Paper-scale ({n_paper}): " + (", ".join(f"{n} {v}" for v, n in paper.items() if n) or "none") + ".")


def overview_page(url: str) -> None:
    st.header("ICML 2025 papers: do their claims reproduce?")
    rows = _overview(url)
    if not rows:
        st.info("No claims files registered (leaderboard/papers/*.yaml).")
        return
    sort = st.selectbox("sort by", list(SORTS), index=list(SORTS).index(st.query_params.get("sort", "reproduced share"))
                        if st.query_params.get("sort") in SORTS else 0)
    keep_in_url("overview", sort=None if sort == "reproduced share" else sort)
    good = sorted((r for r in rows if not r.error), key=SORTS[sort])
    st.markdown(totals(good))
    if store(url).count() == 0 or any(r.source == "reference" for r in good):
        st.info("Papers marked *reference run* show their verdict lock (leaderboard/verdicts/<paper>.yaml): the "
                "reproduction we ran and pinned, nothing stored here. Measure them yourself with "
                "`bench reproduce <paper> --controls` (or `bench reproduce --all --controls --workers 2`), "
                "then refresh.")
    header = ("<tr><th>paper</th><th class='hide-narrow'>title</th><th>CPU-measured claims</th>"
              "<th class='hide-narrow'>paper-scale claims</th><th class='hide-narrow'>CPU s</th><th>shown</th></tr>")
    body = "".join(
        f"<tr><td>{link(r.slug, 'paper', paper=r.slug)}</td><td class='hide-narrow'>{safe(r.title)}</td>"
        f"<td>{verdict_bar(_cpu_counts(r))}</td>"
        f"<td class='hide-narrow'>{verdict_bar(r.by_scale.get('paper-scale', {}))}</td>"
        f"<td class='hide-narrow'>{'' if r.cpu_s is None else f'{r.cpu_s:,.0f}'}</td>"
        f"<td>{'reference run' if r.source == 'reference' else 'this store'}</td></tr>" for r in good)
    st.markdown(f"<table class='board'>{header}{body}</table>", unsafe_allow_html=True)
    st.caption("Claims only: positive controls (can the world show the effect?) and sanity checks (true by "
               "construction) are never counted. 'uninformative': the claim also holds on its negative control; "
               "'inconclusive': the world's positive control failed.")
    for r in rows:
        if r.error:
            st.error(f"{r.slug}: its claims file cannot be used: {r.error}")
