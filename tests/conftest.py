"""Shared fixtures: a toy registry (tests/fixtures/bench_toy) and fresh SQLite stores."""

import os
import sys

import pytest

from bench.numerics import THREAD_VARIABLES
from bench.registry import Listing, Registry
from bench.store import Store
from tests.helpers import FIXTURES

TOY_METHODS = ("toy_noisy", "toy_shrunk", "toy_raise", "toy_sleep", "toy_crash", "toy_gpu", "toy_threads", "toy_warns",
              "toy_lazy_import")


def pytest_configure(config):
    """Under `pytest -n N` (N > 1) every worker, and every `bench` it starts, computes on one thread.

    Each worker otherwise starts torch's and the BLAS's pools at the machine's core count: two workers on CI's
    two cores ran four busy threads, and GNU OpenMP's spinning barriers then slowed the small models' many tiny
    ops about five-fold (a 21 s `bench run` of m3_jepa took over 600 s). The variables are set in the controller,
    before it starts the workers, so torch and numpy read them at import; an explicit setting is kept.
    """
    workers = getattr(config.option, "numprocesses", None)
    if workers and workers != 1 and not os.environ.get("PYTEST_XDIST_WORKER"):
        for name in THREAD_VARIABLES:
            os.environ.setdefault(name, "1")


def pytest_collection_modifyitems(items):
    """Items marked `cost(seconds)` first, dearest first; the rest after them in their own order.

    Under pytest-xdist this is the longest-first schedule: the slow tier's 900-second reproduction starts at once
    instead of running alone at the end while the other worker idles (.ci/run adds `--maxschedchunk 1`: xdist's
    default first chunk would hand one worker the ten dearest items at once). The order is the same in every worker,
    as xdist requires."""
    def cost(item) -> float:
        mark = item.get_closest_marker("cost")
        return mark.args[0] if mark is not None else -1.0
    items[:] = sorted(items, key=lambda item: -cost(item))            # stable: uncosted items keep their order


@pytest.fixture(scope="session")
def toy_registry() -> Registry:
    sys.path.insert(0, str(FIXTURES))
    listings = [Listing("task", "toy_target", "toy", "bench_toy.toy_target", "", "test")]
    listings += [Listing("method", name, "toy", f"bench_toy.{name}", "", "test") for name in TOY_METHODS]
    return Registry(listings)


@pytest.fixture(scope="session")
def registry() -> Registry:
    return Registry.discover()


@pytest.fixture
def store(tmp_path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'bench.db'}")
