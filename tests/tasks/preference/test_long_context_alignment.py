"""Long contexts: the answer is unreachable without the far evidence; LOGO's position synthesis; the built task."""

import numpy as np
import pytest

from bench.context import RunContext
from tasks.preference import long_context_alignment
from tasks.preference._long_context import KINDS, LENGTHS, VALUES, make_example, synthesize_positions


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", sorted(LENGTHS.values()))
def test_the_answer_is_only_in_the_far_evidence(kind, n):
    rng = np.random.default_rng(n)
    for _ in range(50):
        chunks, question, answer = make_example(kind, n, rng)
        key = question.split()[1]
        assert len(chunks) == n and answer in VALUES
        holders = [i for i, c in enumerate(chunks) if c.split()[2] == answer]
        assert len(holders) == 1 and holders[0] < max(2, n // 4 + 1)       # one evidence chunk, in the first quarter
        if kind == "multi_hop":
            (link,) = [c for c in chunks if c.split()[0] == key]
            bridge = link.split()[2]
            assert chunks[holders[0]].split()[0] == bridge                   # key → bridge → answer, both needed
        else:
            assert chunks[holders[0]].split()[0] == key
        rest = " ".join(c for i, c in enumerate(chunks) if i != holders[0])
        assert answer not in rest.split()                                    # without the evidence: unreachable


def test_position_synthesis_is_increasing_inside_the_window_and_contiguous_per_chunk():
    rng = np.random.default_rng(0)
    far = []
    for _ in range(500):
        pos = synthesize_positions(24, 4, 192, rng)
        assert np.all(np.diff(pos) >= 1) and pos[0] >= 0 and pos[-1] < 192
        far.append(pos[-1])
    continuous = synthesize_positions(24, 4, 192, np.random.default_rng(1), sparse_prob=0.0)
    assert all(np.all(np.diff(continuous[j * 6:(j + 1) * 6]) == 1) for j in range(4))
    assert np.mean(far) > 96                                                 # spread over the long window
    assert list(synthesize_positions(10, 2, 10, rng)) == list(range(10))      # no room: the real positions


def test_the_built_task_has_short_training_and_three_evaluation_lengths():
    problem = long_context_alignment.build(long_context_alignment.Config(**long_context_alignment.SMALLEST),
                                           RunContext(seed=0).for_task())
    assert len(problem.train_prompts) == 24 and all(len(o) == 3 for o in problem.off_policy)
    assert problem.categories == ("short", "medium", "long") and len(problem.eval_prompts) == 9
    right = [o[0] for o in problem.off_policy]
    assert np.all(problem.judge(problem.train_prompts, right) == 1.0)
    assert np.all(problem.judge(problem.train_prompts, [o[1] for o in problem.off_policy]) == 0.0)
    assert problem.position_window == 192
