"""A paper's page: its report, its methods' fidelity, then one card per positive control, claim and sanity check
(verdict chip, statement, the paper's value against ours with 95 % CIs, the criterion in words, scale, fidelity,
cost), each with its plot, its reasons and links to its runs."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from bench.errors import BenchError
from leaderboard import claims as claims_lib
from leaderboard import lock as lock_lib
from leaderboard import queries
from leaderboard.cards import Card, chip, fidelity_summary, make_card
from leaderboard.plots import claim_figure
from leaderboard.ui.common import TTL_S, choice, href, keep_in_url, registry, safe, store

REPORTS = Path(__file__).resolve().parents[2] / "docs" / "papers"  # our per-paper reports (a source checkout)
SECTIONS = (("control", "Can this world show the effect? (positive controls)"), ("claim", "The paper's claims"),
            ("check", "Sanity checks (true by construction, never counted)"))
SCALE_FILTERS = ("all", "cpu", "paper")


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _verdicts(url: str, slug: str) -> tuple[list[claims_lib.Verdict], str]:
    """The paper's verdicts and their source: "store", or "reference" (the verdict lock, nothing stored yet)."""
    verdicts = claims_lib.evaluate_paper(claims_lib.load_paper(registry(), slug), store(url), registry())
    return lock_lib.with_reference(verdicts, lock_lib.read_lock(slug))


def _cost(url: str, verdict: claims_lib.Verdict, lock: lock_lib.Lock | None) -> float | None:
    if verdict.source == "reference" and lock is not None and verdict.claim.id in lock.claims:
        return lock.claims[verdict.claim.id].cpu_s
    return lock_lib.runs_cost(store(url), lock_lib.claim_keys(verdict, registry()))[1]


def card_html(card: Card) -> str:
    ours = "<br>".join(safe(line) for line in card.ours)
    source = " · reference run" if card.source == "reference" else ""
    return (f"<div class='card'>{chip(card.verdict)} <b>{safe(card.claim_id)}</b> "
            f"<span class='badge'>{safe(card.scale)}</span> <span class='badge'>{safe(card.kind)}</span> "
            f"<span class='meta'>{safe(card.cost)}{source}</span>"
            f"<div>{safe(card.statement)}</div>"
            f"<div class='meta'>criterion: {safe(card.criterion)}</div>"
            + (f"<div class='meta'>evidence: {safe(card.evidence)}</div>" if card.evidence else "") +
            f"<table class='board'><tr><th>paper</th><th>ours (mean ± 95 % CI)</th></tr>"
            f"<tr><td>{safe(card.paper)}</td><td>{ours}</td></tr></table>"
            f"<div class='meta'>methods: {safe(card.fidelity)}</div></div>")


def _details(url: str, verdict: claims_lib.Verdict, data: claims_lib.ClaimValues | None) -> None:
    claim = verdict.claim
    with st.expander(f"{claim.id}: why, plot and runs"):
        st.markdown(safe(verdict.detail), unsafe_allow_html=True)
        if claim.source:
            st.caption(f"source: {claim.source}")
        if data is not None:
            seed_curves = [queries.curves(store(url), data.keys[0], claim.curve)] if claim.curve else []
            figure = claim_figure(claim, data, seed_curves)
            if figure is not None:
                st.plotly_chart(figure, key=f"plot-{claim.id}")
        for group, keys in zip(claim.groups, data.keys if data is not None else ()):
            links = " ".join(f"<a href='{href('runs', run_key=k)}' target='_self'>{k[:10]}</a>" for k in keys[:20])
            st.markdown(f"{safe(group.label())}: {links or 'no finished runs'}", unsafe_allow_html=True)


def paper_page(url: str) -> None:
    papers = registry().papers()
    slug = choice("paper", papers, default=papers[0])
    slug = st.selectbox("paper", papers, index=papers.index(slug))
    scale = choice("scale", list(SCALE_FILTERS), default="all")
    scale = st.radio("claims measured at", SCALE_FILTERS, index=SCALE_FILTERS.index(scale), horizontal=True,
                     format_func=lambda s: {"all": "every scale", "cpu": "CPU scale", "paper": "paper scale"}[s])
    keep_in_url("paper", paper=slug, scale=None if scale == "all" else scale)
    try:
        paper = claims_lib.load_paper(registry(), slug)
        verdicts, source = _verdicts(url, slug)
    except BenchError as exc:
        st.error(f"the claims file of {slug} cannot be used: {exc}")
        return
    st.header(paper.title)
    st.caption(f"{', '.join(paper.authors)} · {paper.venue} · arXiv {paper.arxiv} · code: {paper.code or 'not public'}")
    report = REPORTS / f"{slug}.md"
    summary = fidelity_summary(report.read_text(encoding="utf-8")) if report.is_file() else None
    st.caption(f"fidelity to the authors' material: {summary}" if summary else
               "fidelity to the authors' material: no public code or page compared yet")
    if report.is_file():
        with st.expander(f"reproduction report (docs/papers/{slug}.md)"):
            st.markdown(report.read_text(encoding="utf-8"))
    lock = lock_lib.read_lock(slug)
    if source == "reference":
        st.info(f"Nothing of this paper is stored here: the CPU-scale verdicts shown are the {lock.label}. "
                f"Re-run them locally: `bench reproduce {slug} --scale cpu --controls`.")
    fidelities = ", ".join(f"{m} ({info.get('fidelity')})" for m, info in paper.methods.items())
    with st.expander(f"methods: {fidelities}"):
        rows = "".join(f"<tr><td>{safe(m)}</td><td>{safe(info.get('fidelity'))}</td>"
                       f"<td>{safe(info.get('deviations', ''))}</td></tr>" for m, info in paper.methods.items())
        st.markdown(f"<table class='board'><tr><th>method</th><th>fidelity</th><th>deviations from the paper</th></tr>"
                    f"{rows}</table>", unsafe_allow_html=True)
    wanted = {"all": None, "cpu": claims_lib.CPU_SCALES, "paper": ("paper-scale",)}[scale]
    for role, title in SECTIONS:
        shown = [v for v in verdicts if v.claim.role == role and (wanted is None or v.claim.scale in wanted)]
        if not shown:
            continue
        st.subheader(title)
        for verdict in shown:
            data = None if verdict.source == "reference" else claims_lib.claim_values(verdict.claim, store(url),
                                                                                      registry())
            st.markdown(card_html(make_card(verdict, paper, data, _cost(url, verdict, lock))), unsafe_allow_html=True)
            _details(url, verdict, data)
