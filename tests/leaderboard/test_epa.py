"""EPA (Hong et al., ICML 2025): the claims file."""

from bench.registry import Registry
from leaderboard.claims import load_paper, paper_cells

PAPER = "epa"


def is_bandit(claim) -> bool:
    return all(g.task == "preference_bandit" for g in claim.groups)


def test_claims_file_is_valid():
    registry = Registry.discover()
    paper = load_paper(registry, PAPER)
    assert set(paper.methods) == {"epa"} and paper.methods["epa"]["fidelity"] == "reconstructed"
    assert [c.id for c in paper.claims if c.scale == "paper-scale"] == ["alpacaeval-epa-above-dpo"]
    # preference_world + preference_bandit cells, + 4 of the worlds' positive controls: π_SFT / π_ref as DPO that does
    # not move (lr 0 or 1e-12) in each world, the bandit's twice (two training budgets)
    assert len(set(paper_cells(paper, registry, seeds=1, controls=False))) == 5 + 6 + 4
    # negative controls: the same methods under an uninformative annotator (label_temperature 1000), 3 world + 6 bandit
    # cells, and 4 of the positive controls (their no-op DPO cells and nulls); + epa switched off as Bradley–Terry
    # (k_s = 1, k_w = 0) in the world and the bandit (switched off as k_w = 0 it is the weak-negatives claims' cell
    # already), and the paper-scale AlpacaEval cell under each of the two switches
    assert len(set(paper_cells(paper, registry, seeds=1))) == 5 + 6 + 3 + 6 + 4 + 2 + 2
    assert all(c.control for c in paper.claims if c.scale != "paper-scale" and c.role == "claim")
    bandit = [c for c in paper.claims if c.id.startswith("bandit-") and c.role == "claim"]
    assert len(bandit) == 8
    assert [c.id for c in bandit] == [c.id for c in paper.claims if is_bandit(c) and c.role == "claim"]
    assert all(c.seeds == 5 and c.scale == "cpu-full" and {g.task for g in c.groups} == {"preference_bandit"}
               for c in bandit)
