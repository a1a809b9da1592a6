"""`bench check NAME`: the conformance checks of a method, a task or a paper, one line each (pass or FAIL and why).

Methods and tasks get bench.testing's checks (the ones tests/test_conformance.py runs), plugins included. A paper
gets those of its claims file: valid against the registry (names, metrics, config keys), its cells' configs built,
every CPU-scale claim able to fail (a negative control, or control_none saying why there is none), and its methods'
switched-off declarations. Exit 1 when a check fails; 2 for a name that is none of these.

In a test: `check_paper(slug)` raises bench.testing.CheckFailed naming the failed checks, as `check_method` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from app import prepare
from app.console import err, out
from bench.errors import BenchError
from bench.registry import Registry, closest

if TYPE_CHECKING:  # bench.testing imports execute() and its dependencies: only `bench check` pays for them
    from bench import testing


def check(name: Annotated[str, typer.Argument(help="A method, task or paper (bench list methods|tasks|papers).")]
          ) -> None:
    """Run the conformance checks on a method, task or paper (plugins included): one line per check."""
    from bench import testing

    registry = prepare.registry()
    checks = checks_for(name, registry)
    outcomes = testing.run_checks(checks)
    for outcome in outcomes:
        line = Text("pass  " if outcome.passed else "FAIL  ", style="green" if outcome.passed else "bold red")
        why = outcome.note if outcome.passed else outcome.failure.splitlines()[0]
        line.append(outcome.label + (f": {why}" if why else ""))
        out.print(line, soft_wrap=True, highlight=False)
    failed = sum(not outcome.passed for outcome in outcomes)
    err.print(f"{name}: {len(outcomes) - failed} of {len(outcomes)} checks passed", highlight=False, markup=False)
    if failed:
        raise typer.Exit(1)


def checks_for(name: str, registry: Registry) -> list[testing.Check]:
    """The checks of every kind `name` is registered as; a one-line error naming close names when it is none."""
    from bench import testing

    checks = []
    if name in registry.names("method"):
        checks += testing.method_checks(name, registry)
    if name in registry.names("task"):
        checks += testing.task_checks(name, registry)
    if name in registry.papers():
        checks += paper_checks(name, registry)
    if not checks:
        known = [*registry.names("method"), *registry.names("task"), *registry.papers()]
        raise BenchError(f"unknown method, task or paper {name!r}{closest(name, known)} "
                         "(bench list methods, bench list tasks, bench list papers)")
    return checks


def check_paper(slug: str, registry: Registry | None = None) -> list[testing.Outcome]:
    """Every check of a paper's claims file; CheckFailed names the failed ones."""
    from bench import testing

    return testing.conform(slug, paper_checks(slug, registry or Registry.discover()))


def paper_checks(slug: str, registry: Registry) -> list[testing.Check]:
    """The claims file read and validated first; the later checks need the paper it describes."""
    from bench import testing
    from leaderboard.claims import load_paper

    registry.paper_path(slug)  # an unknown slug is a one-line error
    paper: list = []

    def valid() -> str:
        paper.append(load_paper(registry, slug))
        return f"{len(paper[0].claims)} claims, controls and checks"

    def read() -> object:
        if not paper:
            raise testing.CheckFailed("not checked: the claims file is not valid")
        return paper[0]

    return [testing.Check(f"{slug}: claims file valid against the registry (names, metrics, config keys)", valid),
            testing.Check(f"{slug}: every claim's cells build through the Configs",
                          lambda: _cells_build(read(), registry)),
            testing.Check(f"{slug}: every CPU-scale claim has a negative control or control_none",
                          lambda: _controlled(read())),
            testing.Check(f"{slug}: each of its methods declares its switched-off setting (bench/switches.py)",
                          lambda: _switches_declared(read(), registry))]


def _cells_build(paper, registry: Registry) -> str:
    from leaderboard.claims import paper_cells

    return f"{len(paper_cells(paper, registry, 1))} cells at one seed"  # the Configs' own value checks too


def _controlled(paper) -> str:
    from bench import testing
    from leaderboard.claims import uncontrolled

    missing = uncontrolled(paper)
    if missing:
        raise testing.CheckFailed(f"CPU-scale claim(s) without a negative control or control_none: "
                                  f"{', '.join(missing)}")
    return ""


def _switches_declared(paper, registry: Registry) -> str:
    from bench import testing

    for method in paper.methods:
        try:
            testing.switched_off_declared(registry, method)
        except (testing.CheckFailed, BenchError) as exc:
            raise testing.CheckFailed(str(exc) if method in str(exc) else f"{method}: {exc}") from None
    return ", ".join(paper.methods)
