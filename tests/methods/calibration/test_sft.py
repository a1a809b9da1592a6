"""sft_ce and sft_label_smoothing: the loss they minimise, and what smoothing does to the tuned confidence."""

import copy
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
                                        (sft_ce, {"epochs": 0}), (sft_label_smoothing, {"temperature": 0.0}),
                                        (sft_label_smoothing, {"loss_reduction": "none"}),
                                        (sft_ce, {"loss_reduction": "token"})])
def test_config_rejects_bad_values(module, bad):
    with pytest.raises(ValueError):
        module.Config(**bad)


# The reduction over answer tokens: ours "mean" (the default), the authors' sweeps "sum" (Calibrating-LLMs-with-Label-
# Smoothing, openinstruct/own-scripts-v2/finetune_with_accelerate_config-alpaca-label_smoothing.sh l.28, at the same
# learning rates as "mean"). With k answer tokens in the batch the sum is k × the mean, and AdamW turns a gradient k·g
# into the update it gives g with ε/k: the same step up to ε.


@pytest.mark.parametrize("beta,temperature", [(0.0, 1.0), (0.1, 1.0), (0.1, 0.5)])
def test_sum_reduction_is_the_mean_times_the_answer_tokens(small_world, beta, temperature):  # noqa: F811
    _, problem = small_world
    ids, labels = problem.sft_input_ids[:10], problem.sft_labels[:10]
    k = int((labels[:, 1:] != -100).sum())
    model = copy.deepcopy(problem.model)
    mean = sft_loss(model, ids, labels, beta, temperature, "mean")
    (g_mean,) = torch.autograd.grad(mean, model.get_output_embeddings().weight)
    total = sft_loss(model, ids, labels, beta, temperature, "sum")
    (g_sum,) = torch.autograd.grad(total, model.get_output_embeddings().weight)
    assert k == 10 and total.item() == pytest.approx(k * mean.item(), rel=1e-6)
    torch.testing.assert_close(g_sum, k * g_mean, rtol=1e-5, atol=1e-7)


def _adamw_step(model, loss_fn, lr: float, eps: float) -> dict[str, torch.Tensor]:
    """One AdamW step (bench/toolkit/training's optimiser: weight decay 0) from `model`: the parameter changes."""
    tuned = copy.deepcopy(model).double()
    before = {n: p.detach().clone() for n, p in tuned.named_parameters()}
    optimiser = torch.optim.AdamW(tuned.parameters(), lr=lr, weight_decay=0.0, eps=eps)
    loss_fn(tuned).backward()
    optimiser.step()
    return {n: p.detach() - before[n] for n, p in tuned.named_parameters()}


def test_one_adamw_step_is_the_same_under_sum_and_mean_at_the_same_learning_rate(small_world):  # noqa: F811
    _, problem = small_world
    ids, labels = problem.sft_input_ids[:8], problem.sft_labels[:8]
    k, lr, eps = 8, 1e-3, 1e-8                                       # 8 sequences, one answer token each

    def loss(reduction):
        return lambda model: sft_loss(model, ids, labels, 0.1, 1.0, reduction)

    mean, total = _adamw_step(problem.model, loss("mean"), lr, eps), _adamw_step(problem.model, loss("sum"), lr, eps)
    # exactly: sum at ε is mean at ε/k (m and √v both scale by k)
    mean_eps_k = _adamw_step(problem.model, loss("mean"), lr, eps / k)
    for name in mean:
        torch.testing.assert_close(total[name], mean_eps_k[name], rtol=1e-9, atol=1e-15)
    # at the same ε: first step −lr·g/(|g| + ε) against −lr·g/(|g| + ε/k), apart by at most lr·ε/(|g| + ε)
    model = copy.deepcopy(problem.model).double()
    grads = torch.autograd.grad(loss("mean")(model), list(model.parameters()), allow_unused=True)
    for (name, _), g in zip(model.named_parameters(), grads, strict=True):
        g = torch.zeros_like(mean[name]) if g is None else g.abs()
        gap = (total[name] - mean[name]).abs()
        assert (gap <= lr * eps / (g + eps) + 1e-15).all(), name
        assert (gap[g >= 1e-5] <= 1e-3 * lr).all(), name             # where |g| ≫ ε: equal to 0.1 % of the step
    assert max(v.abs().max().item() for v in mean.values()) == pytest.approx(lr, rel=1e-3)


def test_sum_and_mean_train_alike_when_every_batch_has_the_same_answer_tokens(small_world):  # noqa: F811
    """32 SFT sequences in batches of 8, one answer token each: k = 8 in every step, so the two runs differ only
    through ε (and float rounding); the loss reported is k × the mean's."""
    _, problem = small_world
    settings = {"lr": 1e-2, "epochs": 2, "batch_size": 8}
    mean = sft_label_smoothing.solve(problem, sft_label_smoothing.Config(**settings), RunContext(seed=3))
    total = sft_label_smoothing.solve(problem, sft_label_smoothing.Config(loss_reduction="sum", **settings),
                                      RunContext(seed=3))
    assert len(problem.sft_input_ids) == 32
    assert total.final_loss == pytest.approx(8 * mean.final_loss, rel=1e-3)
    a, b = mean.model.state_dict(), total.model.state_dict()
    assert max((a[n] - b[n]).abs().max().item() for n in a) < 1e-3 * settings["lr"] * 8  # 8 steps of at most lr
    np.testing.assert_allclose(option_probs(total.model, problem)[0], option_probs(mean.model, problem)[0], atol=1e-4)
