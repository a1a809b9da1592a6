"""A session-wide tiny trained pair (cached on disk by the task, keyed by its settings)."""

import pytest

from bench.context import RunContext
from tasks.decoding.hetero_vocab_pairs import Config, build

TRAINED = {"prompts_per_kind": 2, "max_new_tokens": 24, "documents": 600, "train_steps": 150, "target_layers": 1,
           "target_width": 32, "drafter_width": 16}


@pytest.fixture(scope="session")
def trained_pair():
    return build(Config(**TRAINED), RunContext(seed=0))
