"""A paper's page, verdicts first: its title and a one-line count of its claims' verdicts, then one card per claim
(verdict chip, fragile and underpowered labels, statement, the paper's number beside ours with its 95 % interval,
the criterion, scale, fidelity, cost), each with its plot open and its reasons and runs a click away; then the
positive controls and the sanity checks; then the report and the methods' fidelity.

`&claim=<id>` links one claim: it is shown first, its reasons open, and stays in the URL."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from bench.errors import BenchError
from leaderboard import claims as claims_lib
from leaderboard import lock as lock_lib
from leaderboard import queries
from leaderboard.cards import Card, chip, fidelity_summary, locked_values, make_card, verdict_summary
from leaderboard.ui.common import TTL_S, choice, claims_file, href, keep_in_url, link, registry, safe, store

REPORTS = Path(__file__).resolve().parents[2] / "docs" / "papers"  # our per-paper reports (a source checkout)
SECTIONS = (("claim", "The paper's claims"), ("control", "Can this world show the effect? (positive controls)"),
            ("check", "Sanity checks (true by construction, never counted)"))
SCALE_FILTERS = ("all", "cpu", "paper")


@st.cache_data(ttl=TTL_S, show_spinner=False)
def _verdicts(url: str, slug: str) -> tuple[list[claims_lib.Verdict], str]:
    """The paper's verdicts and their source: "store", or "reference" (the verdict lock, nothing stored yet)."""
    verdicts = claims_lib.evaluate_paper(claims_file(slug), store(url), registry())
    return lock_lib.with_reference(verdicts, lock_lib.read_lock(slug))


def _cost(url: str, verdict: claims_lib.Verdict, lock: lock_lib.Lock | None) -> float | None:
    if verdict.source == "reference" and lock is not None and verdict.claim.id in lock.claims:
        return lock.claims[verdict.claim.id].cpu_s
    return lock_lib.runs_cost(store(url), lock_lib.claim_keys(verdict, registry()))[1]


def card_html(card: Card, slug: str, linked: bool = False) -> str:
    source = " · reference run" if card.source == "reference" else ""
    labels = "".join(f" <span class='badge label'>{safe(label)}</span>" for label in card.labels)
    anchor = link("link to this claim", "paper", paper=slug, claim=card.claim_id)
    rows = "".join(f"<tr><td>{safe(setting)}</td><td>{safe(paper)}</td><td>{safe(ours)}</td></tr>"
                   for setting, paper, ours in card.rows)
    return (f"<div class='card{' linked' if linked else ''}' id='claim-{safe(card.claim_id)}'>{chip(card.verdict)}"
            f"{labels} <b>{safe(card.claim_id)}</b> <span class='badge'>{safe(card.scale)}</span> "
            f"<span class='badge'>{safe(card.kind)}</span> <span class='meta'>{safe(card.cost)}{source} · "
            f"{anchor}</span><div>{safe(card.statement)}</div>"
            f"<div class='scroll'><table class='board'><tr><th>setting</th><th>paper</th>"
            f"<th>ours (mean ± 95 % CI)</th></tr>{rows}</table></div>"
            f"<div class='meta'>criterion: {safe(card.criterion)}</div>"
            + (f"<div class='meta'>evidence: {safe(card.evidence)}</div>" if card.evidence else "") +
            f"<div class='meta'>methods: {safe(card.fidelity)}</div></div>")


def _claim_data(url: str, verdict: claims_lib.Verdict) -> claims_lib.ClaimValues | None:
    """What the claim's plot draws: the stored runs' values, or the lock's per-seed values (a fresh checkout)."""
    if verdict.source == "reference":
        return locked_values(verdict)
    return claims_lib.claim_values(verdict.claim, store(url), registry())


def _draw(url: str, paper: claims_lib.Paper, verdict: claims_lib.Verdict, lock: lock_lib.Lock | None,
          linked: bool = False) -> None:
    """A claim's card, its plot (open), and its reasons and runs (folded, unless it is the linked claim)."""
    from leaderboard.plots import claim_figure  # plotly: only once a card is drawn

    claim = verdict.claim
    stored = None if verdict.source == "reference" else _claim_data(url, verdict)
    card = make_card(verdict, paper, stored, _cost(url, verdict, lock))
    st.markdown(card_html(card, paper.slug, linked), unsafe_allow_html=True)
    data = stored if stored is not None else _claim_data(url, verdict)
    if data is not None:
        seed_curves = [queries.curves(store(url), data.keys[0], claim.curve)] if claim.curve and data.keys[0] else []
        figure = claim_figure(claim, data, seed_curves)
        if figure is not None:
            st.plotly_chart(figure, key=f"plot-{claim.id}", config={"displayModeBar": False})
    with st.expander(f"{claim.id}: why, and its runs", expanded=linked):
        st.markdown(safe(verdict.detail), unsafe_allow_html=True)
        if claim.source:
            st.caption(f"source: {claim.source}")
        keys = data.keys if data is not None and verdict.source != "reference" else ()
        for group, group_keys in zip(claim.groups, keys, strict=False):
            links = " ".join(f"<a href='{href('runs', run_key=k)}' target='_self'>{k[:10]}</a>"
                             for k in group_keys[:20])
            st.markdown(f"{safe(group.label())}: {links or 'no finished runs'}", unsafe_allow_html=True)
        if verdict.source == "reference":
            st.caption("the reference run's per-run links: reproduce the paper into this store")


def _head(paper: claims_lib.Paper, verdicts: list[claims_lib.Verdict], source: str,
          lock: lock_lib.Lock | None) -> None:
    """Title, the verdicts counted in one line, and where they come from."""
    st.header(paper.title)
    st.markdown(f"<div class='summary'><b>{safe(verdict_summary(verdicts))}</b></div>", unsafe_allow_html=True)
    if source == "reference":
        st.caption(f"Nothing of this paper is stored here: the verdicts shown are the {lock.label}. Re-run them "
                   f"locally: `bench reproduce {paper.slug} --scale cpu --controls`.")


def _about(paper: claims_lib.Paper) -> None:
    """Authors, the fidelity to the authors' material, the report and the methods: after the verdicts."""
    slug = paper.slug
    st.subheader("About this reproduction")
    st.caption(f"{', '.join(paper.authors)} · {paper.venue} · arXiv {paper.arxiv} · code: {paper.code or 'not public'}")
    report = REPORTS / f"{slug}.md"
    summary = fidelity_summary(report.read_text(encoding="utf-8")) if report.is_file() else None
    st.caption(f"fidelity to the authors' material: {summary}" if summary else
               "fidelity to the authors' material: no public code or page compared yet")
    if report.is_file():
        with st.expander(f"reproduction report (docs/papers/{slug}.md)"):
            st.markdown(report.read_text(encoding="utf-8"))
    fidelities = ", ".join(f"{m} ({info.get('fidelity')})" for m, info in paper.methods.items())
    with st.expander(f"methods: {fidelities}"):
        rows = "".join(f"<tr><td>{safe(m)}</td><td>{safe(info.get('fidelity'))}</td>"
                       f"<td>{safe(info.get('deviations', ''))}</td></tr>" for m, info in paper.methods.items())
        st.markdown(f"<div class='scroll'><table class='board'><tr><th>method</th><th>fidelity</th>"
                    f"<th>deviations from the paper</th></tr>{rows}</table></div>", unsafe_allow_html=True)


def paper_page(url: str) -> None:
    papers = registry().papers()
    top = st.container()  # the title and the verdicts' count, drawn above the selectors once the paper is known
    asked = choice("paper", papers, default=papers[0])
    left, right = st.columns([2, 3])
    slug = left.selectbox("paper", papers, index=papers.index(asked))
    scale = choice("scale", list(SCALE_FILTERS), default="all")
    scale = right.radio("claims measured at", SCALE_FILTERS, index=SCALE_FILTERS.index(scale), horizontal=True,
                        format_func=lambda s: {"all": "every scale", "cpu": "CPU scale", "paper": "paper scale"}[s])
    try:
        paper = claims_file(slug)
        verdicts, source = _verdicts(url, slug)
    except BenchError as exc:
        keep_in_url("paper", paper=slug)
        st.error(f"the claims file of {slug} cannot be used: {exc}")
        return
    lock = lock_lib.read_lock(slug)
    linked = st.query_params.get("claim") if slug == asked else None  # another paper chosen: its own claims
    if linked is not None and linked not in {v.claim.id for v in verdicts}:
        st.warning(f"{slug} has no claim {linked!r}: showing all its claims")
        linked = None
    keep_in_url("paper", paper=slug, scale=None if scale == "all" else scale, claim=linked)
    with top:
        _head(paper, verdicts, source, lock)
    if linked is not None:
        st.subheader(f"Linked claim: {linked}")
        _draw(url, paper, next(v for v in verdicts if v.claim.id == linked), lock, linked=True)
    wanted = {"all": None, "cpu": claims_lib.CPU_SCALES, "paper": ("paper-scale",)}[scale]
    for role, title in SECTIONS:
        shown = [v for v in verdicts if v.claim.role == role and v.claim.id != linked
                 and (wanted is None or v.claim.scale in wanted)]
        if shown:
            st.subheader(title)
            for verdict in shown:
                _draw(url, paper, verdict, lock)
    _about(paper)
