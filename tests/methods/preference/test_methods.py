"""Mechanisms on the tiny model: DPO's gradient at π = π_ref, the degenerate settings of SimpleMix, EPA, LOGO, HyPO."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from bench.toolkit.causal_lm import load_causal_lm, sample, sequence_logprobs
from methods.preference import dpo, dpo_mix_p, epa, hypo, logo, simplemix, simpo
from methods.preference._common import completions
from methods.preference._losses import dpo_loss

FAST = {"batch_size": 8}


def _same(a, b):
    assert a.responses == b.responses
    np.testing.assert_allclose(a.logp_policy, b.logp_policy, atol=1e-5)
    np.testing.assert_allclose(a.logp_ref, b.logp_ref, atol=1e-5)


def test_dpo_gradient_at_the_reference_is_half_beta_times_the_score_difference(world):
    """At θ = θ_ref every margin is 0, so ∇L = −(β/2)(∇log π(y_w) − ∇log π(y_l)) (σ(0) = ½), checked on the model."""
    policy, tok = load_causal_lm(world.sft_path)
    prompts = list(world.train_prompts[:4])
    chosen, rejected = [r[0] for r in world.off_policy[:4]], [r[-1] for r in world.off_policy[:4]]
    with torch.no_grad():
        ref_w = sequence_logprobs(policy, tok, prompts, completions(chosen))
        ref_l = sequence_logprobs(policy, tok, prompts, completions(rejected))
    beta = 0.1
    pw, pl = (sequence_logprobs(policy, tok, prompts, completions(chosen)),
              sequence_logprobs(policy, tok, prompts, completions(rejected)))
    loss = dpo_loss(pw, pl, ref_w, ref_l, beta).mean()
    assert loss.item() == pytest.approx(np.log(2), abs=1e-6)
    params = [p for p in policy.parameters()]
    grad = torch.autograd.grad(loss, params, retain_graph=True)
    score = torch.autograd.grad((-beta / 2) * (pw - pl).mean(), params)
    for g, s in zip(grad, score, strict=True):
        torch.testing.assert_close(g, s, atol=1e-7, rtol=1e-5)


def test_mixing_share_and_its_endpoints(world):
    mixed = simplemix.solve(world, simplemix.Config(**FAST), RunContext(seed=0))
    assert mixed.on_policy_fraction == 0.5                              # 16 of the 32 prompts (if 16 have no tie)
    _same(simplemix.solve(world, simplemix.Config(alpha=1.0, **FAST), RunContext(seed=1)),
          dpo.solve(world, dpo.Config(source="on", **FAST), RunContext(seed=1)))
    off = dpo.solve(world, dpo.Config(source="off", **FAST), RunContext(seed=1))
    _same(simplemix.solve(world, simplemix.Config(alpha=0.0, **FAST), RunContext(seed=1)), off)
    assert off.on_policy_fraction == 0.0


def test_epa_objective_with_one_strong_and_no_weak_negative_is_the_dpo_objective_on_the_model(world):
    """Value and gradient of EPA's batch objective (k_s = 1, k_w = 0, w = 1) equal DPO's on best vs worst."""
    policy, tok = load_causal_lm(world.sft_path)
    ref, _ = load_causal_lm(world.sft_path)
    with torch.no_grad():  # move the policy off the reference so the margins are not all 0
        for p in policy.parameters():
            p.add_(0.01 * torch.randn(p.shape, generator=torch.Generator().manual_seed(0)))
    prompts, ranked = list(world.train_prompts), list(world.off_policy)
    config = epa.Config(strong_negatives=1, weak_negatives=0, beta=0.5)
    idx = [0, 9, 17, 30]
    value = epa.make_objective(policy, ref, tok, prompts, ranked, config, torch.Generator().manual_seed(0))(idx)

    def lp(model, ys):
        return sequence_logprobs(model, tok, [prompts[i] for i in idx], completions(ys))

    yw, yl = [ranked[i][0] for i in idx], [ranked[i][-1] for i in idx]
    with torch.no_grad():
        ref_w, ref_l = lp(ref, yw), lp(ref, yl)
    expected = dpo_loss(lp(policy, yw), lp(policy, yl), ref_w, ref_l, 0.5).mean()
    assert value.item() == pytest.approx(expected.item(), abs=1e-6) and abs(value.item() - np.log(2)) > 1e-3
    params = list(policy.parameters())
    for g, h in zip(torch.autograd.grad(value, params), torch.autograd.grad(expected, params), strict=True):
        torch.testing.assert_close(g, h, atol=1e-6, rtol=1e-4)


def test_logo_with_one_rejected_answer_and_no_sft_term_is_simpo(world):
    _same(logo.solve(world, logo.Config(m=1, sft_weight=0.0, beta=2.5, gamma_beta_ratio=0.1, **FAST),
                     RunContext(seed=3)),
          simpo.solve(world, simpo.Config(**FAST), RunContext(seed=3)))


def test_logo_released_weighting_reaches_the_objective(world):
    """The authors' released weighting (¾ on the first rejected answer) trains another policy than the paper's ½ / ½;
    at M = 1 the two are one loss (_losses.logo_loss) and train the same policy."""
    paper = logo.solve(world, logo.Config(**FAST), RunContext(seed=3))
    released = logo.solve(world, logo.Config(negative_weighting="released", **FAST), RunContext(seed=3))
    assert np.abs(np.asarray(paper.logp_policy) - np.asarray(released.logp_policy)).max() > 1e-4
    _same(logo.solve(world, logo.Config(m=1, negative_weighting="released", **FAST), RunContext(seed=3)),
          logo.solve(world, logo.Config(m=1, **FAST), RunContext(seed=3)))


def test_hypo_without_its_kl_term_is_off_policy_dpo(world):
    _same(hypo.solve(world, hypo.Config(kl_weight=0.0, **FAST), RunContext(seed=4)),
          dpo.solve(world, dpo.Config(source="off", **FAST), RunContext(seed=4)))


def test_tilted_samplers_are_the_policy_when_it_equals_the_reference(world):
    """(1+γ)ℓ − γℓ = ℓ: with π_θ = π_ref both DPO-Mix-P samplers draw exactly what π_θ draws."""
    model, tok = load_causal_lm(world.sft_path)
    prompts = list(world.train_prompts) * 2
    plain = sample(model, tok, prompts, generator=torch.Generator().manual_seed(0))
    tilted = sample([model, model], tok, prompts, generator=torch.Generator().manual_seed(0),
                    combine=lambda ls: 2.0 * ls[0] - 1.0 * ls[1])
    assert plain == tilted
    result = dpo_mix_p.solve(world, dpo_mix_p.Config(**FAST), RunContext(seed=5))
    assert len(result.responses) == len(world.eval_prompts) and np.isfinite(result.logp_policy).all()


@pytest.mark.parametrize("module,bad", [(simplemix, {"alpha": 1.5}), (dpo, {"source": "both"}),
                                        (epa, {"strong_negatives": 0}),
                                        (logo, {"m": 0}), (logo, {"negative_weighting": "both"}),
                                        (hypo, {"kl_weight": -1.0}), (dpo_mix_p, {"mix_prob": 2.0})])
def test_bad_configs_name_the_value(module, bad):
    with pytest.raises(ValueError, match=str(list(bad.values())[0])):
        module.Config(**bad)


def test_logo_released_weighting_needs_at_most_two_rejected_answers():
    with pytest.raises(ValueError, match="m 3"):
        logo.Config(m=3, negative_weighting="released")
