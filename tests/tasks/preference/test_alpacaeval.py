"""The AlpacaEval task on the project's fixture: data plumbing, the deterministic judge, win rates by hand."""

import numpy as np
import pytest

from bench.context import RunContext
from tasks.preference import PreferenceResult, score
from tasks.preference import alpacaeval


@pytest.fixture(scope="module")
def problem():
    return alpacaeval.build(alpacaeval.Config(**alpacaeval.SMALLEST), RunContext(seed=0).for_task())


def test_fixture_is_loaded_as_instructions_references_and_pairs(problem):
    assert len(problem.eval_prompts) == 8 and len(problem.train_prompts) == 8
    assert problem.eval_prompts[0] == "What is 17 plus 25?\n"          # no chat template on the tiny tokenizer
    assert problem.baseline_responses[0] == "17 plus 25 is 42."
    assert problem.off_policy[0] == ("3 plus 4 is 7.", "It is 8.")
    assert problem.eval_categories == ("math",) * 2 + ("coding",) * 2 + ("creative_writing",) * 2 + ("recommendations",) * 2


def test_keyword_judge_and_win_rates_by_hand(problem):
    """Answers equal to the reference on the first four items (ties: ½ each), empty on the last four (losses)."""
    refs = problem.baseline_responses
    np.testing.assert_allclose(problem.judge(problem.eval_prompts[:3], ["42", "seventy-two", "def f(x): return x * x"]),
                               [1.0, 0.0, 1.0])
    responses = tuple(refs[:4]) + ("",) * 4
    zeros = np.zeros(8)
    s = score(problem, PreferenceResult(responses=responses, logp_policy=zeros, logp_ref=zeros))
    assert s["win_rate"] == pytest.approx(0.25)
    assert s["win_rate_math"] == 0.5 and s["win_rate_coding"] == 0.5 and s["win_rate_creative_writing"] == 0.0
    assert s["kl_to_reference"] == 0.0 and "slope1_error" not in s


def test_annotator_ranks_by_the_judge_with_bradley_terry_noise(problem):
    """τ = 1 on keyword shares 1 vs 0: P(first ≻ second) = σ(1) = 0.731."""
    rng = np.random.default_rng(0)
    prompt = problem.train_prompts[0]                                   # keywords ["7"]
    wins = np.mean([problem.annotate(prompt, ["it is 7", "it is 8"], rng)[0] == 0 for _ in range(20000)])
    assert abs(wins - 1 / (1 + np.exp(-1.0))) < 0.01


def test_bad_judge_and_missing_file_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="judge 'gpt5' unknown"):
        alpacaeval.Config(judge="gpt5")
    with pytest.raises(ValueError, match="no such file"):
        alpacaeval.load_items(alpacaeval.Config(data=str(tmp_path / "none.json")))
