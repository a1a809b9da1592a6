"""A paper's verdicts on the terminal (`bench claims`, `bench reproduce`), laid out by app/terminal.py, and the
verdicts counted per paper and scale (`bench reproduce --all`)."""

import sys

from app.console import out


def print_verdicts(paper, verdicts, lock=None, wide: bool = False) -> None:
    """The claims laid out for the terminal's width (app/terminal.py: a block per claim below 100 columns, a table
    from 100 on; `wide`: every claim's reasons too); with a lock, a paper with nothing stored shows the lock's
    reference run (labelled) and a stored verdict that differs from the lock says so."""
    from app.terminal import render_claims

    emit(render_claims([shown_verdicts(paper, verdicts, lock)], out.width, reasons=wide))


def shown_verdicts(paper, verdicts, lock):
    """The verdicts as shown (the lock's reference run where nothing is stored), for app/terminal.py."""
    from app.terminal import PaperVerdicts
    from leaderboard.lock import with_reference

    shown, source = with_reference(verdicts, lock)
    return PaperVerdicts(paper, shown, lock.label if source == "reference" else "")


def emit(text: str) -> None:
    """Plain text to stdout, verdict names coloured on a terminal (never in a pipe or a file)."""
    from app.terminal import paint

    sys.stdout.write(paint(text) if sys.stdout.isatty() else text)
    sys.stdout.flush()


def print_paper_counts(papers, store, registry, seeds) -> None:
    """One row per paper and scale: how many of its claims got each verdict, its sanity checks (never counted) and the
    CPU seconds of its runs (details: bench claims --paper SLUG)."""
    from collections import Counter

    from rich.table import Table

    from leaderboard.claims import VERDICTS as kinds
    from leaderboard.claims import paper_overview

    table = Table(title="verdicts per paper and scale (bench claims --paper SLUG for each claim)", box=None,
                  pad_edge=False, title_justify="left")
    for col in ("paper", "scale", *kinds, "checks", "CPU s"):
        table.add_column(col, justify="left" if col in ("paper", "scale") else "right")
    totals: Counter = Counter()
    unchecked: dict[str, int] = {}
    for paper in papers:
        row = paper_overview(paper, store, registry, seeds=seeds)
        if row.unchecked:
            unchecked[paper.slug] = row.unchecked
        for i, (scale, counts) in enumerate(row.by_scale.items()):
            totals.update({(scale, k): n for k, n in counts.items()})
            cost = "" if i else ("n/a" if row.cpu_s is None else f"{row.cpu_s:.0f}")
            table.add_row(paper.slug if i == 0 else "", scale, *(str(counts[k]) for k in kinds),
                          "" if i else str(row.checks), cost)
    for scale in sorted({s for s, _ in totals}):
        table.add_row("total", scale, *(str(totals[(scale, k)]) for k in kinds), "", "")
    out.print(table)
    if unchecked:  # a claim that also holds on its control is uninformative: these are not settled yet
        out.print(f"{sum(unchecked.values())} of the claims counted reproduced or partially have a negative control "
                  f"not run ({', '.join(f'{slug} {n}' for slug, n in unchecked.items())}): --controls runs them, and "
                  "a claim that also holds on its control turns uninformative", highlight=False)
