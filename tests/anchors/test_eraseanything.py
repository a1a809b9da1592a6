"""EraseAnything's four loss terms against the authors' numbers (tomguluson92/EraseAnything).

Expected values computed once from their statements (utils/calc_loss.py l.389, l.435-441, l.529-532, l.601-608
and utils/infoNCE.py calculate_steer_loss) on the anchor's seeded tensors, by
    .venv/bin/python -c "from benchmarks.anchors import eraseanything as e; print(e.theirs('/tmp/EraseAnything',
    e.inputs(SEED)))"
with /tmp/EraseAnything = `git archive HEAD utils config train_flux_lora.py` of their repository.
"""

import pytest

from benchmarks.anchors.eraseanything import inputs, ours

THEIRS = {0: {"esd": 6.26538, "attn": 7.907663, "fm": 3.883427, "rscl": -1.010763},
          1: {"esd": 5.635851, "attn": 6.067424, "fm": 2.661314, "rscl": -2.56697},
          2: {"esd": 5.464808, "attn": 7.194059, "fm": 2.804762, "rscl": -7.552294}}


@pytest.mark.parametrize("seed", sorted(THEIRS))
def test_eraseanything_loss_terms_match_the_authors(seed):
    got = ours(inputs(seed))
    for term, value in THEIRS[seed].items():
        assert got[term] == pytest.approx(value, abs=2e-5), term
