"""multi_direction's switched-off setting (SWITCHED_OFF): K = 1 removes the secondary directions and nothing else."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.safety import multi_direction
from tasks.safety import score
from tests.helpers import smallest_refusal_problem


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return smallest_refusal_problem(tmp_path_factory.mktemp("c"))


def test_one_direction_drops_the_secondary_directions_and_keeps_the_dominant_one(problem):
    full = multi_direction.solve(problem, multi_direction.Config(secondary=3), RunContext(0))
    off = multi_direction.solve(problem, multi_direction.Config(secondary=1), RunContext(0))
    assert len(full.secondary.directions) == 2 and len(off.secondary.directions) == 0
    assert len(off.secondary_effect) == 0
    np.testing.assert_array_equal(off.layer_scores, full.layer_scores)
    assert off.direction_layer == full.direction_layer
    for field in ("ablated_refused", "attack_mask", "attacked_refused", "random_refused"):
        np.testing.assert_array_equal(getattr(off, field), getattr(full, field))
    assert off.attacked_prompts == full.attacked_prompts
    s_full, s_off = score(problem, full), score(problem, off)
    assert "secondary_effect" in s_full and "secondary_effect" not in s_off
    assert {k: v for k, v in s_full.items() if k != "secondary_effect"} == s_off
