"""Shared fixtures: a toy registry (tests/fixtures/bench_toy) and fresh SQLite stores."""

import signal
import sys
from pathlib import Path

import pytest

from bench.registry import Listing, Registry
from bench.store import Store

FIXTURES = Path(__file__).parent / "fixtures"
TOY_METHODS = ("toy_noisy", "toy_raise", "toy_sleep", "toy_crash", "toy_gpu")


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
