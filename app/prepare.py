"""The set-up the running commands share (run, grid, reproduce): the registry, seeds, limits, the refusal of hub
models on the CPU, the runner and the store."""

import math
from pathlib import Path

from bench.errors import BenchError
from bench.registry import Registry

MAX_WORKERS = 1024


def registry() -> Registry:
    return Registry.discover()


def seeds(seed: int | None, seeds: str | None) -> list[int]:
    """--seed or --seeds (default seed 0)."""
    from bench.cells import check_seed, parse_seeds

    if seed is not None and seeds is not None:
        raise BenchError("give --seed or --seeds, not both")
    if seeds is not None:
        return parse_seeds(seeds)
    return [check_seed(seed if seed is not None else 0)]


def check_limits(workers: int, timeout: float | None) -> None:
    """--workers and --timeout in range, before anything runs (a timeout of nan or inf enforces nothing)."""
    if not 1 <= workers <= MAX_WORKERS:
        raise BenchError(f"--workers {workers}: give 1 to {MAX_WORKERS} worker processes")
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise BenchError(f"--timeout {timeout}: give a positive number of seconds (or leave it out for no limit)")


def runner(name: str, workers: int = 1, address: str | None = None, threads: int | None = None,
           isolation: str = "worker"):
    """The runner `--runner NAME` picks, with the command's settings (runners/choice.py): a one-line error for an
    unknown name, or for --address without ray."""
    from runners.base import Settings
    from runners.choice import choose

    return choose(name, Settings(workers=workers, threads=threads, isolation=isolation, address=address))


def refuse_hub_models_on_cpu(overrides, hardware, advice: str) -> None:
    """A hub model asked for (a --set value, a grid file's or a claim's config) on hardware cpu is refused (exit 2,
    nothing stored) unless --allow-cpu: the cells would download an LLM and fine-tune it on the CPU, or spend minutes
    retrying downloads offline. Only what was asked for counts: some defaults name the hub models their paper-scale
    path loads (EraseAnything's CLIP judge), which the CPU worlds never touch."""
    words = {v for config in overrides for v in config.values() if isinstance(v, str) and "/" in v}
    if not words:  # a hub id is "org/name": nothing to check (and leaderboard.claims, its scipy, not imported)
        return
    from leaderboard.claims import looks_like_hub_id

    hub = sorted(v for v in words if looks_like_hub_id(v))
    if hub and "cpu" in hardware:
        raise BenchError(f"cells on hardware cpu name hub models ({', '.join(hub)}): they would be downloaded and "
                         f"trained on the CPU; {advice}, or pass --allow-cpu")


def open_store(db: str | None, store_retry: float | None = None):
    """The store the runs are written to (created if need be); saves retry `store_retry` seconds (default 60)."""
    from bench.store import Store
    from bench.writes import retry_budget

    retry_s = retry_budget(store_retry)
    store = Store.open(db)
    store.retry_s = retry_s
    return store


def store_or_empty(db):
    """The store; where the default store does not exist yet (a fresh checkout), an empty one in memory, so that
    the verdict locks' reference runs still show."""
    from bench.store import Store, make_engine, resolve_url

    if default_store_missing(resolve_url(db)):
        from bench.models import Base

        store = Store(make_engine("sqlite://"))
        Base.metadata.create_all(store.engine)  # the tables, read and never written: no migration history needed
        return store
    return Store.open(db, create=False)


def default_store_missing(url: str) -> bool:
    """The URL is the default ./bench.db and no such file exists yet (a fresh checkout)."""
    from bench.store import DEFAULT_URL

    return url == DEFAULT_URL and not Path(url[len("sqlite:///"):]).exists()
