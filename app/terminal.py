"""What `bench claims`, `bench show` and `bench reproduce --dry-run` print, laid out for a terminal `width` wide.

Pure functions: data in, plain text out, so a test reads exactly what a terminal shows (`paint` adds colour for a
terminal afterwards). Below WIDE columns each claim is a block of short labelled lines; from WIDE on, a table.
Either way a line breaks at a space, or inside a word too long for a line, but never inside a number: a number
may move to the next line and is never cut. Verdict and scale names are always written whole.

The leaderboard modules are imported inside the functions that need them: `bench show` and `--dry-run` never pay
for the claims' statistics (scipy).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.registry import Registry
    from bench.spec import Cell
    from leaderboard.claims import Paper, Verdict
    from leaderboard.queries import BoardRow

WIDE = 100             # from this many columns on, tables; below, one block per claim or row
INDENT = "  "
NUMBER_CHARS = frozenset("0123456789.eE+-")
SOFT_BREAKS = frozenset(",=(/_-;:")  # a word too long for a line breaks after one of these where it can
MIN_COLUMN = 12        # a shared column's least width: room for any number
ROLES = (("claim", ""), ("control", "Positive controls (can this world show the effect?)"),
         ("check", "Sanity checks (true by construction, never counted)"))


@dataclass(frozen=True)
class PaperVerdicts:
    """One paper's verdicts as they are shown (leaderboard.lock.with_reference's), and where they come from."""

    paper: Paper
    verdicts: list[Verdict]
    reference: str = ""  # the lock's label where the verdicts are its reference run (nothing stored), else ""


# ---------------------------------------------------------------------------------------------------------- layout

def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """`text` in lines of at most `width` characters, the first starting with `first` (default `indent`), the rest
    with `indent`. Breaks at spaces; a word longer than a line breaks where no number is cut (`_cut`)."""
    lines: list[str] = []
    line = indent if first is None else first
    empty = True  # nothing after the line's indent yet
    for word in text.split():
        while word:
            gap = 0 if empty else 1
            if len(line) + gap + len(word) <= width:
                line, empty, word = line + " " * gap + word, False, ""
            elif not empty:  # on the next line (a word longer than a line starts one, too)
                lines.append(line)
                line, empty = indent, True
            else:  # longer than a line: as much as fits, the rest on the next
                cut = _cut(word, width - len(line)) or max(1, width - len(line))  # or a number wider than a line
                lines.append(line + word[:cut])
                line, word = indent, word[cut:]
    if not empty or not lines:
        lines.append(line)
    return lines


def _cut(word: str, room: int) -> int:
    """Where to break a word to put at most `room` characters on this line: after a soft break (`, = ( / _ - ; :`)
    if one falls in the second half, else anywhere, but never between two characters of a number; 0: nowhere."""
    allowed = [i for i in range(1, min(room, len(word) - 1) + 1)
               if not (word[i - 1] in NUMBER_CHARS and word[i] in NUMBER_CHARS)]
    soft = [i for i in allowed if word[i - 1] in SOFT_BREAKS and i >= room // 2]
    return (soft or allowed or [0])[-1]


def labelled(label: str, text: str, width: int, indent: str = INDENT) -> list[str]:
    """`  label  text...`, continued under the text's first character."""
    head = f"{indent}{label}  "
    return wrap(text, width, " " * len(head), head)


def table(header: list[str], rows: list[list[str]], width: int, fixed: set[int],
          weights: dict[int, float] | None = None) -> list[str]:
    """Columns separated by two spaces, each cell wrapped in its column. The `fixed` columns are as wide as their
    longest cell, header included; the others share what is left, a character at a time to the one with the least
    width for its weight (default 1) that still has a longer cell."""
    n = len(header)
    longest = [max(len(r[i]) for r in [header, *rows]) for i in range(n)]
    widths = {i: longest[i] for i in fixed}
    free = [i for i in range(n) if i not in widths]
    weights = {i: (weights or {}).get(i, 1.0) for i in free}
    widths.update({i: min(longest[i], MIN_COLUMN) for i in free})
    left = width - sum(widths.values()) - 2 * (n - 1)
    while left > 0:
        needy = [i for i in free if widths[i] < longest[i]]
        if not needy:
            break
        widths[min(needy, key=lambda i: widths[i] / weights[i])] += 1
        left -= 1
    out = []
    for row in [header, *rows]:
        cells = [wrap(row[i], widths[i]) for i in range(n)]
        for k in range(max(map(len, cells))):
            parts = [(c[k] if k < len(c) else "").ljust(widths[i]) for i, c in enumerate(cells)]
            out.append("  ".join(parts).rstrip())
    return out


def paint(text: str) -> str:
    """Every verdict name in `text` in its colour (ANSI), for a terminal; plain text is what the layout measures."""
    from leaderboard.claims import VERDICTS

    colours = {"reproduced": 32, "no-harm holds": 36, "not reproduced": 31, "no-harm fails": 31, "partially": 33,
               "underpowered": 33, "inconclusive": 35, "uninformative": 35}
    names = sorted((v for v in VERDICTS if v in colours), key=len, reverse=True)  # "not reproduced" first
    return re.sub("|".join(map(re.escape, names)), lambda m: f"\x1b[{colours[m[0]]}m{m[0]}\x1b[0m", text)


# --------------------------------------------------------------------------------------------------------- numbers

def interval_text(mean: float, low: float, high: float, n: int) -> str:
    """"0.00023 [0.00002, 0.00044], n=20": mean and 95 % interval with one number of decimals, which shows the
    interval's half-width to two significant figures (as the exports do); "3.53 (1 seed)" without an interval."""
    half = max(mean - low, high - mean) if math.isfinite(low) and math.isfinite(high) else float("nan")
    if not math.isfinite(mean):
        return "n/a"
    if not math.isfinite(half):
        return f"{mean:.6g} ({_seeds(n)}, no interval)" if n != 1 else f"{mean:.6g} (1 seed)"
    if half == 0:
        return f"{mean:.6g} (exact), n={n}"
    places = min(12, max(0, 1 - math.floor(math.log10(half))))
    return f"{mean:.{places}f} [{low:.{places}f}, {high:.{places}f}], n={n}"


def _seeds(n: int) -> str:
    return f"{n} seed" if n == 1 else f"{n} seeds"


# ----------------------------------------------------------------------------------------------------- bench claims

def render_claims(papers: list[PaperVerdicts], width: int, reasons: bool = False) -> str:
    """`bench claims` (one paper or all): per paper its verdict summary, then its claims, positive controls and
    sanity checks; one block per claim below WIDE columns, a table from WIDE on. `reasons`: each claim's full
    detail too (--wide). Over several papers, the totals at the end."""
    lines: list[str] = []
    for shown in papers:
        lines += _paper_head(shown, width)
        for role, title in ROLES:
            verdicts = [v for v in shown.verdicts if v.claim.role == role]
            if not verdicts:
                continue
            if title:
                lines += ["", *wrap(title, width)]
            if width < WIDE:
                for v in verdicts:
                    lines += ["", *claim_block(v, width, reasons)]
            else:
                lines += ["", *claims_table(verdicts, width, reasons)]
        lines.append("")
    if len(papers) > 1:
        lines += totals(papers, width)
    return "\n".join(lines).rstrip("\n") + "\n"


def _paper_head(shown: PaperVerdicts, width: int) -> list[str]:
    from leaderboard.cards import verdict_summary

    slug = shown.paper.slug
    lines = wrap(f"{slug}: {shown.paper.title}", width, INDENT, "")
    lines += wrap(verdict_summary(shown.verdicts), width, INDENT, "")
    if shown.reference:
        lines += wrap(f"nothing stored: the {shown.reference}; re-run locally: bench reproduce {slug} "
                      "--scale cpu --controls", width, INDENT, "")
    return lines


def claim_block(v: Verdict, width: int, reasons: bool = False) -> list[str]:
    """One claim, narrow: its id on a line of its own, then verdict, paper, ours and the interval that decided it."""
    lines = wrap(v.claim.id, width)
    lines += wrap(_status(v), width, INDENT * 2, INDENT)
    controls = _controls(v)
    if controls:
        lines += wrap(controls, width, INDENT * 2, INDENT)
    paper, ours = _paper_and_ours(v)
    if paper:
        lines += labelled("paper", paper, width)
    for i, line in enumerate(ours):
        lines += wrap(line, width, " " * 9, f"{INDENT}{'ours' if i == 0 else '':5s}  ")
    if v.evidence is not None and v.evidence.quantity:
        lines += labelled("decided by", v.evidence.text(), width)
    elif v.verdict in ("not run", "insufficient seeds") and not reasons:
        lines += labelled("why", v.detail.split("; ")[0], width)
    if reasons:
        lines += labelled("why", v.detail, width)
    return lines


def _status(v: Verdict) -> str:
    """"underpowered · fragile · ordering · cpu-full · 20 seeds"."""
    from leaderboard.cards import is_fragile

    return " · ".join([v.verdict, *(["fragile"] if is_fragile(v) else []), v.claim.kind_label, v.claim.scale,
                       _seeds(v.claim.seeds)])


def _controls(v: Verdict) -> str:
    parts = []
    if v.control != "none":
        parts.append("negative control fails, as it must" if v.control == "fails" else f"negative control {v.control}")
    if v.switched != "none":
        parts.append(f"switched off: {v.switched}")
    return " · ".join(parts)


def _paper_and_ours(v: Verdict) -> tuple[str, list[str]]:
    """(the paper's side, one line per cell of ours): where the paper gives a number per group, it stands beside ours
    on that group's line, and the paper's side is the criterion alone."""
    from leaderboard.cards import paper_values

    claim, cells = v.claim, v.evidence.cells if v.evidence is not None else ()
    ours = [v.ours_text] if claim.kind in ("rate", "tracking") and v.ours_text else []  # the slope or correlation
    if cells and len(cells) == len(claim.groups):
        ours += [f"{c.label}: {interval_text(c.mean, c.low, c.high, c.n)}"
                 + (f"; paper {p:g}" if p is not None and claim.kind != "value" else "")
                 for c, p in zip(cells, paper_values(claim), strict=True)]
    return v.paper_text, ours or [v.ours_text or "—"]


def claims_table(verdicts: list[Verdict], width: int, reasons: bool = False) -> list[str]:
    """The claims as a table (wide terminals and pipes): claim, verdict, scale, seeds, the paper's side, ours per
    cell, and the deciding estimate with its interval against its threshold; `reasons`: each claim's interval in
    words and its full detail under the table."""
    from leaderboard.cards import is_fragile

    rows = []
    for v in verdicts:
        paper, ours = _paper_and_ours(v)
        status = v.verdict + (" (fragile)" if is_fragile(v) else "")
        rows.append([v.claim.id, status, v.claim.scale, str(v.claim.seeds), paper, "; ".join(ours), _deciding(v)])
    header = ["claim", "verdict", "scale", "seeds", "paper", "ours: mean [95 % CI], n", "decided by"]
    lines = table(header, rows, width, {0, 1, 2, 3}, weights={4: 1.0, 5: 2.0, 6: 1.2})
    if reasons:  # under the table, each claim's interval in words and its reasons in full
        lines += ["", "why:"]
        for v in verdicts:
            evidence = f"{v.evidence.text()}; " if v.evidence is not None and v.evidence.quantity else ""
            lines += labelled(v.claim.id, evidence + v.detail, width)
    return lines


def totals(papers: list[PaperVerdicts], width: int) -> list[str]:
    """Every paper's claims counted together, and the holding claims whose negative control has not run."""
    from leaderboard.cards import verdict_summary

    every = [v for shown in papers for v in shown.verdicts]
    lines = wrap(f"all {len(papers)} papers: {verdict_summary(every)}", width, INDENT, "")
    unchecked = {shown.paper.slug: n for shown in papers if (n := sum(
        v.claim.role == "claim" and v.verdict in ("reproduced", "partially") and v.control == "not run"
        for v in shown.verdicts))}
    if unchecked:
        lines += wrap(f"{sum(unchecked.values())} of the claims counted reproduced or partially have a negative "
                      f"control not run ({', '.join(f'{s} {n}' for s, n in unchecked.items())}): --controls runs "
                      "them, and a claim that also holds on its control turns uninformative", width, INDENT, "")
    return lines


def render_compact(papers: list[PaperVerdicts], width: int) -> str:
    """`bench claims` over many papers, short: per paper its verdict summary, then one line per claim (positive
    controls and checks left out) with its verdict and the interval that decided it against its threshold; the
    claims not run (paper scale) listed together on one line."""
    lines: list[str] = []
    labels = {shown.reference for shown in papers}
    if labels == {papers[0].reference} and papers[0].reference:  # a fresh checkout: say it once
        lines += wrap(f"nothing stored: every paper shows the {papers[0].reference}; re-run locally: bench "
                      "reproduce --all --controls", width, INDENT, "") + [""]
    for shown in papers:
        reference = " (reference run)" if shown.reference and len(labels) > 1 else ""
        lines += wrap(f"{shown.paper.slug}{reference}: {verdict_summary_of(shown)}", width, INDENT, "")
        claims = [v for v in shown.verdicts if v.claim.role == "claim"]
        not_run = [v.claim.id for v in claims if v.verdict == "not run"]
        column = max(len(v.verdict) for v in claims) if claims else 0
        hang = " " * (column + 4)
        for v in claims:
            if v.verdict != "not run" or len(not_run) < 2:
                lines += wrap(f"{v.claim.id}  {_deciding(v)}", width, hang, f"{INDENT}{v.verdict:{column}s}  ")
        if len(not_run) >= 2:
            lines += wrap(f"{len(not_run)} claims: {', '.join(not_run)}", width, hang,
                          f"{INDENT}{'not run':{column}s}  ")
        lines.append("")
    lines += totals(papers, width)
    lines.append("each claim in full: bench claims --paper SLUG")
    return "\n".join(lines) + "\n"


def verdict_summary_of(shown: PaperVerdicts) -> str:
    from leaderboard.cards import verdict_summary

    return verdict_summary(shown.verdicts)


def _deciding(v: Verdict) -> str:
    """"11.5 [10.5, 12.5] ≥ 2.3, n=20": the deciding estimate, its interval and its threshold; else why none."""
    e = v.evidence
    if e is None or not e.quantity or not math.isfinite(e.estimate):
        return f"({v.detail.split('; ')[0]})" if v.verdict == "not run" else "(no interval)"
    relation = "≥" if e.side > 0 else "≤"
    if not math.isfinite(e.low):
        return f"{e.estimate:.3g} {relation} {e.threshold:.3g}, no interval from {_seeds(e.n)}"
    if e.method == "exact":
        return f"{e.estimate:.3g} (exact) {relation} {e.threshold:.3g}"
    return f"{e.estimate:.3g} [{e.low:.3g}, {e.high:.3g}] {relation} {e.threshold:.3g}, n={e.n}"


# ------------------------------------------------------------------------------------------- bench claims --format md

def claims_markdown(papers: list[PaperVerdicts]) -> str:
    """A Markdown table that pastes into a paper or an issue: one row per claim, every cell one short line; the
    statement, the cells' values and the reasons go below the table as numbered notes."""
    header = ["paper", "claim", "verdict", "scale", "seeds", "paper's value", "deciding estimate [95 % CI]",
              "threshold", "note"]
    lines = ["| " + " | ".join(header) + " |", "|---|---|---|---|---:|---|---|---|---:|"]
    notes = []
    for shown in papers:
        for v in (v for role, _ in ROLES for v in shown.verdicts if v.claim.role == role):
            notes.append(_note(shown, v))
            paper, _ = _paper_and_ours(v)
            e = v.evidence
            estimate = threshold = "—"
            if e is not None and e.quantity and math.isfinite(e.estimate):
                estimate = (f"{e.estimate:.3g} [{e.low:.3g}, {e.high:.3g}], n={e.n}" if math.isfinite(e.low)
                            else f"{e.estimate:.3g}, n={e.n}")
                threshold = f"{'≥' if e.side > 0 else '≤'} {e.threshold:.3g}"
            role = "" if v.claim.role == "claim" else f" ({v.claim.role})"
            row = [shown.paper.slug, v.claim.id + role, v.verdict, v.claim.scale, str(v.claim.seeds),
                   paper if len(paper) <= 40 else f"note {len(notes)}", estimate, threshold, str(len(notes))]
            lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    lines.append("")
    lines += [f"{i}. {_md_cell(note)}" for i, note in enumerate(notes, 1)]
    return "\n".join(lines) + "\n"


def _note(shown: PaperVerdicts, v: Verdict) -> str:
    paper, ours = _paper_and_ours(v)
    source = f" ({v.claim.source})" if v.claim.source else ""
    parts = [f"{shown.paper.slug} / {v.claim.id}: {v.claim.statement}{source}.", f"Paper: {paper}.",
             f"Ours: {'; '.join(ours)}."]
    if v.evidence is not None and v.evidence.quantity:
        parts.append(f"Decided by {v.evidence.text()}.")
    parts.append(f"Why: {v.detail}.")
    return " ".join(parts)


def _md_cell(text: str) -> str:
    """One line of Markdown table text: pipes escaped, line breaks and runs of spaces flattened."""
    return " ".join(str(text).split()).replace("|", "\\|")


# ------------------------------------------------------------------------------------------------------ bench show

def render_board(groups: dict[tuple[str, str], list[BoardRow]], width: int) -> str:
    """`bench show`: per task instance, comparison group and metric, its methods ranked with mean, std and 95 % CI;
    one block per method below WIDE columns, a table from WIDE on."""
    from leaderboard.export import direction, numbers, place, seeds

    if not groups:
        return "no finished runs to show\n"
    lines: list[str] = []
    for (instance, metric), rows in groups.items():
        better = "higher" if rows[0].higher_is_better else "lower"
        lines += wrap(f"{instance}  ({metric} {direction(rows[0])}, {better} is better)", width, INDENT, "")
        body = []
        for row in rows:
            mean, std, low, high = numbers(row)
            method = row.method + ("" if row.registered else " (not registered)")
            body.append([place(row), method, row.config_label, seeds(row), mean, std, f"[{low}, {high}]",
                         row.hardware, row.scale])
        if width < WIDE:
            for rank, method, config, n, mean, std, ci, hardware, scale in body:
                lines += wrap(f"{method} {config}", width, " " * 6, f"{INDENT}{rank:>3s} ")
                lines += wrap(f"mean {mean}, std {std}, 95% CI {ci}, n={n} · {hardware} · {scale}", width, " " * 8,
                              " " * 6)
        else:
            header = ["rank", "method", "config", "n", "mean", "std", "95% CI", "hardware", "scale"]
            lines += table(header, body, width, {0, 3, 4, 5, 6, 7, 8})
        if any(row.low_seeds for row in rows):
            lines += wrap(f"(low): fewer than 3 seeds or than the {rows[0].most_seeds} of this instance's largest "
                          "setting", width, INDENT, "")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- reproduce --dry-run

def render_dry_run(cells: list[Cell], registry: Registry, width: int) -> str:
    """`bench reproduce --dry-run`: one entry per cell (its key, method x task, seed, hardware) with only the settings
    that differ from the method's and the task's defaults, then the count."""
    from leaderboard.queries import config_label, defaults_of

    defaults: dict[tuple[str, str], dict[str, Any]] = {}

    def changed(kind: str, name: str, config) -> str:
        if (kind, name) not in defaults:
            defaults[(kind, name)] = defaults_of(registry, kind, name)
        return config_label(dict(config), defaults[(kind, name)])

    lines = []
    for cell in cells:
        settings = [f"{kind}: {label}" for kind, label in (
            ("method", changed("method", cell.method, cell.method_config)),
            ("task", changed("task", cell.task, cell.task_config))) if label]
        text = f"{cell.run_key[:12]}  {cell.label()}" + (f"  {'; '.join(settings)}" if settings else "")
        lines += wrap(text, width, " " * 14, "")
    lines.append(f"{len(cells)} cell{'s' if len(cells) != 1 else ''} (settings shown where they differ from the "
                 "defaults)")
    return "\n".join(lines) + "\n"
