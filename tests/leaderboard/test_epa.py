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
    assert len(set(paper_cells(paper, registry, seeds=1, controls=False))) == 5 + 6   # preference_world +
                                                                                      # preference_bandit cells
    # negative controls: the same methods under an uninformative annotator (label_temperature 1000), 3 world + 6 bandit
    # cells
    assert len(set(paper_cells(paper, registry, seeds=1))) == 5 + 6 + 3 + 6
    assert all(c.control for c in paper.claims if c.scale != "paper-scale")
    bandit = [c for c in paper.claims if c.id.startswith("bandit-")]
    assert len(bandit) == 8 and [c.id for c in bandit] == [c.id for c in paper.claims if is_bandit(c)]
    assert all(c.seeds == 5 and c.scale == "cpu-full" and {g.task for g in c.groups} == {"preference_bandit"}
               for c in bandit)
