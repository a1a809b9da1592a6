"""sft_ce and sft_label_smoothing: the loss they minimise, and what smoothing does to the tuned confidence."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from bench.context import RunContext
from methods.calibration import sft_ce, sft_label_smoothing
from methods.calibration._sft import sft_loss
from tasks.calibration import option_probs, score
from tests.tasks.calibration.test_sft_calibration import cache_root, small_world  # noqa: F401 - shared session fixtures


@pytest.mark.parametrize("beta", [0.0, 0.1])
def test_sft_loss_is_smoothed_ce_of_the_models_logits(small_world, beta):  # noqa: F811
    _, problem = small_world
    ids, labels = problem.sft_input_ids[:10], problem.sft_labels[:10]
    logits = problem.model(input_ids=ids).logits[:, :-1]
    expected = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), label_smoothing=beta)
    assert sft_loss(problem.model, ids, labels, beta).item() == pytest.approx(expected.item(), abs=1e-5)


def test_sft_loss_temperature_scales_the_logits(small_world):  # noqa: F811
    # τ: ℓ_τ = τ · CE_β(z / τ) (the authors' code's temperature), done by dividing the hidden states (the LM head
    # has no bias)
    _, problem = small_world
    ids, labels = problem.sft_input_ids[:10], problem.sft_labels[:10]
    logits = problem.model(input_ids=ids).logits[:, :-1] / 0.5
    expected = 0.5 * F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1),
                                     label_smoothing=0.1)
    assert sft_loss(problem.model, ids, labels, 0.1, temperature=0.5).item() == pytest.approx(expected.item(), abs=1e-5)


def _answer_prob(model, problem):
    """Full-vocabulary probability of the SFT answer letter on the SFT prompts."""
    with torch.no_grad():
        logits = model(input_ids=problem.sft_input_ids[:, :-1]).logits[:, -1]
    return torch.softmax(logits, -1).gather(1, problem.sft_input_ids[:, -1:]).mean().item()


def test_ce_saturates_and_smoothing_caps_the_answer_probability(small_world):  # noqa: F811
    _, problem = small_world
    ce = sft_ce.solve(problem, sft_ce.Config(lr=1e-2, epochs=30, batch_size=8), RunContext(seed=0))
    ls = sft_label_smoothing.solve(problem, sft_label_smoothing.Config(lr=1e-2, epochs=30, batch_size=8),
                                   RunContext(seed=0))
    # CE's optimum is a one-hot answer; smoothing's is the soft target 1 − β + β/V = 0.9016 (V = 64)
    assert _answer_prob(ce.model, problem) > 0.97
    assert _answer_prob(ls.model, problem) == pytest.approx(0.9 + 0.1 / 64, abs=0.03)
    # the smoothed loss cannot go below the soft target's entropy
    soft_entropy = -(0.9 + 0.1 / 64) * math.log(0.9 + 0.1 / 64) - 63 * (0.1 / 64) * math.log(0.1 / 64)
    assert ls.final_loss >= soft_entropy - 1e-6 and ls.final_loss < soft_entropy + 0.1
    assert ce.final_loss < 0.05
    assert problem.model.training is False  # the problem's model was copied, not tuned in place


def test_label_smoothing_at_beta_zero_is_sft_ce_bit_for_bit(small_world):  # noqa: F811
    # the switched-off paper method: β = 0 must be plain CE, the same weights to the last bit
    _, problem = small_world
    settings = {"lr": 1e-2, "epochs": 2, "batch_size": 8}
    ce = sft_ce.solve(problem, sft_ce.Config(**settings), RunContext(seed=3))
    ls0 = sft_label_smoothing.solve(problem, sft_label_smoothing.Config(beta=0.0, **settings), RunContext(seed=3))
    ce_state, ls_state = ce.model.state_dict(), ls0.model.state_dict()
    assert ce_state.keys() == ls_state.keys() and all(torch.equal(ce_state[k], ls_state[k]) for k in ce_state)
    assert ce.final_loss == ls0.final_loss
    assert score(problem, ce) == score(problem, ls0)


def _sft_fact_accuracy(model, problem):
    """Accuracy on the evaluation questions about SFT facts, and the Bayes (mode) accuracy on them."""
    on_sft = np.isin(problem.eval_input_ids[:, 0].numpy(), problem.sft_input_ids[:, 0].numpy())
    pick = option_probs(model, problem)[0].argmax(1)
    answers = problem.eval_answers[on_sft]
    return (pick[on_sft] == answers).mean(), (problem.eval_bayes[on_sft].argmax(1) == answers).mean()


def test_ce_sft_teaches_the_sft_facts_modes_and_an_unmoved_model_learns_nothing(small_world):  # noqa: F811
    _, problem = small_world
    before, bayes = _sft_fact_accuracy(problem.model, problem)
    tuned = sft_ce.solve(problem, sft_ce.Config(lr=1e-2, epochs=10, batch_size=8), RunContext(seed=0))
    after, _ = _sft_fact_accuracy(tuned.model, problem)
    assert after == bayes                              # every SFT fact now answered with its mode
    assert after - before > 0.1                        # the rare SFT facts were not known before (seed 0: 2 of 4)
    unmoved = sft_ce.solve(problem, sft_ce.Config(lr=1e-12), RunContext(seed=0))  # the claims' "not fine-tuned"
    state, moved = problem.model.state_dict(), unmoved.model.state_dict()
    assert max((state[k] - moved[k]).abs().max().item() for k in state) < 1e-9   # Adam steps of ~1e-12
    assert np.abs(option_probs(unmoved.model, problem)[0] - option_probs(problem.model, problem)[0]).max() < 1e-6
    assert _sft_fact_accuracy(unmoved.model, problem)[0] == before


@pytest.mark.parametrize("module,bad", [(sft_label_smoothing, {"beta": 1.5}), (sft_label_smoothing, {"lr": 0.0}),
                                        (sft_ce, {"epochs": 0}), (sft_label_smoothing, {"temperature": 0.0})])
def test_config_rejects_bad_values(module, bad):
    with pytest.raises(ValueError):
        module.Config(**bad)
