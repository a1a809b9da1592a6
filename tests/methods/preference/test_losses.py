"""The objectives against hand-computed values: DPO's loss and gradient, EPA → DPO, LOGO → SimPO, γ = β·ratio."""

import math

import pytest
import torch

from methods.preference._losses import dpo_loss, epa_loss, logo_loss

# a tiny batch of two pairs: sequence log-probs under πθ and π_ref
POLICY_W, POLICY_L = [-1.0, -2.0], [-1.5, -1.0]
REF_W, REF_L = [-1.2, -1.8], [-1.4, -1.3]
BETA = 0.5


def test_dpo_loss_and_gradient_equal_the_hand_computation():
    """margins β[(−1.0+1.2) − (−1.5+1.4)] = 0.15 and β[(−2.0+1.8) − (−1.0+1.3)] = −0.25;
    loss = log(1 + e^{−m}) = 0.620957, 0.825939; ∂/∂logπ(y_w) = −β σ(−m) = −0.231285, −0.281088."""
    pw = torch.tensor(POLICY_W, requires_grad=True)
    pl = torch.tensor(POLICY_L, requires_grad=True)
    loss = dpo_loss(pw, pl, torch.tensor(REF_W), torch.tensor(REF_L), BETA)
    torch.testing.assert_close(loss, torch.tensor([0.620957, 0.825939]), atol=1e-6, rtol=0)
    loss.sum().backward()
    torch.testing.assert_close(pw.grad, torch.tensor([-0.231285, -0.281088]), atol=1e-6, rtol=0)
    torch.testing.assert_close(pl.grad, torch.tensor([0.231285, 0.281088]), atol=1e-6, rtol=0)


def test_epa_with_one_strong_negative_and_w_1_is_dpo():
    pw, pl = torch.tensor(POLICY_W), torch.tensor(POLICY_L)
    rw, rl = torch.tensor(REF_W), torch.tensor(REF_L)
    epa = epa_loss(BETA * (pw - rw), (BETA * (pl - rl))[:, None], w=1.0)
    torch.testing.assert_close(epa, dpo_loss(pw, pl, rw, rl, BETA), atol=1e-7, rtol=0)


def test_epa_is_a_softmax_cross_entropy_over_the_positive_and_its_negatives():
    """log(w + Σ e^{r_j − r_w}) = −log softmax_0 of [r_w + log w ... ] for w = 1; masking drops a term;
    α multiplies a term inside the sum."""
    r_w = torch.tensor([0.3])
    r_n = torch.tensor([[0.1, -0.4, 1.2]])
    expected = math.log(1 + math.exp(0.1 - 0.3) + math.exp(-0.4 - 0.3) + math.exp(1.2 - 0.3))
    assert epa_loss(r_w, r_n).item() == pytest.approx(expected, abs=1e-6)
    assert epa_loss(r_w, r_n.flip(1)).item() == pytest.approx(expected, abs=1e-6)   # permutation invariant
    masked = epa_loss(r_w, r_n, mask=torch.tensor([[1, 1, 0]]))
    assert masked.item() == pytest.approx(math.log(1 + math.exp(-0.2) + math.exp(-0.7)), abs=1e-6)
    weighted = epa_loss(r_w, r_n, w=2.0, weak_weight=torch.tensor([[1.0, 1.0, 0.5]]))
    assert weighted.item() == pytest.approx(math.log(2 + math.exp(-0.2) + math.exp(-0.7) + 0.5 * math.exp(0.9)),
                                            abs=1e-6)


def test_logo_with_one_rejected_answer_is_simpo_and_gamma_is_beta_times_the_ratio():
    """SimPO (Eq. 6) by hand: −log σ(β·avg_w − β·avg_l − γ) with β = 2.5, γ = 2.5 · 0.1."""
    avg_w, avg_l = torch.tensor([-0.8, -1.1]), torch.tensor([[-1.3], [-0.9]])
    beta, ratio = 2.5, 0.1
    simpo = [-math.log(1 / (1 + math.exp(-(beta * w - beta * l - beta * ratio))))
             for w, l in ((-0.8, -1.3), (-1.1, -0.9))]
    torch.testing.assert_close(logo_loss(avg_w, avg_l, beta, beta * ratio), torch.tensor(simpo), atol=1e-6, rtol=0)
    two = torch.tensor([[-1.3, -0.7], [-0.9, -2.1]])   # M = 2: the rejected term is the mean of the two
    torch.testing.assert_close(logo_loss(avg_w, two, beta, 0.75),
                               logo_loss(avg_w, two.mean(1, keepdim=True), beta, 0.75))


# LOGO's rejected-answer weighting as the authors' trainer runs it (ZetangForward/LCM_Stack, training/logo_train.py
# l.247 slices all_logps[len_chosen:] where [len_chosen*2:] is meant; batch 1, M = 2): with x_1 = β(c − r_1) − γ and
# x_2 = β(c − (r_1 + r_2)/2) − γ the loss is ½ℓ(x_1) + ½ℓ(x_2), ℓ(x) = log(1 + e^{−x}), and its gradient is
# ∂/∂r_1 = (β/2)(σ(−x_1) + σ(−x_2)/2), ∂/∂r_2 = (β/4)σ(−x_2), ∂/∂c = −(β/2)(σ(−x_1) + σ(−x_2)).
LOGO_BETA, LOGO_GAMMA = 10.0, 3.0
LOGO_C, LOGO_R = [-1.0, -0.5], [[-2.0, -3.0], [-0.9, -0.4]]   # x = (7, 12) and (1, −1.5)


def _sig(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def _logo_x(c: float, r1: float, r2: float) -> tuple[float, float]:
    return LOGO_BETA * (c - r1) - LOGO_GAMMA, LOGO_BETA * (c - (r1 + r2) / 2) - LOGO_GAMMA


def test_logo_released_weighting_is_the_mean_of_the_two_losses_in_closed_form():
    expected = [(math.log1p(math.exp(-x1)) + math.log1p(math.exp(-x2))) / 2
                for x1, x2 in (_logo_x(c, *r) for c, r in zip(LOGO_C, LOGO_R, strict=True))]
    c = torch.tensor(LOGO_C, dtype=torch.float64, requires_grad=True)
    r = torch.tensor(LOGO_R, dtype=torch.float64, requires_grad=True)
    loss = logo_loss(c, r, LOGO_BETA, LOGO_GAMMA, "released")
    torch.testing.assert_close(loss, torch.tensor(expected, dtype=torch.float64), atol=1e-12, rtol=0)
    loss.sum().backward()
    for i, (c_i, (r1, r2)) in enumerate(zip(LOGO_C, LOGO_R, strict=True)):
        x1, x2 = _logo_x(c_i, r1, r2)
        s1, s2 = _sig(-x1), _sig(-x2)
        assert r.grad[i, 0].item() == pytest.approx(LOGO_BETA / 2 * (s1 + s2 / 2), rel=1e-10)
        assert r.grad[i, 1].item() == pytest.approx(LOGO_BETA / 4 * s2, rel=1e-10)
        assert c.grad[i].item() == pytest.approx(-LOGO_BETA / 2 * (s1 + s2), rel=1e-10)


def _first_negative_share(negatives: str, c: list[float], r: list[list[float]]) -> torch.Tensor:
    """(B,) ∂L/∂r_1 / (∂L/∂r_1 + ∂L/∂r_2), the first rejected answer's share of the rejected gradient."""
    rr = torch.tensor(r, dtype=torch.float64, requires_grad=True)
    logo_loss(torch.tensor(c, dtype=torch.float64), rr, LOGO_BETA, LOGO_GAMMA, negatives).sum().backward()
    return rr.grad[:, 0] / rr.grad.sum(1)


def test_logo_gradient_share_of_the_first_negative_is_half_in_the_paper_and_three_quarters_as_released():
    # the paper's (1/M)Σ inside one sigmoid: ½ / ½ for any inputs
    torch.testing.assert_close(_first_negative_share("paper", LOGO_C, LOGO_R),
                               torch.full((2,), 0.5, dtype=torch.float64), atol=1e-12, rtol=0)
    # as released: (σ(−x_1) + σ(−x_2)/2) / (σ(−x_1) + σ(−x_2)), in (½, 1); exactly ¾ when r_1 = r_2 (x_1 = x_2)
    shares = _first_negative_share("released", LOGO_C, LOGO_R)
    for share, c_i, (r1, r2) in zip(shares.tolist(), LOGO_C, LOGO_R, strict=True):
        s1, s2 = (_sig(-x) for x in _logo_x(c_i, r1, r2))
        assert share == pytest.approx((s1 + s2 / 2) / (s1 + s2), rel=1e-10) and 0.5 < share < 1
    torch.testing.assert_close(_first_negative_share("released", [-1.0, 0.3], [[-1.4, -1.4], [0.2, 0.2]]),
                               torch.full((2,), 0.75, dtype=torch.float64), atol=1e-12, rtol=0)


def test_logo_released_weighting_is_the_official_trainers_broadcast_at_batch_one():
    """Their rows at batch 1: all_logps = (c, r_1, r_2); the first rejected slice is all_logps[1:2] = (r_1), the
    second all_logps[1:] = (r_1, r_2); l.266 feeds (first + second)/2 = (r_1, (r_1 + r_2)/2) to SimPO's sigmoid
    loss against c, and l.269 takes the mean of the two losses."""
    for c_i, r_i in zip(LOGO_C, LOGO_R, strict=True):
        all_logps = torch.tensor([c_i, *r_i], dtype=torch.float64)
        rejected = (all_logps[1:2] + all_logps[1:]) / 2                                    # (2,) by broadcasting
        theirs = -torch.nn.functional.logsigmoid(LOGO_BETA * ((all_logps[:1] - rejected) - LOGO_GAMMA / LOGO_BETA))
        ours = logo_loss(all_logps[:1], all_logps[None, 1:], LOGO_BETA, LOGO_GAMMA, "released")
        torch.testing.assert_close(ours, theirs.mean().view(1), atol=1e-12, rtol=0)


def test_logo_weightings_agree_at_one_negative_and_reject_unknown_values():
    avg_w, one = torch.tensor([-0.8, -1.1]), torch.tensor([[-1.3], [-0.9]])
    assert torch.equal(logo_loss(avg_w, one, 2.5, 0.25, "released"), logo_loss(avg_w, one, 2.5, 0.25))
    with pytest.raises(ValueError, match="'both'"):
        logo_loss(avg_w, one, 2.5, 0.25, "both")
    with pytest.raises(ValueError, match="M = 3"):
        logo_loss(avg_w, torch.zeros(2, 3), 2.5, 0.25, "released")
