"""The preference objectives as pure tensor functions (inputs: sequence log-probabilities, shape (B,) / (B, K)).

DPO (Rafailov et al. 2023, Eq. 7):  −log σ(β[(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))]).
IPO (Azar et al. 2024, sampled loss):  (h − 1/(2τ))²,
    h = (log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l)).
EPA (Hong et al. 2025; our reconstruction, docs/papers/epa.md): with r = β(log π − log π_ref),
    log(w + Σ_{y ∈ N} exp(r(y) − r(y_w))),  N = strong ∪ weak negatives;  = DPO for w = 1 and N = {y_l}.
LOGO (Tang et al. 2025, §2.1; SimPO for M = 1, λ = 0):
    −log σ((β/|y_w|) log π(y_w) − (1/M) Σ_j (β/|y_l^j|) log π(y_l^j) − γ) + λ·NLL(y_w);
    as released (ZetangForward/LCM_Stack, training/logo_train.py l.247, l.266, l.269; batch 1, M = 2), with
    ℓ(x) = −log σ(x) and c, r_j the length-averaged log-probabilities:
    ½·ℓ(β(c − r_1) − γ) + ½·ℓ(β(c − (r_1 + r_2)/2) − γ).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def dpo_loss(policy_w: torch.Tensor, policy_l: torch.Tensor, ref_w: torch.Tensor, ref_l: torch.Tensor,
             beta: float) -> torch.Tensor:
    """(B,) the sigmoid DPO loss of each pair."""
    margin = beta * ((policy_w - ref_w) - (policy_l - ref_l))   # (B,)
    return -F.logsigmoid(margin)


def ipo_loss(policy_w: torch.Tensor, policy_l: torch.Tensor, ref_w: torch.Tensor, ref_l: torch.Tensor,
             tau: float) -> torch.Tensor:
    """(B,) the sampled IPO loss of each pair (TRL's loss_type="ipo" with beta = τ)."""
    margin = (policy_w - ref_w) - (policy_l - ref_l)            # (B,) h, in nats (not scaled by τ)
    return (margin - 1 / (2 * tau)) ** 2


def epa_loss(reward_w: torch.Tensor, reward_neg: torch.Tensor, mask: torch.Tensor | None = None, w: float = 1.0,
             weak_weight: torch.Tensor | None = None) -> torch.Tensor:
    """(B,) log(w + Σ_j m_j α_j exp(r_neg_j − r_w)): rewards r = β(log π − log π_ref), r_neg (B, K).

    `mask` (B, K) drops padded negatives; `weak_weight` (B, K) is the optional α on weak terms (1 = off)."""
    logits = reward_neg - reward_w[:, None]                                    # (B, K)
    if weak_weight is not None:
        logits = logits + torch.log(weak_weight)
    if mask is not None:
        logits = logits.masked_fill(~mask.bool(), float("-inf"))
    stable = torch.full_like(reward_w, float(torch.log(torch.tensor(w))))[:, None]   # (B, 1) the "w_stable" term
    return torch.logsumexp(torch.cat([stable, logits], dim=1), dim=1)


NEGATIVE_WEIGHTINGS = ("paper", "released")


def logo_loss(avg_w: torch.Tensor, avg_l: torch.Tensor, beta: float, gamma: float,
              negatives: str = "paper") -> torch.Tensor:
    """(B,) LOGO's preference term; avg = log-prob / length, avg_w (B,), avg_l (B, M).

    negatives "paper": −log σ(β·avg_w − mean_j β·avg_l_j − γ), the M rejected answers weighed 1/M each inside one
    sigmoid (§2.1; the authors' code once its slice is fixed). "released": the authors' trainer as it runs
    (training/logo_train.py l.247 slices `all_logps[len_chosen:]` for the second rejected answer, meant
    `[len_chosen*2:]`; at its batch size 1, l.266 averages (r_1) with (r_1, r_2), which broadcasts to two rejected
    terms, and l.269 takes the mean of the two losses):

        ½·ℓ(β(c − r_1) − γ) + ½·ℓ(β(c − (r_1 + r_2)/2) − γ),   ℓ(x) = −log σ(x),

    so r_1 carries ¾ of the rejected weight (exactly ¾ of the gradient when the two sigmoids agree). Defined for
    M ≤ 2 (their trainer has two rejected answers); at M = 1 both terms are SimPO's and the weightings agree."""
    paper = -F.logsigmoid(beta * avg_w - beta * avg_l.mean(dim=1) - gamma)             # (B,)
    if negatives == "paper":
        return paper
    if negatives != "released" or avg_l.shape[1] > 2:
        raise ValueError(f"negatives must be one of {NEGATIVE_WEIGHTINGS} ('released' with M <= 2); "
                         f"got {negatives!r} with M = {avg_l.shape[1]}")
    first = -F.logsigmoid(beta * avg_w - beta * avg_l[:, 0] - gamma)                   # (B,) ℓ(c − r_1)
    return (first + paper) / 2
