"""`bench list methods|tasks|papers`: what is registered, plugins marked with their distribution."""

from enum import StrEnum
from typing import Annotated

import typer

from app import prepare
from app.console import out
from bench.errors import BenchError
from bench.registry import Registry


class Kind(StrEnum):
    methods = "methods"
    tasks = "tasks"
    papers = "papers"


def list_(kind: Annotated[Kind, typer.Argument(help="methods, tasks or papers")]) -> None:
    """List registered methods, tasks or papers."""
    from rich.markup import escape
    from rich.table import Table

    registry = prepare.registry()
    table = Table(box=None, pad_edge=False)
    if kind is Kind.papers:
        table.add_column("paper")
        for slug in registry.papers():
            table.add_row(slug)
    else:
        table.add_column(kind.value[:-1])
        table.add_column("family")
        table.add_column("summary")
        if kind is Kind.methods:
            table.add_column("switched off (bench/switches.py)")
        for name in registry.names(kind.value[:-1]):
            item = registry.listing(kind.value[:-1], name)
            origin = "" if item.origin == "builtin" else escape(f" [{item.origin}]")  # text, not a rich style tag
            row = [name + origin, item.family, item.summary]
            if kind is Kind.methods:
                row.append(_switches_text(registry, name))
            table.add_row(*row)
    out.print(table)


def _switches_text(registry: Registry, name: str) -> str:
    """A method's switched-off settings, or its reason there are none (a missing declaration says so)."""
    try:
        declared = registry.switched_off(name)
    except BenchError as exc:
        return f"(none declared: {exc})"
    if isinstance(declared, str):
        return f"none: {declared}"
    return "; ".join(switch.label() for switch in declared)
