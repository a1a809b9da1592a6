"""A paper's verdicts on the terminal (`bench claims`, `bench reproduce`): compact or as a wide table, and the
verdicts counted per paper and scale."""

from rich.text import Text

from app.console import out

VERDICT_STYLES = {"reproduced": "green", "not reproduced": "red", "partially": "yellow", "inconclusive": "magenta",
                  "uninformative": "magenta", "underpowered": "yellow", "no-harm holds": "cyan", "no-harm fails": "red"}


def print_verdicts(paper, verdicts, lock=None, wide: bool = False) -> None:
    """The claims, compact (three short lines a claim, readable at 80 columns) or `wide` (a table with every
    reason); with a lock, a paper with nothing stored shows the lock's reference run (labelled) and a stored
    verdict that differs from the lock says so."""
    from leaderboard.lock import with_reference

    verdicts, source = with_reference(verdicts, lock)
    title = f"{paper.slug}: {paper.title}"
    if source == "reference":
        title += (f"\n(nothing stored: the {lock.label}; re-run locally: "
                  f"bench reproduce {paper.slug} --scale cpu --controls)")
    (_print_table if wide else _print_compact)(title, verdicts)


def _print_compact(title: str, verdicts) -> None:
    out.print(Text(title, style="bold"))
    width = out.width
    for v in verdicts:
        head = Text(f"{v.claim.id}  ")
        head.append(v.verdict, style=VERDICT_STYLES.get(v.verdict, "dim"))
        head.append(f"  {v.claim.kind_label} · {v.claim.scale} · {v.claim.seeds} seeds", style="dim")
        out.print(head, overflow="fold")
        for line in (f"  paper {v.paper_text} | ours {v.ours_text or '—'}",
                     f"  negative control: {v.control}" if v.control != "none" else "",
                     f"  switched off: {v.switched}" if v.switched != "none" else ""):
            if line:
                text = Text(line)
                text.truncate(width, overflow="ellipsis")
                out.print(text, no_wrap=True)
        if v.evidence is not None and v.evidence.quantity:  # the numbers the verdict rests on: folded, never cut
            out.print(Text(f"  {v.evidence.text()}", style="dim"), overflow="fold")
    out.print(Text("the reasons: bench claims --wide (or --format md)", style="dim"))


def _print_table(title: str, verdicts) -> None:
    from rich.table import Table

    table = Table(title=title, box=None, pad_edge=False, title_justify="left")
    for col in ("claim", "kind", "scale", "paper", "ours", "verdict", "why"):
        table.add_column(col, overflow="fold")
    for v in verdicts:
        color = VERDICT_STYLES.get(v.verdict, "dim")
        table.add_row(v.claim.id, v.claim.kind_label, v.claim.scale, v.paper_text, v.ours_text,
                      f"[{color}]{v.verdict}[/{color}]", v.detail)
    out.print(table)


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
