"""EPA (Hong et al., ICML 2025): the claims file and its CPU-scale verdicts."""

import pytest

from bench.registry import Registry
from leaderboard.claims import evaluate_paper, group_cells, load_paper, paper_cells
from tests.leaderboard.paper_cli import cpu_scale_verdicts

PAPER = "epa"
# Regression pin (3 seeds, the preference family's first commit): EPA's mechanism is NOT reproduced in the sequence
# world after one epoch. Means: Pearson DPO 0.704 vs EPA 0.697; slope-1 error DPO 8.21 vs EPA 8.45 (k_w = 0: 8.35);
# win rate vs π_SFT DPO 0.663 vs EPA 0.645.
EXPECTED = {
    "epa-implicit-reward-more-linear-pearson": "not reproduced",
    "epa-implicit-reward-more-linear-slope1": "not reproduced",
    "epa-weak-negatives-help": "not reproduced",
    "epa-beats-dpo-win-rate": "not reproduced",
}
# Regression pin (5 seeds) of the spec's §7.1 tabular bandit (task preference_bandit). 5-seed means:
# ε̂ DPO binarized 9.44, DPO best-vs-each 17.6, EPA (k_s = 3) k_w = 0 / 2 / 4 / 8: 20.3 / 9.96 / 9.86 / 10.0;
# Pearson DPO binarized 0.225, best-vs-each 0.264, EPA 0.231; J at KL = 1 nat DPO 0.448 / 0.469, EPA 0.400.
EXPECTED_BANDIT = {
    "bandit-epa-slope1-below-dpo-binarized": "not reproduced",
    "bandit-epa-slope1-below-dpo-best-vs-each": "reproduced",
    "bandit-epa-pearson-above-dpo-binarized": "reproduced",
    "bandit-epa-pearson-above-dpo-best-vs-each": "not reproduced",
    "bandit-weak-plus-strong-beats-strong-only": "reproduced",
    "bandit-more-weak-negatives-smaller-error": "not reproduced",
    "bandit-frontier-epa-not-below-dpo-binarized": "not reproduced",
    "bandit-frontier-epa-not-below-dpo-best-vs-each": "not reproduced",
}


def bandit_verdicts(tmp_path) -> dict[str, str]:
    """{claim id: verdict} of the preference_bandit claims, run at their own 5 seeds in a fresh store."""
    from bench.store import Store
    from runners.local import run_cells

    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    claims = [c for c in paper.claims if all(g.task == "preference_bandit" for g in c.groups)]
    cells = {cell for claim in claims for g in claim.groups for cell in group_cells(g, registry, claim.seeds)}
    store = Store.open(f"sqlite:///{tmp_path}/bandit.db")
    summary = run_cells(sorted(cells, key=lambda c: c.run_key), store, registry)
    assert set(summary.counts) == {"done"}, summary.counts
    ids = {c.id for c in claims}
    return {v.claim.id: v.verdict for v in evaluate_paper(paper, store, registry) if v.claim.id in ids}



def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"epa"} and paper.methods["epa"]["fidelity"] == "reconstructed"
    assert [c.id for c in paper.claims if c.scale == "paper-scale"] == ["alpacaeval-epa-above-dpo"]
    assert len(set(paper_cells(paper, registry, seeds=1))) == 5 + 6   # preference_world + preference_bandit cells
    bandit = [c for c in paper.claims if c.id.startswith("bandit-")]
    assert {c.id for c in bandit} == set(EXPECTED_BANDIT)
    assert all(c.seeds == 5 and c.scale == "cpu-full" and {g.task for g in c.groups} == {"preference_bandit"}
               for c in bandit)


@pytest.mark.slow
def test_cpu_claims_give_the_pinned_verdicts(tmp_path):
    verdicts = cpu_scale_verdicts(PAPER, tmp_path, seeds=3)   # also runs the bandit cells at 3 seeds (pinned below)
    assert {k: v for k, v in verdicts.items() if k in EXPECTED} == EXPECTED


@pytest.mark.slow
def test_bandit_claims_give_the_pinned_verdicts(tmp_path):
    """The §7.1 claims at their 5 seeds (30 runs of about 5 s)."""
    assert bandit_verdicts(tmp_path) == EXPECTED_BANDIT
