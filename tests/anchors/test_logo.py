"""LOGO's loss against the official trainer's numbers (ZetangForward/LCM_Stack, training/logo_train.py).

The expected values were computed once from their code, on the anchor's seeded inputs, by
    .venv/bin/python -c "from benchmarks.anchors import logo; print(logo.compare('/tmp/LCM_Stack', SEED))"
with /tmp/LCM_Stack = `git --git-dir=<fetch of ZetangForward/LCM_Stack> archive HEAD training | tar -x -C ...`
(their LOGOTrainer methods run as released, β = 10, γ/β = 0.3, batch 1; "fixed" = l.247's slice set to
`all_logps[len_chosen*2:]`). Our functions run here on the same inputs without their checkout.
"""

import pytest
import torch
import torch.nn.functional as F

from benchmarks.anchors.logo import BETA, GAMMA_BETA, batch, get_batch_logps, window_logps
from methods.preference._losses import logo_loss

# seed: (theirs as released, theirs with the slice fixed, their unshifted SFT cross-entropy)
THEIRS = {0: (1.374778, 1.53844, 3.466594), 1: (2.625477, 2.89721, 3.26745), 2: (5.207732, 4.72099, 3.701606)}


@pytest.mark.parametrize("seed", sorted(THEIRS))
def test_logo_loss_matches_the_official_trainer(seed):
    released, fixed, sft = THEIRS[seed]
    b, logits = batch(seed)
    avg = window_logps(b, logits)
    c, r1, r2 = avg[0:1], avg[1:2], avg[2:3]
    gamma = BETA * GAMMA_BETA
    # the paper's 1/2-1/2 (ours) is their trainer with the intended slice
    assert float(logo_loss(c, torch.stack([r1, r2], 1), BETA, gamma)) == pytest.approx(fixed, abs=2e-5)
    # their release at batch 1: the mean of ℓ(c − r1) and ℓ(c − (r1 + r2)/2), negatives weighed 3/4 and 1/4
    as_released = (logo_loss(c, r1.view(1, 1), BETA, gamma) + logo_loss(c, torch.stack([r1, r2], 1), BETA, gamma)) / 2
    assert float(as_released) == pytest.approx(released, abs=2e-5)
    assert abs(float(logo_loss(c, torch.stack([r1, r2], 1), BETA, gamma)) - released) > 0.1
    # their SFT term: cross-entropy of the unshifted logits (token t scored by its own position's logit)
    assert float(F.cross_entropy(logits[0], b["chosen_labels"][0])) == pytest.approx(sft, abs=2e-5)
    assert abs(-float(get_batch_logps(logits[0:1], b["chosen_labels"], average_log_prob=True)) - sft) > 0.01
