"""The self-drafting oracle (the world's positive control) against acceptances known in closed form.

On a bigram target whose rows are all one law p (the next token does not depend on the context), every draft
is an independent draw, so exact matching accepts a self-drafted candidate with probability Σ p(x)², the
shifted null's with Σ p(x − 1)·p(x), and the min(1, p/q) rule accepts every self-draft (q = p).
"""

import numpy as np
import pytest

from bench.context import RunContext
from methods.decoding import self_draft
from tasks.decoding import score
from tests.methods.decoding import toy

P = np.array([0.0, 0.0, 0.5, 0.2, 0.15, 0.1, 0.05])  # over <pad>, <eos>, a, b, ab, ba, bb: never pad / eos
SELF = float(np.sum(P ** 2))                        # 0.325
SHIFTED = float(np.sum(P * np.roll(P, 1)))          # Σ p(x)·p(x − 1) = 0.15


def _problem(samples: int, horizon: int):
    with np.errstate(divide="ignore"):
        table = np.tile(np.log(P), (7, 1))
    return toy.problem(0, samples=samples, horizon=horizon, target_table=table)


def _run(problem, **config):
    return self_draft.solve(problem, self_draft.Config(**config), RunContext(seed=0))


@pytest.mark.parametrize("shift, expected", [(False, SELF), (True, SHIFTED)])
def test_exact_match_accepts_with_the_collision_probability(shift, expected):
    # threshold 1: one draft token per round, so every draft is scored against a fresh target sample
    result = _run(_problem(3000, 3), shift=shift, confidence_threshold=1.0)
    rate = result.accepted / result.drafted
    se = np.sqrt(expected * (1 - expected) / result.drafted)
    assert result.drafted > 3000
    assert abs(rate - expected) < 4 * se, (rate, expected, se)


def test_the_speculative_rule_accepts_every_self_draft():
    result = _run(_problem(200, 6), exact_match=False, confidence_threshold=0.0)
    assert result.drafted > 0 and result.accepted == result.drafted
    # every round drafts up to the budget and is confirmed in one call: 6 tokens in one call per prompt
    assert result.target_calls == 200


def test_greedy_self_draft_is_the_greedy_chain_and_fully_accepted():
    problem = toy.problem(2, samples=2, horizon=7)
    result = _run(problem, do_sample=False, confidence_threshold=0.0)
    assert result.accepted == result.drafted > 0
    assert result.target_calls == 2  # k = 6 drafts + the bonus token: one target call per prompt
    table, prev, chain = toy.tables(2)[0], toy.TARGET_VOCAB[toy.PROMPT], []
    for _ in range(7):
        prev = int(np.argmax(table[prev]))
        chain.append(prev)
    assert result.outputs == (tuple(chain),) * 2
    problem = toy.problem(2, samples=2, horizon=7)
    shifted = _run(problem, do_sample=False, confidence_threshold=0.0, shift=True)
    assert shifted.outputs == result.outputs                            # lossless all the same
    assert shifted.accepted == 0                                        # its first draft is never the argmax
    assert score(problem, shifted)["target_calls_per_token"] == 1.0     # so one target call per token
