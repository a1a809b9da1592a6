"""Forked cells inherit the modules earlier cells imported, instead of importing them again.

The local runner forks one child per cell, and a child starts with the driver's modules only. The
driver never imports torch, transformers or a family's packages (it must never run a torch op: see
runners/local.py), so every child imported them afresh, most of them lazily, from inside the
method's code. Inheriting them saves most of that import time per forked cell, every number but the
wall-clock ones the same (`benchmarks/core_overhead.py --imports` measures it; docs/performance.md has the
current figures).

So a child reports the names of the modules its cell imported (`imported_since`), and the driver
imports them itself (`import_here`) before it forks the next cells. Importing runs no torch op and
starts no OpenMP pool (the only threads these imports start are OpenBLAS's servers, which numpy in
the driver has already and which are fork-safe), so forking stays safe. Only imports move: each cell
still runs in its own child, from the same state, so every number is the one the child would have
computed after importing the module itself. The driver keeps its own signal handlers (a library
that installs one on import does not take over Ctrl-C), and what a module prints or warns while the
driver imports it goes nowhere, as it would have gone to the cell's log.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
from collections.abc import Iterable, Iterator

from runners.base import output_kept

_NEVER = ("__main__", "__mp_main__", "_pytest", "pytest", "ray")  # a host's own modules; Ray starts processes


def imported_since(before: set[str]) -> list[str]:
    """The modules imported after `before` was taken, in import order (sys.modules keeps insertion order)."""
    return [name for name in list(sys.modules) if name not in before]


def import_here(names: Iterable[str]) -> int:
    """Import `names` in this process (those not imported yet and importable); returns how many were imported."""
    todo = [n for n in names if n not in sys.modules and n.split(".", 1)[0] not in _NEVER]
    if not todo:
        return 0
    count = 0
    with output_kept(), _signal_handlers_kept():  # what the imports print is dropped, not shown over the display
        for name in todo:
            if name in sys.modules:  # imported meanwhile as a dependency of an earlier name
                continue
            try:
                importlib.import_module(name)
                count += 1
            except Exception:  # noqa: BLE001 - a module only its cell could import (a dynamic one): the child does
                continue
    return count


@contextlib.contextmanager
def _signal_handlers_kept() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)

