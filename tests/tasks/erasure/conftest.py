"""A small erasure problem shared by the family's tests: a 1-block Flux trained for 60 steps in a
session-scoped temporary cache (the mechanics, not the paper's claims, are checked on it)."""

import pytest

from bench.context import RunContext
from tasks.erasure import concept_erasure

SMALL = {"train_steps": 60, "layers": 1, "single_layers": 0, "n_eval": 6, "n_preserve": 3,
         "preserve": ("one", "two", "three"), "concept_images": 4, "sample_steps": 6}


@pytest.fixture(scope="session")
def small_cache(tmp_path_factory):
    """One directory per test session (shared by the tasks' and the methods' tests), trained in it once."""
    return str(tmp_path_factory.getbasetemp() / "erasure-cache")


@pytest.fixture(scope="session")
def small_problem(small_cache):
    config = concept_erasure.Config(**SMALL, cache_dir=small_cache)
    return concept_erasure.build(config, RunContext(0).for_task())
