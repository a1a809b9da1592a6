"""keyword_deletion (the erasure world's positive control): the edited model generates, for every scored prompt, exactly
what the base model generates for that prompt with the words taken out, so its metrics are the base model's on the
deleted prompts (the known answer); the null's deletion leaves the concept prompts as they were."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from methods.erasure import keyword_deletion
from methods.erasure.keyword_deletion import Config, DeletedProjection, without
from tasks.erasure import concept_scores, score


def test_without_takes_out_every_occurrence():
    assert without("a photo of the digit seven", ("seven", "7")) == "a photo of the digit"
    assert without("7 the digit of a photo", ("seven", "7")) == "the digit of a photo"
    assert without("a handwritten one", ("seven",)) == "a handwritten one"


def test_swap_replaces_only_rows_within_tolerance():
    keys = torch.tensor([[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 0.0]]])
    values = torch.tensor([[[9.0, 9.0], [9.0, 9.0]], [[7.0, 7.0], [7.0, 7.0]]])
    layer = DeletedProjection(torch.nn.Identity(), keys, values, tolerance=1e-3)
    text = torch.stack([keys[1] + 1e-5, keys[0], torch.tensor([[1.0, 0.0], [0.0, 1.1]])])  # near 1, equal 0, far
    out = layer(text)
    torch.testing.assert_close(out[0], values[1])
    torch.testing.assert_close(out[1], values[0])
    torch.testing.assert_close(out[2], text[2])                 # 0.1 away from key 0 (relative 0.07): unchanged


def _base_on(problem, words):
    """(latents, judged) of the base model on every scored prompt set with the words taken out."""
    latents, judged = {}, {}
    for name, prompts in problem.eval_prompts.items():
        deleted = [without(p, words) for p in prompts]
        latents[name] = problem.generate_latents(problem.transformer, deleted, problem.eval_noise[name])
        judged[name] = problem.judged(problem.transformer, deleted, problem.eval_noise[name])
    return latents, judged


@pytest.mark.parametrize("words", [(), ("one",)])
def test_generates_the_base_model_on_the_deleted_prompts(small_problem, words):
    problem = small_problem
    result = keyword_deletion.solve(problem, Config(words=words), RunContext(0))
    deleted = words or problem.keywords
    expected, judged = _base_on(problem, deleted)
    for name, prompts in problem.eval_prompts.items():
        ours = problem.generate_latents(result.transformer, prompts, problem.eval_noise[name])
        torch.testing.assert_close(ours, expected[name], atol=1e-5, rtol=1e-5)
        if not any(w in p.split() for p in prompts for w in deleted):     # untouched sets: the base model exactly
            assert torch.equal(ours, problem.generate_latents(problem.transformer, prompts, problem.eval_noise[name]))
    ours, known = score(problem, result), concept_scores(problem, judged)
    assert ours == pytest.approx(known, abs=1e-6)
    base = score(problem, keyword_deletion.ErasureResult(transformer=problem.transformer))
    if words:   # the null: no concept prompt changed, so the concept rates are the untreated model's
        for metric in ("concept_rate", "synonym_rate", "shuffled_rate"):
            assert ours[metric] == base[metric]
    else:       # the preserved prompts hold no keyword: preservation is the untreated model's exactly
        assert ours["preserve_accuracy"] == base["preserve_accuracy"] and ours["feature_fd"] == pytest.approx(0.0)


def test_skip_when_no_prompt_holds_the_words(small_problem):
    assert keyword_deletion.skip(small_problem, Config()) is None
    assert "none of the words" in keyword_deletion.skip(small_problem, Config(words=("nine",)))
    assert np.isfinite(small_problem.classifier_accuracy)
