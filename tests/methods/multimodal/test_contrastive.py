"""CLIP-style baseline: its towers, symmetric similarities, learned temperature, and a small run above chance."""


import numpy as np
import pytest

from bench.context import RunContext
from methods.multimodal import contrastive
from tasks.multimodal import observe, paired_retrieval, retrieval_scores, score


def test_towers_parameter_count_and_initial_temperature():
    towers = contrastive.Towers(6, 5, contrastive.Config(hidden=8, embed_dim=3))
    expected = (6 * 8 + 8 + 8 * 3 + 3) + (5 * 8 + 8 + 8 * 3 + 3) + 1     # two MLPs and the logit scale
    assert sum(p.numel() for p in towers.parameters()) == expected
    assert towers.log_scale.exp().item() == pytest.approx(1 / 0.07)


def test_small_run_is_symmetric_and_far_above_chance():
    problem = paired_retrieval.build(paired_retrieval.Config(test_size=100, train_size=400), RunContext(0).for_task())
    result = contrastive.solve(problem, contrastive.Config(epochs=30), RunContext(0))
    sims, usage = observe(problem, result.model)
    np.testing.assert_array_equal(sims["t2i"], sims["i2t"].T)           # one joint space, one similarity
    assert usage is None                                                 # no gate
    rng = np.random.default_rng(0)
    shuffled = retrieval_scores(problem, rng.random((100, 100)), rng.random((100, 100)), rng.random((100, 10)))
    s = score(problem, result)
    assert s["mean_recall"] > 2 * shuffled["mean_recall"] and s["class_accuracy"] > 0.25
    assert s["trainable_params"] == 2 * (64 * 256 + 256 + 256 * 64 + 64) + 1


def test_config_validation():
    with pytest.raises(ValueError, match="embed_dim"):
        contrastive.Config(embed_dim=0)
