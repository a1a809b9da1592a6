"""A claim as the leaderboard shows it: one card with its verdict, the paper's value against ours (mean ± 95 % CI,
to the precision the claim's tolerance asks for), its criterion in words, its scale, the fidelity of the methods
it runs and its cost. Pure: no Streamlit here, so the cards are tested like any other function.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import numpy as np

from leaderboard.claims import (
    CPU_SCALES,
    VERDICTS,
    Claim,
    ClaimValues,
    Paper,
    Verdict,
    claims_only,
    count_verdicts,
    seeds_holding,
)
from leaderboard.queries import summarize

VERDICT_COLORS = {"reproduced": "#2e7d32", "partially": "#f9a825", "not reproduced": "#c62828",
                  "underpowered": "#ef6c00", "inconclusive": "#6a1b9a", "uninformative": "#ad1457",
                  "no-harm holds": "#00838f", "no-harm fails": "#c62828", "insufficient seeds": "#6d4c41",
                  "not run": "#9e9e9e"}
SIGNIFICANT = 3  # figures shown where the claim's tolerance does not ask for more


def decimals_for(step: float) -> int:
    """Decimals that resolve `step` one digit further (atol 1e-4 -> 5: 2.30259 against 2.3 is checkable)."""
    return max(0, math.ceil(-math.log10(abs(step))) + 1) if step else 0


def formatter(claim: Claim):
    """The number format of a claim's values: its tolerance's resolution (atol, min_gap) in decimals, a relative
    tolerance's in significant figures, 3 significant figures otherwise."""
    expect = claim.expect
    step = expect.get("atol") or (expect.get("tolerance") or {}).get("atol") if claim.kind != "rate" else None
    if claim.kind == "ordering" and expect.get("min_gap"):
        step = abs(float(expect["min_gap"]))
    if step:
        places = decimals_for(float(step))
        return lambda x: f"{x:.{places}f}" if math.isfinite(x) else "n/a"
    rtol = expect.get("rtol")
    figures = max(SIGNIFICANT, math.ceil(-math.log10(rtol)) + 2) if rtol else SIGNIFICANT
    return lambda x: fmt_significant(x, figures)


def fmt_significant(x: float, figures: int = SIGNIFICANT) -> str:
    """`figures` significant figures, never scientific notation between 1e-4 and 1e6."""
    if not math.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    if 1e-4 <= abs(x) < 1e6:
        places = max(0, figures - 1 - math.floor(math.log10(abs(x))))
        return f"{round(x, places):.{places}f}"
    return f"{x:.{figures - 1}e}"


def mean_ci(values: np.ndarray, fmt) -> str:
    """'mean ± half-width (n = k)' over the finite seeds; a bootstrap or single seed says so."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return "n/a"
    s = summarize(finite)
    if s.n == 1:
        return f"{fmt(s.mean)} (1 seed)"
    half = max(s.mean - s.ci_low, s.ci_high - s.mean)
    how = "" if s.ci_method == "t" else f", {s.ci_method}"
    return f"{fmt(s.mean)} ± {fmt(half)} (n = {s.n}{how})"


def _relation(order: str) -> str:
    return " < " if order == "increasing" else " > "


def _tolerance_words(tol: dict, fmt) -> str:
    if "factor" in tol:
        return f"within a factor {tol['factor']:g}"
    if "rtol" in tol:
        return f"within {float(tol['rtol']):.0%}"
    return f"within ± {fmt(float(tol.get('atol', 0.0)))}"


def holding(claim: Claim, values: np.ndarray) -> list[int]:
    """Per adjacent pair of groups, the seeds in which the claimed order holds, as the verdict counts them."""
    expect = claim.expect
    return seeds_holding(values, expect.get("order", "increasing"), float(expect.get("slack", 0.0)),
                         expect.get("min_gap"))


def criterion_words(claim: Claim, data: ClaimValues | None, verdict: Verdict, fmt) -> str:
    """What the claim asks, in words, with what we measured against it."""
    expect, labels = claim.expect, [g.label() for g in claim.groups]
    if claim.kind == "value":
        tol = _tolerance_words(expect, fmt)
        ours = f" (ours {fmt(verdict.ours[0])})" if verdict.ours else ""
        return f"{claim.metric} {tol} of the paper's {fmt(claim.paper_value)}{ours}"
    if claim.kind == "bound":
        parts = [f"≥ {fmt(expect['min'])}" if "min" in expect else "",
                 f"≤ {fmt(expect['max'])}" if "max" in expect else ""]
        which = "every group's mean" if len(labels) > 1 else "the mean"
        return f"{claim.metric}: {which} {' and '.join(filter(None, parts))}"
    if claim.kind == "tracking":
        models = f" ({verdict.ours_text})" if verdict.ours_text else ""
        return (f"across the {len(labels)} settings' runs, each run a model: |corr({claim.x_metric}, {claim.metric})| "
                f"beats |corr({expect['against']}, {claim.metric})| by ≥ {float(expect['min_advantage']):g}{models}")
    if claim.kind == "rate":
        window = "" if not claim.x_range else f" over [{claim.x_range[0]:g}, {claim.x_range[1]:g}]"
        over = (f"{claim.curve} against step{window}" if claim.curve
                else f"{claim.metric} against {claim.x_metric} across {len(labels)} settings")
        ours = f", ours {verdict.ours[0]:.3f}" if verdict.ours else ""
        return f"log-log slope of {over}: {expect['slope']:g} ± {expect.get('tolerance', 0.1):g}{ours}"
    order = expect.get("order", "increasing")
    words = f"{claim.metric}: {_relation(order).join(labels)}"
    if "min_ratio" in expect:
        words += f", each by ≥ {expect['min_ratio']:g}×"
    elif expect.get("min_gap"):
        gap = float(expect["min_gap"])
        words += f", each by ≥ {fmt(gap)}" if gap > 0 else f", none worse by more than {fmt(-gap)}"
    elif expect.get("slack"):
        words += f", with {float(expect['slack']):.0%} slack"
    if data is not None and data.values.shape[1] > 1 and np.isfinite(data.values).any():
        counts = holding(claim, data.values)
        seeds = data.values.shape[1]
        words += f"; holds in {min(counts)} of {seeds} seeds" + (" (weakest pair)" if len(counts) > 1 else "")
        if "seeds_holding" in expect:
            words += f", {expect['seeds_holding']} needed"
    return words


@dataclass(frozen=True)
class Card:
    claim_id: str
    role: str            # claim, control, check
    verdict: str
    color: str
    statement: str       # as written: the page makes it safe to render
    scale: str
    kind: str
    paper: str
    ours: list[str]      # one line per group: "label: mean ± CI"
    criterion: str
    evidence: str        # the interval the verdict rests on, its p and Holm-adjusted p, seeds an undecided one needs
    detail: str
    fidelity: str
    cost: str
    source: str
    rows: list[tuple[str, str, str]] = ()  # per group (or the one fitted number): (setting, the paper's, ours ± CI)
    labels: tuple[str, ...] = ()           # "fragile", "needs 60 seeds": what qualifies the verdict


def fidelity_of(claim: Claim, paper: Paper) -> str:
    """The fidelity of the methods the claim runs, as the claims file records them ('control' for ours)."""
    labels = []
    for method in dict.fromkeys(g.method for g in claim.groups):
        info = paper.methods.get(method)
        labels.append(f"{method}: {info.get('fidelity', '?')}" if info else f"{method}: not a paper's method")
    return ", ".join(labels)


def make_card(verdict: Verdict, paper: Paper, data: ClaimValues | None, cpu_s: float | None) -> Card:
    """The card of one verdict; `data` is None where nothing is stored (the lock's reference run: its intervals)."""
    claim = verdict.claim
    fmt = formatter(claim)
    per_group = claim.kind not in ("rate", "tracking")  # a slope or a correlation is one number over the groups
    if data is not None and np.isfinite(data.values).any() and per_group:
        pairs = [(label, mean_ci(row, fmt)) for label, row in zip(data.labels, data.values, strict=True)]
    elif verdict.evidence is not None and verdict.evidence.cells and per_group:  # the lock's cells, with intervals
        pairs = [(c.label, _locked_ci(c, fmt)) for c in verdict.evidence.cells]
    elif verdict.ours and per_group and len(verdict.ours) == len(claim.groups):
        pairs = [(g.label(), fmt(m)) for g, m in zip(claim.groups, verdict.ours, strict=True)]
    else:
        pairs = []
    cost = f"{cpu_s:,.0f} CPU-s" if cpu_s is not None and cpu_s >= 10 else (
        f"{cpu_s:.1f} CPU-s" if cpu_s is not None else "—")
    e = verdict.evidence
    labels = (("fragile",) if is_fragile(verdict) else ()) + (
        (f"needs {e.seeds_needed} seeds",) if e is not None and e.seeds_needed is not None else ())
    return Card(claim.id, claim.role, verdict.verdict, VERDICT_COLORS[verdict.verdict], claim.statement,
                claim.scale, claim.kind_label, verdict.paper_text,
                [f"{label}: {text}" for label, text in pairs] or [verdict.ours_text or "—"],
                criterion_words(claim, data, verdict, fmt), e.text() if e is not None else "", verdict.detail,
                fidelity_of(claim, paper), cost, verdict.source, _rows(verdict, pairs), labels)


def _rows(verdict: Verdict, pairs: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(setting, the paper's number, ours with its interval) per group: the paper's number is the group's own, a
    value claim's, or a bound every group must keep; a slope or a correlation is one row with the evidence's
    interval."""
    claim = verdict.claim
    if pairs and len(pairs) == len(claim.groups):
        shared = verdict.paper_text if claim.kind == "bound" else "—"
        return [(label, _paper_number(claim, value) if value is not None else shared, text)
                for (label, text), value in zip(pairs, paper_values(claim), strict=True)]
    ours, e = verdict.ours_text or "—", verdict.evidence
    if e is not None and e.quantity and math.isfinite(e.low) and e.method != "exact" and verdict.ours_text:
        ours += f", 95 % {e.method} interval [{fmt_significant(e.low)}, {fmt_significant(e.high)}] (n = {e.n})"
    return [("slope" if claim.kind == "rate" else claim.metric, verdict.paper_text, ours)]


def _paper_number(claim: Claim, value: float) -> str:
    return f"{value:g}" + (" (approx.)" if claim.approximate else "")


def locked_values(verdict: Verdict) -> ClaimValues | None:
    """A reference verdict's per-seed values from its lock (what a value, bound or ordering plot draws), or None
    where the lock keeps no seeds or the claim plots something else (a slope's x, a curve)."""
    cells = verdict.evidence.cells if verdict.evidence is not None else ()
    claim = verdict.claim
    if claim.kind not in ("value", "bound", "ordering") or len(cells) != len(claim.groups) or not cells:
        return None
    if not all(c.values for c in cells) or len({len(c.values) for c in cells}) != 1:
        return None
    return ClaimValues(tuple(c.label for c in cells), np.array([c.values for c in cells], dtype=float), None,
                       tuple(() for _ in cells))


def _locked_ci(cell, fmt) -> str:
    """A locked cell as 'mean ± half-width (n = k)', the way a stored one reads."""
    if not math.isfinite(cell.low):
        return f"{fmt(cell.mean)} ({seeds_text(cell.n)})"
    return f"{fmt(cell.mean)} ± {fmt((cell.high - cell.low) / 2)} (n = {cell.n})"


def chip(verdict: str) -> str:
    """The verdict as a coloured chip (HTML; the verdict names are ours, never user text)."""
    return (f"<span style='background:{VERDICT_COLORS[verdict]};color:white;padding:2px 8px;border-radius:10px;"
            f"font-size:0.85em;white-space:nowrap'>{html.escape(verdict)}</span>")


FIDELITY_HEADING = "## Fidelity to the authors' material"


def fidelity_summary(report: str) -> str | None:
    """The report's one-line fidelity summary (the `Summary:` line right under its fidelity heading: constants matched
    / differing / unknown, and whether the authors' code ran side by side), or None when it has none."""
    if FIDELITY_HEADING not in report:
        return None
    for line in report.split(FIDELITY_HEADING, 1)[1].splitlines():
        if line.strip():
            return line.strip().removeprefix("Summary:").strip() if line.startswith("Summary:") else None
    return None


def is_fragile(verdict: Verdict) -> bool:
    """The claims file says float rounding flips it, or its lock saw two numerics disagree."""
    return bool(verdict.claim.fragile) or "fragile: float rounding" in verdict.detail


def paper_values(claim: Claim) -> list[float | None]:
    """Per group, the number the paper reports for it (a group's own paper_value, or a value claim's), or None."""
    return [g.paper_value if g.paper_value is not None else (claim.paper_value if claim.kind == "value" else None)
            for g in claim.groups]


def seeds_text(n: int) -> str:
    return f"{n} seed" if n == 1 else f"{n} seeds"


SCALE_GROUPS = (("CPU scale", CPU_SCALES), ("paper scale", ("paper-scale",)))


def verdict_summary(verdicts: list[Verdict]) -> str:
    """The paper's claims counted by verdict, CPU and paper scale apart: "CPU scale, 11 claims: 6 reproduced, 3
    underpowered, 2 not reproduced; paper scale, 5 claims: 5 not run". Claims only: positive controls and sanity
    checks are never counted."""
    parts = []
    for name, scales in SCALE_GROUPS:
        counts = count_verdicts([v for v in claims_only(verdicts) if v.claim.scale in scales])
        total = sum(counts.values())
        if total:
            words = ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])
            parts.append(f"{name}, {total} claim{'s' if total != 1 else ''}: {words}")
    return "; ".join(parts) or "no claims"
