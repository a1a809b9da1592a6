"""The switched-off settings (SWITCHED_OFF) are the baselines bit for bit: long_short_alignment at α = 0 is `plain`,
output_reparam with f = identity is `plain` (the same training, the same draws, the same weights)."""

import numpy as np

from bench.context import RunContext
from methods.length_generalization import long_short_alignment, output_reparam, plain
from tasks.length_generalization import length_prediction, topic_lm

TINY = {"steps": 4, "batch_size": 4, "checkpoints": 2, "model": "micro-llama-lm"}


def test_long_short_alignment_at_alpha_zero_is_plain(tmp_path):
    problem = topic_lm.build(topic_lm.Config(**topic_lm.SMALLEST), RunContext(0, cache_root=tmp_path).for_task())
    # separate caches: each trains its own model (both would otherwise load the one training their settings share)
    off_ctx, plain_ctx = RunContext(2, cache_root=tmp_path / "a"), RunContext(2, cache_root=tmp_path / "b")
    off = long_short_alignment.solve(problem, long_short_alignment.Config(alpha=0.0, **TINY), off_ctx)
    base = plain.solve(problem, plain.Config(**TINY), plain_ctx)
    assert off_ctx.curves == plain_ctx.curves and len(off_ctx.curves["train_loss"]) == 4
    tokens = problem.eval_tokens[16]
    np.testing.assert_array_equal(off.log_probs(tokens), base.log_probs(tokens))
    assert [s for s, _ in off.checkpoints] == [s for s, _ in base.checkpoints]
    for (_, a), (_, b) in zip(off.checkpoints, base.checkpoints, strict=True):
        np.testing.assert_array_equal(a(tokens), b(tokens))


def test_output_reparam_with_the_identity_is_plain(tmp_path, monkeypatch):
    problem = length_prediction.build(length_prediction.Config(**length_prediction.SMALLEST),
                                      RunContext(0, cache_root=tmp_path).for_task())
    config = plain.Config(steps=3, batch_size=4, width=16)
    monkeypatch.setattr(output_reparam, "forward", lambda n: n)
    monkeypatch.setattr(output_reparam, "inverse", lambda y: y)
    off = output_reparam.solve(problem, config, RunContext(1, cache_root=tmp_path))
    base = plain.solve(problem, config, RunContext(1, cache_root=tmp_path))
    assert off.predictions.keys() == base.predictions.keys()
    for length in base.predictions:
        np.testing.assert_array_equal(off.predictions[length], base.predictions[length])
