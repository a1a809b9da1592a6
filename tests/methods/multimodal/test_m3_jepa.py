"""M3-JEPA: the MoE gate against hand-computed routing, the losses' closed forms, AGD, and a small end-to-end run."""

import math

import numpy as np
import pytest
import torch

from bench.context import RunContext
from methods.multimodal import m3_jepa
from methods.multimodal._common import info_nce, schedule, splits
from methods.multimodal._moe import M3Predictor, MoE
from tasks.multimodal import PairedProblem, RetrievalResult, observe, paired_retrieval, retrieval_scores, score


def test_gate_is_a_softmax_and_topk_weights_are_not_renormalised():
    torch.manual_seed(0)
    moe = MoE(hidden=8, experts=5, top_k=3, dropout=0.0).eval()
    u = torch.randn(50, 8)
    g, values, index = moe.route(u)
    torch.testing.assert_close(g.sum(-1), torch.ones(50))
    assert all(len(set(row.tolist())) == 3 for row in index)              # exactly k distinct experts per token
    torch.testing.assert_close(values, g.gather(-1, index))
    assert torch.all(values.sum(-1) < 1 - 1e-6)                           # the paper does not renormalise


def test_moe_output_is_the_gate_weighted_sum_of_the_chosen_experts_only():
    torch.manual_seed(0)
    moe = MoE(hidden=4, experts=4, top_k=2, dropout=0.0).eval()
    with torch.no_grad():
        moe.gate.weight.copy_(3 * torch.eye(4))
        moe.gate.bias.zero_()
    calls = [0] * 4
    for e, net in enumerate(moe.experts):
        net.register_forward_hook(lambda m, i, o, e=e: calls.__setitem__(e, calls[e] + len(i[0])))
    u = torch.tensor([[2.0, 1.0, 0.0, 0.0]])                               # logits 6, 3, 0, 0 → experts 0 and 1
    out, index = moe(u)
    g = torch.softmax(torch.tensor([6.0, 3.0, 0.0, 0.0]), 0)
    expected = g[0] * moe.experts[0](u) + g[1] * moe.experts[1](u)
    torch.testing.assert_close(out, expected)
    assert sorted(index[0].tolist()) == [0, 1] and calls[2:] == [0, 0]    # unchosen experts never run


def _constructed_predictor() -> M3Predictor:
    """Direction and objective steer the single gate: i2t/l2 → 0, i2t/cl → 1, t2i/l2 → 2, t2i/cl → 3."""
    model = M3Predictor(image_dim=3, text_dim=2, hidden=4, experts=4, top_k=1, dropout=0.0).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.w_in["i2t"].bias.copy_(torch.tensor([5.0, 0, 0, 0]))       # h = GELU(0·x + b_d)
        model.w_in["t2i"].bias.copy_(torch.tensor([0, 5.0, 0, 0]))
        model.task_embed["l2"].copy_(torch.tensor([0, 0, 5.0, 0]))
        model.task_embed["cl"].copy_(torch.tensor([0, 0, 0, 5.0]))
        model.moe.gate.weight.copy_(torch.tensor([[1.0, 0, 1, 0], [1, 0, 0, 1], [0, 1, 1, 0], [0, 1, 0, 1]]))
    return model


def test_gate_routes_each_direction_and_objective_as_constructed():
    model = _constructed_predictor()
    image, text = torch.randn(6, 9, 3), torch.randn(6, 5, 2)
    mask_i, mask_t = torch.ones(6, 9, dtype=torch.bool), torch.ones(6, 5, dtype=torch.bool)
    mask_t[:, 3:] = False
    usage = torch.stack([model.expert_usage("i2t", image, mask_i), model.expert_usage("t2i", text, mask_t)])
    torch.testing.assert_close(usage, torch.eye(4).view(2, 2, 4))
    problem = _tiny_problem(image.numpy(), text.numpy(), mask_t.numpy())
    s = score(problem, RetrievalResult(m3_jepa.Aligned(model, "contrastive"), expert_usage=usage.numpy()))
    assert s["gate_direction_tv"] == 1.0 and s["specific_experts"] == 4.0 and s["shared_experts"] == 0.0
    np.testing.assert_array_equal(observe(problem, m3_jepa.Aligned(model, "prediction"))[1], usage.numpy())


def _tiny_problem(image, text, text_mask):
    """Six test pairs of the given tokens (their keys distinct), and ten one-token class prompts."""
    m = len(image)
    return PairedProblem(image, text, text_mask, np.arange(m), image, text, text_mask, np.arange(m), np.arange(m) % 10,
                         np.ones((10, 1, text.shape[-1]), np.float32), np.ones((10, 1), bool), tuple("abcdefghij"),
                         ("",) * m, "constructed")


def test_predictor_outputs_and_parameter_count():
    d_img, d_txt, h, e = 6, 5, 8, 3
    model = M3Predictor(d_img, d_txt, h, e, 2, 0.1)
    y_hat, c = model("t2i", torch.randn(4, 7, d_txt), torch.ones(4, 7, dtype=torch.bool))
    assert y_hat.shape == (4, d_img) and c.shape == (4, h)
    expected = (d_img + d_txt                                   # e_dir
                + (d_img * h + h) + (d_txt * h + h)             # W_in per direction
                + 2 * h                                         # e_l2, e_cl
                + h * e + e + e * 2 * (h * h + h)               # gate and experts
                + 2 * 2 * h                                     # two LayerNorms
                + (h * d_txt + d_txt) + (h * d_img + d_img)     # prediction heads
                + 2 * (h * h + h)                               # contrastive heads
                + (d_img * h + h) + (d_txt * h + h))            # contrastive target projections
    assert sum(p.numel() for p in model.parameters()) == expected


def test_info_nce_closed_form():
    a = torch.eye(3)
    tau = 0.5
    expected = math.log(1 + 2 * math.exp(-1 / tau))                        # diag 1/τ, off-diagonal 0
    assert info_nce(a, a, tau).item() == pytest.approx(expected)
    assert info_nce(a, 2 * a, tau).item() == pytest.approx(expected)       # cosine: scale-free


def test_schedule_warmup_cosine_and_weight_decay():
    args = (0.1, 1e-3, 1.5e-3, 5.5e-6, 0.005, 0.2)
    assert schedule(0, 100, *args) == pytest.approx((1e-3, 0.005))
    assert schedule(5, 100, *args)[0] == pytest.approx(1.25e-3)            # half way through the 10 warmup steps
    assert schedule(10, 100, *args)[0] == pytest.approx(1.5e-3)
    assert schedule(100, 100, *args) == pytest.approx((5.5e-6, 0.2))
    assert schedule(55, 100, *args)[0] == pytest.approx(5.5e-6 + 0.5 * (1.5e-3 - 5.5e-6))  # cosine midpoint


@pytest.fixture(scope="module")
def problem():
    return paired_retrieval.build(paired_retrieval.Config(test_size=100, train_size=400), RunContext(0).for_task())


def test_agd_step_touches_only_its_direction(problem):
    train, _, _ = splits(problem, "cpu")
    model = M3Predictor(problem.image_dim, problem.text_dim, 16, 4, 2, 0.0)
    loss, parts = m3_jepa.direction_loss(model, "i2t", train.batch(torch.arange(32)), m3_jepa.Config())
    loss.backward()
    untouched = [model.w_in["t2i"].weight, model.dir_embed["t2i"], model.pred_head["t2i"].weight,
                 model.cl_head["t2i"].weight, model.cl_target["image"].weight]
    assert all(p.grad is None for p in untouched)
    assert model.w_in["i2t"].weight.grad.abs().sum() > 0 and model.cl_target["text"].weight.grad.abs().sum() > 0
    assert loss.item() == pytest.approx(0.5 * (parts["l_cl_i2t"] + parts["l_pred_i2t"]), rel=1e-6)


def test_no_global_seeding_and_reproducible(problem):
    config = m3_jepa.Config(epochs=2)
    state = torch.random.get_rng_state()
    result = m3_jepa.solve(problem, config, RunContext(0))
    assert torch.equal(state, torch.random.get_rng_state())               # no global seeding leaks out
    sim_i2t = lambda seed: observe(problem, m3_jepa.solve(problem, config, RunContext(seed)).model)[0]["i2t"]  # noqa: E731
    np.testing.assert_array_equal(observe(problem, result.model)[0]["i2t"], sim_i2t(0))
    assert not np.array_equal(observe(problem, result.model)[0]["i2t"], sim_i2t(1))


def test_small_run_aligns_far_above_chance(problem):
    """120 AGD steps on 400 pairs: mean recall 0.227 and class accuracy 0.34 vs 0.078 and 0.1 (chance) for random
    scores."""
    result = m3_jepa.solve(problem, m3_jepa.Config(epochs=30), RunContext(0))
    rng = np.random.default_rng(0)
    shuffled = retrieval_scores(problem, rng.random((100, 100)), rng.random((100, 100)), rng.random((100, 10)))
    s = score(problem, result)
    assert s["mean_recall"] > 2 * shuffled["mean_recall"] and s["class_accuracy"] > 0.25
    assert s["trainable_params"] == 67332                                # predictor + CL projections only
    assert result.expert_usage.shape == (2, 2, 4)
    np.testing.assert_allclose(result.expert_usage.sum(-1), 2.0)         # k = 2 experts per token


def test_config_validation():
    with pytest.raises(ValueError, match="top_k"):
        m3_jepa.Config(experts=2, top_k=3)
    with pytest.raises(ValueError, match="retrieval_branch"):
        m3_jepa.Config(retrieval_branch="both")


# ---- per-direction schedules (issue 40, item 2) -------------------------------------------------------------
LR0, LR1, LR2 = 1e-3, 1.5e-3, 5.5e-6        # lr_start, lr_peak, lr_final


def _cosine(progress):
    return LR2 + 0.5 * (LR1 - LR2) * (1 + math.cos(math.pi * progress))


def test_per_direction_schedules_closed_form():
    """10 epochs of 20 steps (200 in all): i2t warms up over 0.1 of the steps (20), t2i over 0.1 epoch (2 steps);
    each step's direction (round-robin, i2t first) sets the lr from its own schedule on the one step counter."""
    config = m3_jepa.Config(epochs=10, per_direction=True)
    plan = {s: m3_jepa.step_plan(s, 20, config) for s in range(200)}
    assert [plan[s][0] for s in range(4)] == [("i2t",), ("t2i",), ("i2t",), ("t2i",)]
    lr = {s: p[1] for s, p in plan.items()}
    assert lr[0] == pytest.approx(LR0)                                     # both start at lr_start ...
    assert lr[10] == pytest.approx(LR0 + 0.5 * (LR1 - LR0))                # i2t half way through its 20 warm-up steps
    assert lr[1] == pytest.approx(LR0 + 0.5 * (LR1 - LR0))                 # t2i half way through its 2
    assert lr[3] == pytest.approx(_cosine(1 / 198))                        # t2i already decaying
    assert lr[19] == pytest.approx(_cosine(17 / 198))
    assert lr[18] == pytest.approx(LR0 + 0.9 * (LR1 - LR0))                # while i2t still warms up
    assert lr[20] == pytest.approx(LR1)                                    # i2t's peak
    assert lr[110] == pytest.approx(_cosine(0.5))                          # i2t's cosine midpoint: 20 + 180 / 2
    assert lr[101] == pytest.approx(_cosine(0.5))                          # t2i's: 2 + 198 / 2
    assert lr[199] == pytest.approx(_cosine(197 / 198))
    for s in (0, 1, 100, 199):                                             # weight decay: one cosine over the run
        assert plan[s][2] == pytest.approx(0.2 + 0.5 * (0.005 - 0.2) * (1 + math.cos(math.pi * s / 200)))


def test_t2i_warmup_counts_whole_steps_of_an_epoch():
    """int(0.1 x steps per epoch), as I-JEPA's init_opt: the default run (11 steps an epoch) warms t2i up for 1 step,
    which round-robin never trains on (step 0 is i2t's), so t2i starts at the peak; 5 steps an epoch give none."""
    config = m3_jepa.Config(per_direction=True)                            # 60 epochs
    assert m3_jepa.step_plan(1, 11, config)[1] == pytest.approx(LR1)
    assert m3_jepa.step_plan(1, 5, config)[1] == pytest.approx(_cosine(1 / 300))
    assert m3_jepa.step_plan(0, 11, config)[1] == pytest.approx(LR0)       # i2t: 66 warm-up steps
    assert m3_jepa.step_plan(33 * 2, 11, config)[1] == pytest.approx(LR1)


def test_per_direction_off_is_the_one_schedule_of_before():
    """Without per_direction every step follows `schedule` at `warmup` (0.1 of the steps), whatever the per-direction
    warm-ups say; AGD alternates i2t, t2i, and the joint ablation trains both."""
    for config in (m3_jepa.Config(epochs=10), m3_jepa.Config(epochs=10, i2t_warmup=0.5, t2i_warmup_epochs=3.0)):
        for s in range(200):
            chosen, lr, wd = m3_jepa.step_plan(s, 20, config)
            assert chosen == (("i2t",), ("t2i",))[s % 2]
            assert (lr, wd) == schedule(s, 200, 0.1, LR0, LR1, LR2, 0.005, 0.2)
    assert m3_jepa.step_plan(7, 20, m3_jepa.Config(alternate=False))[0] == ("i2t", "t2i")
    with pytest.raises(ValueError, match="alternate"):
        m3_jepa.Config(alternate=False, per_direction=True)


def _trace(problem, config, monkeypatch):
    """(directions, lr, wd) of every optimiser step of a run, as `train` applied them."""
    steps, directions = [], []
    monkeypatch.setattr(m3_jepa, "set_schedule", lambda opt, lr, wd: steps.append((lr, wd)))
    loss = m3_jepa.direction_loss
    monkeypatch.setattr(m3_jepa, "direction_loss", lambda m, d, b, c: directions.append(d) or loss(m, d, b, c))
    m3_jepa.solve(problem, config, RunContext(0))
    return directions, steps


def test_training_applies_the_plan(problem, monkeypatch):
    """400 training pairs at batch 120: 4 steps an epoch. Off, the run sets the one schedule of before at each step;
    on, each step's direction's own."""
    per_epoch, epochs = 4, 3
    for config in (m3_jepa.Config(epochs=epochs), m3_jepa.Config(epochs=epochs, per_direction=True)):
        directions, steps = _trace(problem, config, monkeypatch)
        plan = [m3_jepa.step_plan(s, per_epoch, config) for s in range(per_epoch * epochs)]
        assert directions == [p[0][0] for p in plan] and steps == [p[1:] for p in plan]
    off = _trace(problem, m3_jepa.Config(epochs=epochs), monkeypatch)[1]
    assert off == [schedule(s, 12, 0.1, LR0, LR1, LR2, 0.005, 0.2) for s in range(12)]
