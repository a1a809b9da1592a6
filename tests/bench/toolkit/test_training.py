"""The toolkit's one training loop, its schedules and seeded(), against closed forms."""

import pytest
import torch

from bench.toolkit.training import linear_schedule, multiplier, one_cycle, seeded, train, warmup_linear


def _quadratic(target: torch.Tensor):
    """A parameter vector w and the loss ½‖w − target‖² of it (a model with one parameter)."""
    model = torch.nn.Module()
    model.w = torch.nn.Parameter(torch.zeros_like(target))
    return model, lambda step, micro=0: 0.5 * (model.w - target).square().sum()


def test_seeded_repeats_draws_and_leaves_the_callers_rng_as_it_was():
    torch.manual_seed(123)
    expected_next = torch.rand(3)
    torch.manual_seed(123)
    with seeded(7):
        first = torch.rand(4)
    with seeded(7):
        assert torch.equal(torch.rand(4), first)
    assert torch.equal(torch.rand(3), expected_next)  # the caller's stream continues where it was


def test_one_adam_step_moves_each_coordinate_by_the_learning_rate():
    # Adam's first step is lr·m̂/(√v̂ + ε) = lr·g/(|g| + ε): lr·sign(g) up to ε
    target = torch.tensor([2.0, -3.0, 0.5])
    model, loss = _quadratic(target)
    losses = train(model, loss, 1, lr=0.1)
    torch.testing.assert_close(model.w.detach(), torch.tensor([0.1, -0.1, 0.1]), atol=1e-6, rtol=0)
    assert losses == [pytest.approx(0.5 * (4 + 9 + 0.25))]  # the loss before the step
    assert not model.training


def test_a_zero_schedule_never_moves_the_weights_and_after_step_sees_every_step():
    model, loss = _quadratic(torch.tensor([1.0, 1.0]))
    seen = []
    losses = train(model, loss, 3, lr=0.1, schedule=multiplier(lambda s: 0.0),
                   after_step=lambda step, value: seen.append((step, value)))
    assert torch.equal(model.w.detach(), torch.zeros(2))
    assert seen == [(0, 1.0), (1, 1.0), (2, 1.0)] and losses == [1.0, 1.0, 1.0]


def test_accumulated_micro_batches_take_the_full_batch_step():
    data = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.0, 4.0], [-2.0, 1.0]])

    def run(grad_accum: int):
        model = torch.nn.Linear(2, 1, bias=False)
        torch.nn.init.constant_(model.weight, 0.3)
        size = len(data) // grad_accum

        def loss(step, micro=0):
            batch = data[micro * size:(micro + 1) * size]
            return model(batch).square().mean()

        losses = train(model, loss, 2, lr=0.05, grad_accum=grad_accum)
        return model.weight.detach().clone(), losses

    (full, full_losses), (accumulated, accumulated_losses) = run(1), run(2)
    torch.testing.assert_close(full, accumulated, atol=1e-6, rtol=0)
    assert accumulated_losses == pytest.approx(full_losses)  # a step's loss is the micro-batches' mean


def test_schedules_give_their_multipliers():
    assert [linear_schedule(s, 10, 0.2) for s in range(10)] == pytest.approx(
        [0.5, 1.0, 1.0, 0.875, 0.75, 0.625, 0.5, 0.375, 0.25, 0.125])
    optimiser = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = warmup_linear(10, 0.2)(optimiser)
    rates = []
    for _ in range(10):
        rates.append(optimiser.param_groups[0]["lr"])
        optimiser.step()
        scheduler.step()
    assert rates == pytest.approx([linear_schedule(s, 10, 0.2) for s in range(10)])
    optimiser = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    one_cycle(0.4, 100, 0.1)(optimiser)
    assert optimiser.param_groups[0]["lr"] == pytest.approx(0.4 / 25)  # torch's one-cycle starts at max_lr / 25


def test_bad_settings_are_refused():
    model, loss = _quadratic(torch.zeros(1))
    with pytest.raises(ValueError, match="steps >= 0 and grad_accum >= 1"):
        train(model, loss, 1, lr=0.1, grad_accum=0)
