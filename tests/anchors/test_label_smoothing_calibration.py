"""The label-smoothed SFT loss against the authors' numbers (jhuang265/Calibrating-LLMs-with-Label-Smoothing).

Expected values computed once from their `cross_entropy_loss` (openinstruct/open_instruct/finetune-working.py
l.76-107, eager) on the anchor's seeded inputs, by
    .venv/bin/python benchmarks/anchors/label-smoothing-calibration.py --authors /tmp/Calibrating-LLMs --seeds 3
(the per-seed values printed by `compare`; /tmp/Calibrating-LLMs = `git archive HEAD openinstruct/open_instruct` of
their repository). Ours equals theirs at reduction "mean"; their sweeps run reduction "sum", i.e. ours × tokens.
"""

import pytest

from tests.anchors._load import anchor

LS = anchor("label-smoothing-calibration")
# seed: (answer tokens, theirs mean, theirs sum, theirs mean at τ = 2)
THEIRS = {0: (28, 8.31476, 232.813293, 10.921163), 1: (43, 7.495817, 322.320099, 10.104246),
          2: (37, 7.106953, 262.957245, 10.008244)}


@pytest.mark.parametrize("seed", sorted(THEIRS))
def test_label_smoothed_ce_matches_their_training_loss(seed):
    tokens, mean, total, mean_tau2 = THEIRS[seed]
    h, w, y = LS.inputs(seed)
    assert int((y != -100).sum()) == tokens
    ours = float(LS.ours_loss(h, w, y))
    assert ours == pytest.approx(mean, abs=1e-5)
    assert float(LS.ours_loss(h, w, y, 2.0)) == pytest.approx(mean_tau2, abs=1e-5)
    assert ours * tokens == pytest.approx(total, rel=1e-6)   # their sweeps' reduction: the sum over answer tokens
