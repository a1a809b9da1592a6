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
