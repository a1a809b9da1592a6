"""Shared fixtures: a toy registry (tests/fixtures/bench_toy) and fresh SQLite stores."""

import os
import signal
import sys
from pathlib import Path

import pytest

from bench.registry import Listing, Registry
from bench.store import Store
from bench.numerics import THREAD_VARIABLES

FIXTURES = Path(__file__).parent / "fixtures"
TOY_METHODS = ("toy_noisy", "toy_raise", "toy_sleep", "toy_crash", "toy_gpu", "toy_threads")


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


def default_sigint() -> None:
    """preexec_fn of a driver a test interrupts with SIGINT: the default disposition, so its Python raises
    KeyboardInterrupt even when the test run itself was started in the background (shells start background jobs
    with SIGINT ignored, and an ignored disposition is inherited through exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
