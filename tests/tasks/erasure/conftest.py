"""A small erasure problem shared by the family's tests: a 1-block Flux trained for 60 steps in a
session-scoped temporary cache (the mechanics, not the paper's claims, are checked on it); and the
pipeline path's world: a tiny FluxPipeline and a tiny CLIP judge saved to temporary directories
(tests/fixtures/erasure/tiny_flux.py) and a problem built from them."""

import pytest

from bench.context import RunContext
from tasks.erasure import concept_erasure
from tests.fixtures.erasure.tiny_flux import RESOLUTION, build_judge, build_pipeline

SMALL = {"train_steps": 60, "layers": 1, "single_layers": 0, "n_eval": 6, "n_preserve": 3,
         "preserve": ("one", "two", "three"), "concept_images": 4, "sample_steps": 6}


@pytest.fixture(scope="session")
def small_cache(tmp_path_factory):
    """One cache root per test session (shared by the tasks' and the methods' tests), trained in it once."""
    return tmp_path_factory.getbasetemp() / "erasure-cache"


@pytest.fixture(scope="session")
def small_problem(small_cache):
    config = concept_erasure.Config(**SMALL)
    return concept_erasure.build(config, RunContext(0, cache_root=small_cache).for_task())


PIPELINE_SMALL = {"concept": "cat", "synonyms": ("kitten", "feline"), "irrelevant": ("dog", "car", "tree"),
                  "preserve": ("dog", "car"), "n_eval": 4, "n_preserve": 3, "concept_images": 4, "sample_steps": 4,
                  "resolution": RESOLUTION, "max_tokens": 12, "batch_size": 3}


@pytest.fixture(scope="session")
def tiny_pipeline_dir(tmp_path_factory):
    return str(build_pipeline(tmp_path_factory.mktemp("flux-pipeline")))


@pytest.fixture(scope="session")
def tiny_judge_dir(tmp_path_factory):
    return str(build_judge(tmp_path_factory.mktemp("clip-judge")))


@pytest.fixture(scope="session")
def pipeline_problem(tiny_pipeline_dir, tiny_judge_dir):
    config = concept_erasure.Config(**PIPELINE_SMALL, pipeline=tiny_pipeline_dir, judge=tiny_judge_dir)
    return concept_erasure.build(config, RunContext(0).for_task())
