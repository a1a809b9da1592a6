"""The calibration world's positive control: SFT on the true answer distributions keeps the model calibrated; its null
(one-hot targets at the mode) is plain CE."""

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from bench.context import RunContext
from methods.calibration import bayes_target_oracle as oracle
from methods.calibration._sft import sft_loss
from tasks.calibration import option_probs, score
from tests.tasks.calibration.test_sft_calibration import cache_root, small_world  # noqa: F401 - shared session fixtures


def test_targets_are_each_sft_facts_true_distribution(small_world):  # noqa: F811
    _, problem = small_world
    q = oracle.soft_targets(problem).numpy()
    entity = problem.sft_input_ids[:, 0].numpy()
    for e in np.unique(entity):
        rows = problem.eval_bayes[problem.eval_input_ids[:, 0].numpy() == e]
        np.testing.assert_allclose(q[entity == e], np.broadcast_to(rows[0], q[entity == e].shape), atol=1e-7)
    # the null's one-hot row is the SFT set's own answer (the mode of p_i)
    mode = oracle.soft_targets(problem, mode=True).numpy()
    assert set(mode.sum(1)) == {1.0}
    np.testing.assert_array_equal(np.asarray(problem.letter_ids)[mode.argmax(1)], problem.sft_input_ids[:, -1].numpy())


def test_loss_is_soft_cross_entropy_and_the_nulls_is_sft_ce(small_world):  # noqa: F811
    _, problem = small_world
    ids, labels = problem.sft_input_ids[:10], problem.sft_labels[:10]
    letters = list(problem.letter_ids)
    logits = problem.model(input_ids=ids).logits[:, -2]
    full = torch.zeros_like(logits)
    q = oracle.soft_targets(problem)[:10]
    full[:, letters] = q
    expected = F.cross_entropy(logits, full)  # probability targets over the whole vocabulary
    assert oracle.soft_target_loss(problem.model, ids, q, letters).item() == pytest.approx(expected.item(), abs=1e-5)
    one_hot = oracle.soft_targets(problem, mode=True)[:10]
    assert oracle.soft_target_loss(problem.model, ids, one_hot, letters).item() == pytest.approx(
        sft_loss(problem.model, ids, labels, 0.0).item(), abs=1e-5)


def test_the_oracle_learns_p_and_its_null_becomes_over_confident(small_world):  # noqa: F811
    _, problem = small_world
    settings = {"lr": 1e-2, "epochs": 30, "batch_size": 8}
    tuned = oracle.solve(problem, oracle.Config(**settings), RunContext(seed=0))
    null = oracle.solve(problem, oracle.Config(mode=True, **settings), RunContext(seed=0))
    sft_facts = np.isin(problem.eval_input_ids[:, 0].numpy(), problem.sft_input_ids[:, 0].numpy())
    renorm, _ = option_probs(tuned.model, problem)
    # on the tuned facts the letters' distribution is the fact's p_i
    np.testing.assert_allclose(renorm[sft_facts], problem.eval_bayes[sft_facts], atol=0.05)
    null_renorm, _ = option_probs(null.model, problem)
    assert null_renorm[sft_facts].max(1).min() > 0.97
    ours, ce = score(problem, tuned), score(problem, null)
    assert ours["ece_after"] < 0.1 and ce["ece_after"] > ours["ece_after"] + 0.2
    assert problem.model.training is False  # the problem's model was copied, not tuned in place


def test_skipped_when_an_sft_fact_has_no_distribution(small_world):  # noqa: F811
    _, problem = small_world
    keep = problem.eval_input_ids[:, 0] != problem.sft_input_ids[0, 0]
    partial = dataclasses.replace(problem, eval_input_ids=problem.eval_input_ids[keep],
                                  eval_answers=problem.eval_answers[keep.numpy()],
                                  eval_bayes=problem.eval_bayes[keep.numpy()])
    assert "no evaluation question" in oracle.skip(partial, oracle.Config())
    assert oracle.skip(problem, oracle.Config()) is None
