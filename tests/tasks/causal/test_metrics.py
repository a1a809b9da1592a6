"""The causal family's judge against hand-computed graphs: SHD, F1, Rev, SID (gcastle conventions)."""

import numpy as np
import pytest

from tasks.causal import CausalProblem, CausalResult, reversals, score, shd_and_counts, sid


def adj(d, *edges):
    a = np.zeros((d, d), dtype=int)
    for i, j in edges:
        a[i, j] = 1
    return a


CHAIN4 = adj(4, (0, 1), (1, 2), (2, 3))


def problem(true):
    return CausalProblem(data=np.zeros((5, true.shape[0])), adjacency=true, names=tuple("abcdefgh"[: true.shape[0]]))


def test_dag_estimate_counts_extra_missing_and_reversed_once():
    # est: 0→1 right, 2→1 reversed, 0→3 extra; 2→3 missing
    out = shd_and_counts(adj(4, (0, 1), (2, 1), (0, 3)), CHAIN4)
    assert out["shd"] == 3
    assert out["precision"] == pytest.approx(1 / 3) and out["recall"] == pytest.approx(1 / 3)
    assert out["f1"] == pytest.approx(1 / 3)
    assert out["n_edges"] == 3


def test_undirected_edge_on_a_true_edge_costs_no_shd_but_one_false_positive():
    est = adj(4, (0, 1), (1, 0), (1, 2), (2, 3))  # 0 — 1 undirected
    out = shd_and_counts(est, CHAIN4)
    assert out["shd"] == 0
    assert out["precision"] == pytest.approx(3 / 4) and out["recall"] == 1.0
    assert out["f1"] == pytest.approx(6 / 7)
    assert out["n_edges"] == 3
    scores = score(problem(CHAIN4), CausalResult(adjacency=est))
    assert "sid" not in scores  # a CPDAG has an SID interval, not a value


def test_undirected_edge_off_the_skeleton_is_extra():
    out = shd_and_counts(adj(4, (0, 1), (1, 2), (2, 3), (0, 3), (3, 0)), CHAIN4)
    assert out["shd"] == 1
    assert out["precision"] == pytest.approx(3 / 5) and out["f1"] == pytest.approx(2 * 0.6 / 1.6)


def test_empty_estimate():
    out = shd_and_counts(np.zeros((4, 4), dtype=int), CHAIN4)
    assert out == {"shd": 3.0, "precision": 0.0, "recall": 0.0, "f1": 0.0, "n_edges": 0.0}


def test_perfect_estimate():
    s = score(problem(CHAIN4), CausalResult(adjacency=CHAIN4, order=np.array([0, 1, 2, 3]), runtime_s=1.5))
    assert (s["shd"], s["f1"], s["sid"], s["rev"], s["rev_rate"], s["runtime_s"]) == (0, 1, 0, 0, 0, 1.5)


def test_reversal_count_is_ancestor_pairs_ordered_wrongly():
    assert reversals(CHAIN4, np.array([3, 2, 1, 0])) == 6      # all 6 ancestor pairs of the chain
    assert reversals(CHAIN4, np.array([1, 0, 2, 3])) == 1
    v = adj(3, (0, 2), (1, 2))                                   # 0 and 1 unrelated
    assert reversals(v, np.array([1, 0, 2])) == 0
    assert reversals(v, np.array([2, 0, 1])) == 2
    s = score(problem(CHAIN4), CausalResult(adjacency=CHAIN4, order=np.array([1, 0, 2, 3])))
    assert s["rev_rate"] == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match="permutation"):
        reversals(CHAIN4, np.array([0, 0, 1, 2]))


def test_sid_hand_computed():
    xy = adj(2, (0, 1))
    assert sid(xy, xy) == 0
    assert sid(np.zeros((2, 2), dtype=int), xy) == 1   # do(y) wrongly predicted as p(x | y)
    assert sid(adj(2, (1, 0)), xy) == 2
    collider = adj(3, (0, 2), (1, 2))                  # x → z ← y
    assert sid(np.zeros((3, 3), dtype=int), collider) == 2  # do(z) on x and on y
    assert sid(adj(3, (0, 2)), collider) == 1          # do(z) on y adjusting for {x}
    assert sid(collider, collider) == 0
    # the chain misses 0 → 3 of the truth: do(3) adjusting for {2} leaves 3 ← 0 → 1 and 3 ← 0 open
    assert sid(CHAIN4, adj(4, (0, 1), (1, 2), (2, 3), (0, 3))) == 2


def test_score_rejects_malformed_estimates():
    with pytest.raises(ValueError, match="binary"):
        score(problem(CHAIN4), CausalResult(adjacency=np.eye(4, dtype=int)))
    with pytest.raises(ValueError, match="binary"):
        score(problem(CHAIN4), CausalResult(adjacency=np.zeros((3, 3))))
    with pytest.raises(ValueError, match="DAG"):
        problem(adj(2, (0, 1), (1, 0)))
