"""EraseAnything's loss terms against hand-computed values, the bi-level alternation, and the baselines' targets."""

import math

import numpy as np
import pytest
import torch

from bench.context import RunContext
from methods.erasure import ca, eraseanything, esd, no_erasure
from methods.erasure._common import augmented_prompt, esd_target
from tasks.erasure import score
from tasks.erasure._backbone import Text


def test_attention_regulariser_equals_a_hand_computed_value():
    """Σ_q Σ_{k∈K} ‖A[:, :, q, k]‖₂ over (batch, head): B = 1, H = 2, L = 3, K = {1}."""
    probs = torch.zeros(1, 2, 3, 3)
    probs[0, 0, :, 1] = torch.tensor([0.3, 0.4, 0.0])
    probs[0, 1, :, 1] = torch.tensor([0.4, 0.3, 1.0])
    probs[0, 0, :, 0] = 0.9  # other columns do not count
    assert eraseanything.attention_loss(probs, [1]).item() == pytest.approx(0.5 + 0.5 + 1.0)
    assert eraseanything.attention_loss(probs, [0, 1]).item() == pytest.approx(2.0 + 3 * 0.9)


def test_keyword_attention_is_head_zero_averaged_over_the_keyword_columns():
    probs = torch.arange(2 * 2 * 3 * 3, dtype=torch.float32).reshape(2, 2, 3, 3)
    a = eraseanything.keyword_attention(probs, [0, 2])
    torch.testing.assert_close(a, (probs[:, 0, :, 0] + probs[:, 0, :, 2]) / 2)


def test_rscl_sign_convention_matches_the_code():
    """L = ℓ_c − logsumexp(ℓ_c, ℓ_1..ℓ_K) (log-softmax of the concept's logit), ℓ = cos(a_syn, ·)/τ."""
    a_syn = torch.tensor([[1.0, 0.0]])
    a_c = torch.tensor([[1.0, 1.0]])                   # cos = 1/√2
    a_irr = torch.tensor([[[0.0, 2.0]], [[3.0, 0.0]]])  # cos = 0 and 1
    tau = 0.07
    l_c, l_k = (1 / math.sqrt(2)) / tau, [0.0, 1 / tau]
    expected = l_c - math.log(math.exp(l_c) + sum(math.exp(v) for v in l_k))
    assert eraseanything.rscl_loss(a_c, a_syn, a_irr, tau).item() == pytest.approx(expected, rel=1e-5)
    # lowering the loss moves the concept's keyword attention away from the synonym's
    far = eraseanything.rscl_loss(torch.tensor([[0.0, 1.0]]), a_syn, a_irr, tau)
    assert far < eraseanything.rscl_loss(a_c, a_syn, a_irr, tau)


class _LinearBackbone:
    """v(x, t | text) = x · mean(text tokens) so the ESD target can be computed by hand."""

    def velocity(self, model, x, text, t):
        return x * text.tokens.mean()


def test_esd_target_is_negative_guidance():
    x, t = torch.ones(1, 16, 4), torch.full((1,), 0.5)
    text_p, text_0 = Text(torch.full((1, 8, 32), 3.0), None), Text(torch.full((1, 8, 32), 1.0), None)
    target = esd_target(_LinearBackbone(), None, x, t, text_p, text_0, eta=2.0)
    torch.testing.assert_close(target, torch.full((1, 16, 4), 1.0 - 2.0 * (3.0 - 1.0)))


def test_prompt_augmentation_keeps_the_keyword_indices(small_problem):
    rng = np.random.default_rng(0)
    shuffled = synonyms = 0
    for _ in range(200):
        words, keys = augmented_prompt(small_problem, rng)
        assert len(keys) == 1 and words[keys[0]] in small_problem.keywords
        synonyms += words[keys[0]] != "seven"
        shuffled += words not in [t.format(words[keys[0]]).split() for t in small_problem.templates]
    assert 70 < synonyms < 130 and shuffled > 120  # p = 0.5 and 0.9 (minus shuffles that keep the order)


def test_bilevel_alternation_and_its_switch(small_problem):
    ctx = RunContext(0)
    eraseanything.solve(small_problem, eraseanything.Config(iterations=6), ctx)
    assert [s for s, _ in ctx.curves["esd"]] == [0, 2, 4] and [s for s, _ in ctx.curves["rscl"]] == [1, 3, 5]
    assert [s for s, _ in ctx.curves["fm"]] == [1, 3, 5] and [s for s, _ in ctx.curves["attn"]] == [0, 2, 4]
    only = RunContext(0)
    eraseanything.solve(small_problem, eraseanything.Config(iterations=4, lambda_fm=0.0, lambda_rscl=0.0), only)
    assert [s for s, _ in only.curves["esd"]] == [0, 1, 2, 3] and "fm" not in only.curves


@pytest.mark.parametrize("module", [eraseanything, esd, ca])
def test_methods_edit_a_copy_and_return_a_plain_model(small_problem, module):
    before = [p.detach().clone() for p in small_problem.transformer.parameters()]
    result = module.solve(small_problem, module.Config(**module.SMOKE), RunContext(1))
    assert type(result.transformer) is type(small_problem.transformer)
    assert not any(p.requires_grad for p in result.transformer.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, small_problem.transformer.parameters(), strict=True))
    assert any(not torch.equal(a, b) for a, b in zip(before, result.transformer.parameters(), strict=True))
    assert 0.0 <= score(small_problem, result)["concept_rate"] <= 1.0


def test_no_erasure_is_the_original(small_problem):
    result = no_erasure.solve(small_problem, no_erasure.Config(), RunContext(0))
    assert result.transformer is small_problem.transformer
