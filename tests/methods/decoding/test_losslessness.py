"""Losslessness of every decoder on hand-built bigram LMs whose continuation law is known exactly.

Greedy: the output must equal the target's own argmax chain, id for id. Sampling: the empirical law of
H-token continuations over many runs must pass a chi-square test against the exact product law (bins
with >= 5 expected counts; the rest pooled), and a deliberately lossy sampler must fail the same test.
"""

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from bench.context import RunContext
from methods.decoding import autoregressive, slem, slrs, speculative, tli
from tests.methods.decoding import toy

MODULES = {"autoregressive": autoregressive, "speculative": speculative, "slem": slem, "tli": tli, "slrs": slrs}


def _run(name: str, problem, seed: int = 0, **config):
    module = MODULES[name]
    return module.solve(problem, module.Config(**config), RunContext(seed=seed))


def chi_square_pvalue(outputs, law: dict) -> float:
    counts = {seq: 0 for seq in law}
    for out in outputs:
        counts[tuple(out)] += 1  # a sequence outside the support raises KeyError: lossy by construction
    n = len(outputs)
    big = [s for s in law if law[s] * n >= 5]
    small = [s for s in law if law[s] * n < 5]
    observed = [counts[s] for s in big] + ([sum(counts[s] for s in small)] if small else [])
    expected = [law[s] * n for s in big] + ([sum(law[s] for s in small) * n] if small else [])
    return float(chisquare(observed, np.array(expected) * sum(observed) / sum(expected)).pvalue)


def greedy_chain(table: np.ndarray, horizon: int) -> tuple[int, ...]:
    prev, out = toy.TARGET_VOCAB[toy.PROMPT], []
    for _ in range(horizon):
        prev = int(np.argmax(table[prev]))
        out.append(prev)
    return tuple(out)


@pytest.mark.parametrize("name", ["autoregressive", "speculative", "slem", "tli"])
@pytest.mark.parametrize("k", [1, 5, 20])
def test_greedy_output_is_the_targets_greedy_decoding(name, k):
    for seed in range(4):
        problem = toy.problem(seed, samples=2, horizon=7)
        config = {} if name == "autoregressive" else {"num_assistant_tokens": k, "confidence_threshold": 0.0}
        result = _run(name, problem, do_sample=False, **config)
        expected = greedy_chain(toy.tables(seed)[0], 7)
        assert result.outputs == (expected, expected)
        assert result.greedy


@pytest.mark.parametrize("name", ["autoregressive", "speculative", "slem", "tli", "slrs"])
def test_sampled_continuations_follow_the_target_law(name):
    problem = toy.problem(3, samples=8000, horizon=2)
    result = _run(name, problem, seed=1, do_sample=True)
    assert chi_square_pvalue(result.outputs, toy.exact_law(toy.tables(3)[0], 2)) > 1e-3
    if name != "autoregressive":
        assert result.target_calls < 8000 * 2  # the drafts do save target calls
        assert 0 < result.accepted <= result.drafted


def test_chi_square_detects_a_lossy_sampler():
    """Negative control: sampling with a perturbed target (TV ≈ 0.1 per step) fails the same test."""
    t_table = toy.tables(3)[0]
    perturbed = t_table + np.random.default_rng(0).normal(0, 0.4, t_table.shape)
    problem = toy.problem(3, samples=8000, horizon=2, target_table=perturbed)
    result = _run("autoregressive", problem, seed=1, do_sample=True)
    assert chi_square_pvalue(result.outputs, toy.exact_law(t_table, 2)) < 1e-3


def test_chi_square_detects_a_missing_residual(monkeypatch):
    """Negative control: speculative sampling that resamples from p (not the residual) after a rejection
    is the classic lossy bug; the test must catch it in TLI."""
    from methods.decoding import _sd

    def lossy(p_rows, q_rows, candidates, generator):
        for i, c in enumerate(candidates):
            p, q = p_rows[i], _sd.fit(q_rows[i], p_rows.shape[-1])
            if float(torch.rand((), generator=generator, dtype=torch.float64)) >= min(1.0, float(p[c] / q[c])):
                return i, candidates[:i] + [_sd.sample(p, generator)]
        return len(candidates), candidates + [_sd.sample(p_rows[len(candidates)], generator)]

    monkeypatch.setattr(_sd, "sampling_verify", lossy)
    result = _run("tli", toy.problem(3, samples=8000, horizon=2), seed=1, do_sample=True)
    assert chi_square_pvalue(result.outputs, toy.exact_law(toy.tables(3)[0], 2)) < 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["speculative", "slem", "tli", "slrs"])
def test_sampled_law_at_three_tokens_several_seeds(name):
    for seed in (4, 5):
        problem = toy.problem(seed, samples=12000, horizon=3)
        result = _run(name, problem, seed=seed, do_sample=True, num_assistant_tokens=3)
        assert chi_square_pvalue(result.outputs, toy.exact_law(toy.tables(seed)[0], 3)) > 1e-3


def test_slrs_psi_matches_the_hand_enumeration():
    """ψ for the toy pair, from the drafter table: the longest-target-prefix rule enumerated by hand."""
    t_table, d_table = toy.tables(0)
    problem = toy.problem(0, samples=1, horizon=1)
    psi = slrs.Psi(problem, slrs.Config())
    q = torch.softmax(torch.as_tensor(d_table), dim=1).numpy()
    a, b, aa, eos, pad = (toy.DRAFTER_VOCAB[s] for s in ("a", "b", "aa", "<eos>", "<pad>"))
    q0 = q[toy.DRAFTER_VOCAB["b"]]  # the prompt 'ab' is drafter tokens a, b: the next law is row b
    expected = np.zeros(8)
    T = toy.TARGET_VOCAB
    expected[T["a"]] = q0[a] * (q[a][a] + q[a][aa] + q[a][eos] + q[a][pad]) + q0[aa]
    expected[T["ab"]] = q0[a] * q[a][b]
    expected[T["b"]] = q0[b] * (q[b][eos] + q[b][pad])
    expected[T["ba"]] = q0[b] * (q[b][a] + q[b][aa])
    expected[T["bb"]] = q0[b] * q[b][b]
    expected[7] = q0[eos] + q0[pad]  # 'none'
    from methods.decoding._sd import Counts

    counts = Counts()
    got = psi(problem.prompt_ids(0), counts).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert counts.drafter_calls == 3  # paths '', 'a', 'b'


def test_tli_intersection_of_the_toy_vocabularies():
    problem = toy.problem(0, samples=1, horizon=1)
    d2t = tli.intersection(problem.target, problem.drafter, 7, 5).tolist()
    assert d2t == [0, 1, 2, 3, -1]  # pad, eos, a, b shared; 'aa' is drafter-only


def test_tli_acceptance_beats_the_union_baseline_analytically():
    """Σ_{x∈I} min(p, q') ≥ Σ_{x∈I} min(p, q) for random p, q and random intersections (TLI, the
    paper's Algorithm 4: never worse than the union baseline)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        p, q = rng.dirichlet(np.ones(12) * 0.3), rng.dirichlet(np.ones(12) * 0.3)
        inter = rng.random(12) < rng.uniform(0.1, 0.9)
        if not inter.any() or q[inter].sum() == 0:
            continue
        q_prime = np.where(inter, q, 0) / q[inter].sum()
        assert np.minimum(p, q_prime)[inter].sum() >= np.minimum(p, q)[inter].sum() - 1e-15


def test_configs_reject_bad_values():
    with pytest.raises(ValueError, match="sampling only"):
        slrs.Config(do_sample=False)
    with pytest.raises(ValueError, match="num_assistant_tokens"):
        slem.Config(num_assistant_tokens=0)
    with pytest.raises(ValueError, match="confidence_threshold"):
        tli.Config(confidence_threshold=1.5)
