"""`bench claims`: each claim of a paper, the paper's value, ours and the verdict; `--check` validates every claims
file against the registry."""

import sys
from enum import StrEnum
from typing import Annotated

import typer

from app import prepare
from app.console import out
from app.options import DbOption
from app.terminal import claims_markdown, render_claims, render_compact
from app.verdicts import emit, shown_verdicts
from bench.errors import BenchError


class ClaimsFormat(StrEnum):
    table = "table"
    json = "json"
    md = "md"
    csv = "csv"


def claims(
    paper: Annotated[str | None, typer.Option(help="Only this paper.")] = None,
    check: Annotated[bool,
                     typer.Option("--check", help="Only validate every claims file against the registry.")] = False,
    format: Annotated[ClaimsFormat, typer.Option("--format", help="table (the terminal's), or json, md or csv: one "
                                                                  "unwrapped row per claim, for files and pipes; md a "
                                                                  "table to paste, its long text as notes below it.")]
    = ClaimsFormat.table,
    wide: Annotated[bool, typer.Option("--wide", help="Every claim in full, with its reasons (over all papers: "
                                                      "instead of one line a claim).")] = False,
    db: DbOption = None,
) -> None:
    """Each claim of a paper: the paper's value, ours, and the verdict."""
    from leaderboard.claims import evaluate_paper, load_paper
    from leaderboard.lock import read_lock

    if paper is not None and not paper.strip():
        raise BenchError("--paper is empty; give a paper slug (bench list papers) or leave --paper out for all")
    registry = prepare.registry()
    if check:
        _check_files(registry)
        return
    slugs = [paper] if paper else registry.papers()
    for slug in slugs:
        registry.paper_path(slug)  # an unknown paper is refused before the store is opened
    store = prepare.store_or_empty(db)
    if format in (ClaimsFormat.json, ClaimsFormat.csv):
        _write_rows(slugs, store, registry, format.value)
        return
    papers = []
    for slug in slugs:  # each paper evaluated once, whatever the layout
        paper_ = load_paper(registry, slug)
        papers.append(shown_verdicts(paper_, evaluate_paper(paper_, store, registry), read_lock(slug)))
    if format == ClaimsFormat.md:
        emit(claims_markdown(papers))
    elif paper or wide:
        emit(render_claims(papers, out.width, reasons=wide))
    else:
        emit(render_compact(papers, out.width))


def _check_files(registry) -> None:
    """One line per claims file (ok, or what is wrong); a BenchError naming the invalid ones."""
    from leaderboard.claims import check_all

    results = check_all(registry)
    problems = [(slug, error) for slug, error in results if error]
    for slug, error in results:
        out.print(f"{slug}: {'ok' if error is None else error}", highlight=False, markup=False)
    if problems:
        raise BenchError(f"{len(problems)} claims file(s) invalid: {', '.join(s for s, _ in problems)}")


def _write_rows(slugs: list[str], store, registry, format: str) -> None:
    """One unwrapped row per claim (json or csv), the lock's reference run where nothing is stored."""
    from leaderboard.claims import evaluate_paper, load_paper
    from leaderboard.lock import read_lock, with_reference
    from leaderboard.verdict_export import render_rows, verdict_rows

    rows = []
    for slug in slugs:
        paper_ = load_paper(registry, slug)
        shown, _ = with_reference(evaluate_paper(paper_, store, registry), read_lock(slug))
        rows += verdict_rows(paper_, shown)
    sys.stdout.write(render_rows(rows, format))
