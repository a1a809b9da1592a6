"""Cells run under a live progress bar (counts per status and an ETA), and the summary and exit code after."""

import typer
from rich.markup import escape

from app.console import err


def run_with_progress(cells, store, registry, runner, timeout: float | None, force: bool, costs: dict | None = None):
    """Run the cells not yet done on `runner` (runners/choice.py), drawing the bar on stderr; returns the Summary.

    `costs` ({run_key: expected seconds}) weighs the bar, so that its ETA holds when slow cells come last. Ctrl-C
    stops with exit code 130; every finished cell is stored."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    from bench.errors import mask_secrets
    from runners.base import pending_cells

    todo, _ = pending_cells(cells, store, force, registry)
    if todo:  # an unreachable cluster is a one-line error before the bar is drawn
        runner.reach()
    weight = (lambda cell: costs.get(cell.run_key, 1.0)) if costs else (lambda cell: 1.0)
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[finished]}/" + str(len(todo))),
               TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[counts]}"))
    with Progress(*columns, console=err, transient=False, disable=len(todo) == 0) as progress:
        bar = progress.add_task("cells", total=sum(weight(c) for c in todo), counts="", finished=0)
        counts: dict[str, int] = {}
        finished = [0]

        def on_record(record) -> None:
            counts[record.status] = counts.get(record.status, 0) + 1
            finished[0] += 1
            progress.update(bar, advance=weight(record.cell), finished=finished[0],
                            counts=" ".join(f"{k}={v}" for k, v in sorted(counts.items())))
            if record.status not in ("done", "skipped"):
                first = (record.error or "").strip().splitlines()
                err.print(f"[red]{record.status}[/red] {escape(record.cell.label())}: "
                          f"{escape(mask_secrets(first[-1])) if first else ''}",
                          highlight=False, soft_wrap=True)

        def on_status(snapshot) -> None:  # ray: cells running and pending besides the finished ones
            counts.update(snapshot)
            progress.update(bar, counts=" ".join(f"{k}={v}" for k, v in sorted(counts.items())))

        try:
            return runner(cells, store, registry, timeout=timeout, force=force, on_record=on_record,
                          on_status=on_status)
        except KeyboardInterrupt:
            progress.stop()
            err.print("interrupted: every finished cell is stored; rerun the same command to resume")
            raise typer.Exit(130) from None


def report_summary(summary) -> None:
    parts = [f"{n} {status}" for status, n in sorted(summary.counts.items())]
    if summary.already_done:
        parts.append(f"{summary.already_done} already done (skipped; --force reruns)")
    if summary.leased:
        parts.append(f"{summary.leased} run by another driver now (skipped)")
    if summary.kept:
        parts.append(f"{summary.kept} finished but kept the stored done run (--force replaces it)")
    err.print("cells: " + (", ".join(parts) if parts else "nothing to run"))


def exit_on_failures(summary) -> None:
    if summary.counts.get("failed") or summary.counts.get("timeout"):
        raise typer.Exit(1)  # the failures are stored; the exit code tells a script
