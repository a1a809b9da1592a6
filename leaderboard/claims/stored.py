"""What a paper's claims read of the store, read for the whole paper at once.

A paper's claims, negative controls and switched-off claims share cells, and each was one judge asking the store
about its own cells: at 100k runs the overview sent some thousand queries for nineteen papers, most of them about
papers with nothing stored. `PaperRuns.read_paper` asks once per paper (which of its keys are done, which stopped,
the done ones' metrics); each judge is then answered from memory, with the store's own answer wherever memory could
differ from it (a key not read, another task version, a stopped run whose order the store decides).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bench.errors import BenchError
from bench.registry import Registry
from bench.spec import Cell
from bench.sql import cell_keys
from bench.store import Store
from leaderboard.claims.cells import claim_groups, group_cells
from leaderboard.claims.model import CellGroup, Paper


class PaperRuns:
    """The store's done keys, stopped runs and metrics for the keys read; a cell group's cells and keys built once."""

    def __init__(self, store: Store, registry: Registry):
        self.store, self.registry = store, registry
        self._cells: dict[tuple, tuple[list[Cell], list[str]]] = {}
        self._versions: dict[str, int | None] = {}  # every key read, with the task version it was read at
        self._done: set[str] = set()
        self._stopped: set[str] = set()              # read keys whose run did not finish
        self._metrics: dict[str, dict[str, float]] = {}

    def cells(self, group: CellGroup, seeds: int) -> tuple[list[Cell], list[str]]:
        """The group's cells over `seeds` (claims.cells.group_cells) and their run keys, built once per group: the
        same cells recur in a paper's claims, controls and switched-off claims (a full config and two sha256 each)."""
        # repr tells 1 from 1.0 and True, and a list from a tuple: equal reprs are equal configs
        memo = (group.method, group.task, repr(sorted(group.method_config.items())),
                repr(sorted(group.task_config.items())), seeds)
        if memo not in self._cells:
            cells = group_cells(group, self.registry, seeds)
            self._cells[memo] = (cells, [cell_keys(c)[0] for c in cells])
        return self._cells[memo]

    def read_paper(self, paper: Paper, seeds: int | None = None) -> None:
        """Read every key the paper's verdicts may ask about: its claims', their negative controls' and their
        switched-off cells, at the claims' seeds (or `seeds`)."""
        versions: dict[str, int] = {}
        for claim in paper.claims:
            for group in claim_groups(claim, True, paper, self.registry):
                try:
                    cells, keys = self.cells(group, seeds or claim.seeds)
                except BenchError:
                    continue  # a judge that reaches this group raises it, as it did before
                versions.update((k, self.registry.task_version(c.task)) for c, k in zip(cells, keys, strict=True))
        self.read(versions)

    def read(self, versions: Mapping[str, int]) -> None:
        """Read these keys ({run key: task version now}): done, stopped, and the done ones' metrics."""
        keys = [k for k in versions if k not in self._versions]
        if not keys:
            return
        done = self.store.done_keys(keys, {k: versions[k] for k in keys})
        self._stopped |= set(self.store.unfinished(keys))
        self._metrics |= self.store.metrics(done) if done else {}
        self._done |= done
        self._versions |= {k: versions[k] for k in keys}

    def done_keys(self, keys: Iterable[str], versions: Mapping[str, int]) -> set[str]:
        """Store.done_keys, from memory when every key was read at the same task version."""
        keys = list(keys)
        if all(k in self._versions and self._versions[k] == versions.get(k) for k in keys):
            return {k for k in keys if k in self._done}
        return self.store.done_keys(keys, versions)

    def metrics(self, keys: Iterable[str]) -> dict[str, dict[str, float]]:
        """Store.metrics of done runs, from memory when each was read (shared dicts: read them, never change them)."""
        keys = list(keys)
        if all(k in self._done for k in keys):
            return {k: self._metrics[k] for k in keys if k in self._metrics}
        return self.store.metrics(keys)

    def unfinished(self, keys: Iterable[str]) -> dict[str, tuple[str, str | None]]:
        """Store.unfinished: {} from memory when every key was read and none stopped; else the store's own answer
        (its order decides which failure a verdict quotes)."""
        keys = list(keys)
        if all(k in self._versions and k not in self._stopped for k in keys):
            return {}
        return self.store.unfinished(keys)
