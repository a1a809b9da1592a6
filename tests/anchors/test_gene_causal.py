"""GENE's independence test and OP_ij move against the authors' (ECNU-ILOG/GENE, GENE.py l.27-30 and l.98-108).

Expected p-values computed once from their nested `chisquare_test` (np.histogram2d + 1e-8, chi2_contingency) on the
anchor's seeded inputs, by
    .venv/bin/python benchmarks/anchors/gene-causal.py --authors /tmp/GENE --graphs 0
(printed to 6 decimals; the values below are the same calls' full floats; /tmp/GENE = `git archive HEAD` of their
repository). Their `move` agreed with ours on all 90 (i, j) of a 10-permutation for these seeds; a move's definition
is restated here so the test needs no checkout.
"""

import pytest

from methods.causal._gene_common import chi2_pvalues, move
from tests.anchors._load import anchor

GENE = anchor("gene-causal")
THEIRS = {0: (0.9666346067, 1.68136131e-11, 0.5730615607), 1: (0.1838924892, 1.073582018e-06, 0.4907576383),
          2: (0.9789438228, 6.352780455e-11, 0.3747880424)}


@pytest.mark.parametrize("seed", sorted(THEIRS))
def test_chi2_pvalues_match_their_chisquare_test(seed):
    x, resid = GENE.quick_inputs(seed)
    got = chi2_pvalues(x, resid, 10)
    for ours, theirs in zip(got, THEIRS[seed], strict=True):
        assert ours == pytest.approx(theirs, rel=1e-8, abs=1e-15)


def test_move_takes_position_i_and_reinserts_it_at_j():
    # their move([0..5], 1, 4) and move([0..5], 4, 1), worked by hand from GENE.py l.98-108
    assert move([0, 1, 2, 3, 4, 5], 1, 4) == [0, 2, 3, 4, 1, 5]
    assert move([0, 1, 2, 3, 4, 5], 4, 1) == [0, 4, 1, 2, 3, 5]
