"""DPO, EPA, IPO on the tabular bandit world (docs/papers/epa.md): EPA → DPO, the DPO minimiser's non-uniqueness,
negatives."""

import math

import numpy as np
import pytest
import torch

from bench.context import RunContext
from bench.registry import Registry
from methods.preference import dpo, dpo_mix_p, epa, hypo, ipo, logo, sft, simplemix, simpo
from methods.preference._bandit import BanditPolicy
from methods.preference._losses import dpo_loss, ipo_loss
from tasks.preference import BanditPreferenceProblem, preference_bandit, score

BETA = 0.1


@pytest.fixture(scope="module")
def world():
    torch.set_num_threads(1)
    return preference_bandit.build(preference_bandit.Config(), RunContext(seed=0).for_task())


def _moved_policy(world, seed=0):
    """A free table moved off π_ref, so that the margins are not all 0."""
    return BanditPolicy(world.ref_logp, "table", init_noise=1.0, generator=torch.Generator().manual_seed(seed))


def test_epa_with_one_strong_and_no_weak_negative_is_dpo_on_best_vs_worst(world):
    """L_EPA(k_s = 1, k_w = 0, w = 1) == L_DPO (EPA's reduction to DPO, < 1e-6): value and gradient, then whole runs."""
    policy = _moved_policy(world)
    every = list(range(len(world.lists)))
    value = epa.bandit_objective(world, epa.Config(strong_negatives=1, weak_negatives=0), None)(policy)(every)
    expected = dpo.bandit_objective(world, dpo.Config(beta=BETA, pairs="best_vs_worst"))(policy)(every)
    assert value.item() == pytest.approx(expected.item(), abs=1e-6) and abs(value.item() - math.log(2)) > 1e-2
    (g,), (h,) = torch.autograd.grad(value, [policy.logits]), torch.autograd.grad(expected, [policy.logits])
    torch.testing.assert_close(g, h, atol=1e-9, rtol=0)
    settings = {"bandit_steps": 100, "bandit_batch": 8}
    a = epa.solve(world, epa.Config(strong_negatives=1, weak_negatives=0, **settings), RunContext(seed=3))
    b = dpo.solve(world, dpo.Config(beta=BETA, pairs="best_vs_worst", **settings), RunContext(seed=3))
    np.testing.assert_allclose(a.log_policy, b.log_policy, atol=1e-9)
    assert a.train_loss == pytest.approx(b.train_loss, abs=1e-9)


def test_dpo_pairs_are_the_binarized_pair_or_best_against_each(world):
    """best_vs_each: the mean of the K − 1 = 3 pair losses of each list; binarized: best vs the stored other."""
    policy = _moved_policy(world, seed=1)
    logp, ref = policy().detach(), torch.as_tensor(world.ref_logp)
    x, lists, idx = world.list_prompts[:5], world.lists[:5], [0, 1, 2, 3, 4]

    def pair(y_w, y_l):
        return dpo_loss(logp[x, y_w], logp[x, y_l], ref[x, y_w], ref[x, y_l], BETA)

    each = torch.stack([pair(lists[:, 0], lists[:, j]) for j in (1, 2, 3)]).mean()
    with torch.no_grad():
        got = dpo.bandit_objective(world, dpo.Config(beta=BETA, pairs="best_vs_each"))(policy)(idx)
        binarized = dpo.bandit_objective(world, dpo.Config(beta=BETA))(policy)(idx)
    assert got.item() == pytest.approx(each.item(), abs=1e-12)
    assert binarized.item() == pytest.approx(pair(lists[:, 0], world.binarized[:5]).mean().item(), abs=1e-12)


def _two_answer_problem():
    """Two prompts over V = 5; each compares answers a, b four times, a winning three: the DPO minimiser has margin
    r(a) − r(b) = ln 3 (σ = ¾) and loss H(¾) = −(¾ ln ¾ + ¼ ln ¼); answers 2..4 never appear in the data."""
    rng = np.random.default_rng(0)
    ref = np.log(rng.dirichlet(np.ones(5), size=2))
    lists = np.array([[0, 1], [0, 1], [0, 1], [1, 0]] * 2)
    return BanditPreferenceProblem(ref_logp=ref, list_prompts=np.repeat([0, 1], 4), lists=lists, binarized=lists[:, 1],
                                   label_temperature=1.0, true_reward=rng.standard_normal((2, 5)))


def test_dpo_minimiser_is_not_unique_two_inits_same_loss_different_rewards():
    """Both inits reach the known minimum; answers outside the data keep their initial logits exactly (the DPO loss
    does not depend on them: log Z cancels in log π(y_w) − log π(y_l)), so r_θ there differs by the init's noise."""
    problem = _two_answer_problem()
    noise = 3.0
    runs = [dpo.solve(problem, dpo.Config(beta=BETA, bandit_init_noise=n, bandit_steps=2000), RunContext(seed=s))
            for n, s in ((0.0, 0), (noise, 1))]
    entropy = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    rewards = [BETA * (r.log_policy - problem.ref_logp) for r in runs]
    for run, reward in zip(runs, rewards, strict=True):
        assert run.train_loss == pytest.approx(entropy, abs=1e-4)
        np.testing.assert_allclose(reward[:, 0] - reward[:, 1], math.log(3), atol=1e-3)
    # the second init's noise: the first draw of its run's generator (BanditPolicy's table)
    drawn = noise * torch.randn((2, 5), generator=RunContext(seed=1).torch_generator, dtype=torch.float64).numpy()
    diff = (rewards[1] - rewards[0])[:, 2:]
    expected = BETA * drawn[:, 2:]
    np.testing.assert_allclose(diff - diff.mean(axis=1, keepdims=True), expected - expected.mean(axis=1, keepdims=True),
                               atol=1e-10)
    assert np.abs(diff - diff.mean(axis=1, keepdims=True)).max() > 0.1   # same loss, different implicit rewards


@pytest.mark.slow
def test_dpo_minimiser_is_not_unique_on_the_world_in_every_seed():
    """Spec §7.1's table, 5 seeds: two inits (π_ref, and π_ref + N(0, 3²) logits) of the free table reach the same
    DPO loss (± 1e-4) while r_θ (up to a per-prompt constant) differs by > 0.5 on at least one cell (~20 s)."""
    for seed in range(5):
        problem = preference_bandit.build(preference_bandit.Config(), RunContext(seed=seed).for_task())
        runs = [dpo.solve(problem, dpo.Config(beta=BETA, bandit_init_noise=noise), RunContext(seed=seed + s))
                for noise, s in ((0.0, 0), (3.0, 100))]
        assert runs[0].train_loss == pytest.approx(runs[1].train_loss, abs=1e-4), seed
        diff = BETA * (runs[1].log_policy - runs[0].log_policy)
        assert np.abs(diff - diff.mean(axis=1, keepdims=True)).max() > 0.5, seed


def test_weak_negatives_come_uniformly_from_the_other_prompts_of_the_batch():
    prompts = torch.tensor([2, 0, 2, 1])
    lists = torch.tensor([[10, 11, 12], [20, 21, 22], [30, 31, 32], [40, 41, 42]])
    weak, valid = epa.bandit_weak_negatives(prompts, lists, 30000, torch.Generator().manual_seed(0))
    assert valid.all()
    own = {0: {20, 21, 22}, 1: {40, 41, 42}, 2: {10, 11, 12, 30, 31, 32}}
    for row, x in zip(weak.tolist(), prompts.tolist(), strict=True):
        others = sorted(set(lists.flatten().tolist()) - own[x])
        assert set(row) == set(others)                                    # every other-prompt answer, none of its own
        counts = np.array([row.count(y) for y in others]) / len(row)
        np.testing.assert_allclose(counts, 1 / len(others), atol=0.01)
    _, alone = epa.bandit_weak_negatives(torch.tensor([3, 3]), lists[:2], 4, torch.Generator().manual_seed(0))
    assert not alone.any()                                                # one prompt in the batch: nothing to draw


def test_weak_negatives_push_down_answers_the_prompt_never_saw(world):
    """Under DPO a response outside a prompt's data keeps its logit (r_θ constant per prompt there); EPA's weak
    negatives reach such cells and spread r_θ over them."""
    settings = {"bandit_steps": 200}
    unseen = ~world.seen
    for module, config, spread in ((dpo, dpo.Config(beta=BETA, **settings), False),
                                   (epa, epa.Config(**settings), True)):
        reward = BETA * (module.solve(world, config, RunContext(seed=0)).log_policy - world.ref_logp)
        stds = [reward[x, unseen[x]].std() for x in range(len(reward))]
        assert (min(stds) > 1e-3) if spread else (max(stds) < 1e-12)


def test_mlp_policy_starts_at_the_reference_and_learns(world):
    policy = BanditPolicy(world.ref_logp, "mlp", generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(policy().detach(), torch.as_tensor(world.ref_logp), atol=1e-12, rtol=0)
    result = epa.solve(world, epa.Config(bandit_policy="mlp", bandit_steps=100, bandit_lr=0.01), RunContext(seed=0))
    scores = score(world, result)
    assert scores["train_loss"] < math.log(1 + 11) - 0.1                  # below the loss at π_ref (all r = 0)
    assert scores["kl_to_reference"] > 0 and math.isfinite(scores["slope1_error"])


def test_other_preference_methods_are_refused_the_bandit_and_epa_checks_its_negatives(world):
    """The registry refuses the sequence-only methods on the bandit before its world is built (their declared
    `accepts` against the task's `problem`), in one line naming both types; the solving itself would fail."""
    registry = Registry.discover()
    for module in (simplemix, hypo, dpo_mix_p, simpo, logo, sft):
        name = module.__name__.rsplit(".", 1)[1]
        assert registry.incompatibility(name, "preference_bandit") == (
            f"{name} takes PreferenceProblem problems, preference_bandit builds BanditPreferenceProblem")
        assert registry.incompatibility(name, "preference_world") is None
        assert "not BanditPreferenceProblem" in registry.method(name).skip(world, module.Config())   # a lying plugin
    for name in ("dpo", "ipo", "epa"):
        assert registry.incompatibility(name, "preference_bandit") is None
    assert epa.skip(world, epa.Config()) is None
    assert "3 strong negatives, the task has 1" in epa.skip(_two_answer_problem(), epa.Config())
    assert "bandit_batch" in epa.skip(world, epa.Config(bandit_batch=1))
    with pytest.raises(ValueError, match="pairs 'all' unknown"):
        dpo.Config(pairs="all")
    with pytest.raises(ValueError, match="bandit_policy in"):
        epa.Config(bandit_policy="cnn")


def test_ipo_loss_by_hand_and_its_finite_minimiser_on_the_two_answer_problem():
    """(h − 1/(2τ))² by hand; on 3 wins of a and 1 of b the minimiser of 3(h − 5)² + (−h − 5)² (τ = 0.1) is
    h = 2.5 with mean loss (3·2.5² + 7.5²)/4 = 18.75: finite, where DPO's margin is set by the win share."""
    h = (-1.0 + 1.2) - (-1.5 + 1.4)                                            # 0.3
    pw, pl, rw, rl = (torch.tensor([v], dtype=torch.float64) for v in (-1.0, -1.5, -1.2, -1.4))
    value = ipo_loss(pw, pl, rw, rl, 0.1)
    assert value.item() == pytest.approx((h - 5.0) ** 2, abs=1e-12)
    problem = _two_answer_problem()
    result = ipo.solve(problem, ipo.Config(bandit_steps=2000), RunContext(seed=0))
    margin = result.log_policy[:, 0] - result.log_policy[:, 1] - (problem.ref_logp[:, 0] - problem.ref_logp[:, 1])
    np.testing.assert_allclose(margin, 2.5, atol=1e-4)
    assert result.train_loss == pytest.approx(18.75, abs=1e-6)
