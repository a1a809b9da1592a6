"""The preference world: gold reward by hand, the annotator is Bradley–Terry, the AlpacaEval LC win rate by hand."""

from pathlib import Path

import numpy as np
import pytest

from tasks.preference import length_controlled_win_rate_simple, slope1_metrics, win_preferences
from tasks.preference._world import annotate, answer, gold_reward, make_prompts


def test_gold_reward_hand_cases():
    assert answer("add 2 3 =") == ["5"] and answer("rev a c f =") == ["f", "c", "a"]
    assert gold_reward("add 2 3 =", "5") == 1.0
    assert gold_reward("add 2 3 =", "5 5") == pytest.approx(0.9)          # −0.1 per extra word
    assert gold_reward("add 2 3 =", "6") == 0.0
    assert gold_reward("rev a c f =", "f c a") == 1.0
    assert gold_reward("rev a c f =", "a c f") == pytest.approx(1 / 3)     # the copied (unreversed) mistake
    # creative taste: mean weight (+1 style, 0 content, −1 other) − 0.1·|len − 6|
    assert gold_reward("story sea =", "bright gentle") == pytest.approx(1.0 - 0.4)
    assert gold_reward("story sea =", "bright calm quiet wild soft zzz") == pytest.approx((1 + 0 + 0 + 1 + 1 - 1) / 6)
    assert gold_reward("recommend sea =", "quiet clear old calm warm quiet") == pytest.approx(1.0)
    assert gold_reward("story sea =", "") == -1.0


def test_prompts_cover_the_four_categories_equally():
    prompts, categories = make_prompts(5, np.random.default_rng(0))
    assert len(prompts) == 20 and [categories.count(c) for c in set(categories)] == [5] * 4


def test_the_annotator_is_bradley_terry_in_gold_over_tau():
    """P(a ≻ b) = σ((g_a − g_b)/τ): 'bright gentle golden wild soft bright' (1.0) vs 'bright calm tiny dark new old'
    (1/6)."""
    rng = np.random.default_rng(1)
    a, b, tau = "bright gentle golden wild soft bright", "bright calm tiny dark new old", 0.5
    wins = np.mean([annotate("story sea =", [a, b], rng, tau)[0] == 0 for _ in range(20000)])
    p = 1 / (1 + np.exp(-(1.0 - 1 / 6) / tau))
    assert abs(wins - p) < 4 * np.sqrt(p * (1 - p) / 20000)


def test_length_controlled_win_rate_simple_hand_case():
    """Two length groups, Δlen = ±5 (so tanh(Δ/std) = ±tanh 1): the GLM is saturated, σ(θ ± φ·tanh 1) = 0.8 / 0.4,
    θ = (logit 0.8 + logit 0.4)/2 = (ln 4 + ln ⅔)/2 = 0.490415, LC = σ(θ) = 0.620204 (raw win rate 0.6)."""
    wins = np.array([1.0] * 8 + [0.0] * 2 + [1.0] * 4 + [0.0] * 6)
    delta = np.array([5.0] * 10 + [-5.0] * 10)
    assert wins.mean() == pytest.approx(0.6)
    assert length_controlled_win_rate_simple(wins, delta) == pytest.approx(0.620204, abs=1e-5)
    # no length difference: LC = the raw win rate; soft ties are ½
    assert length_controlled_win_rate_simple(np.array([1, 1, 0.5, 0.0]), np.zeros(4)) == pytest.approx(0.625, abs=1e-6)
    assert list(win_preferences([1, 0, 2], [0, 0, 3])) == [1.0, 0.5, 0.0]


def test_slope1_metrics():
    true = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, -1.0]])
    exact = slope1_metrics(true + np.array([[3.0], [-2.0]]), true)        # a per-prompt constant is free
    assert exact["slope1_error"] == pytest.approx(0.0) and exact["reward_pearson"] == pytest.approx(1.0)
    doubled = slope1_metrics(2 * true, true)                               # Pearson 1, but slope 2: ε̂ = mean (t − t̄)²
    assert doubled["reward_pearson"] == pytest.approx(1.0) and doubled["slope1_error"] == pytest.approx(2 / 3)


def test_each_run_seed_has_its_own_sft_policy_unless_world_seed_fixes_one(tmp_path):
    """π_SFT's training is chaotic: one per run seed puts its spread into the seeds' (docs/papers/simplemix.md)."""
    import json

    from bench.context import RunContext
    from tasks.preference.preference_world import SMALLEST, Config, build

    small = dict(SMALLEST, sft_steps=2, sft_examples=64)
    own = {seed: build(Config(**small), RunContext(seed=seed, cache_root=tmp_path).for_task()).sft_path
           for seed in (0, 1)}
    assert {Path(path).parent for path in own.values()} == {tmp_path / "preference"}  # the context's cache_dir
    assert own[0] != own[1]
    assert [json.loads((Path(own[s]) / "settings.json").read_text())["world_seed"] for s in (0, 1)] == [0, 1]
    fixed = {seed: build(Config(**small, world_seed=7), RunContext(seed=seed, cache_root=tmp_path).for_task()).sft_path
             for seed in (0, 1)}
    assert fixed[0] == fixed[1] not in own.values()


def test_every_writer_has_one_quality_in_every_category_and_the_pool_averages_the_teachers():
    """World version 3 (issue 23): a writer of quality q is right on a verifiable prompt with probability q and picks
    each word of a subjective answer from the style subset with probability q (so the style share is q + (1 − q)·5/16,
    the content vocabulary holding the 5 style words among its 16). The pool's mean quality is the teacher's ½: neither
    source holds better answers in any category by construction."""
    from tasks.preference._world import CONTENT, POOL_QUALITY, STYLE, pool_response, teacher_response

    rng, n = np.random.default_rng(3), 1500
    assert np.mean(POOL_QUALITY) == pytest.approx(0.5)
    prompts = {"math": "add 2 3 =", "coding": "rev a c f =", "creative_writing": "story sea =",
               "recommendations": "recommend moon ="}

    def rate(write, category):
        prompt = prompts[category]
        if category in ("math", "coding"):
            return np.mean([write(prompt).split() == answer(prompt) for _ in range(n)])
        words = [w for _ in range(n) for w in write(prompt).split()]
        return np.mean([w in STYLE[category] for w in words]), len(words)

    chance = {"teacher": {"math": 0.0, "coding": 0.0}, "pool": {"math": 1 / 10, "coding": 1 / 216}}  # random mistakes
    for q in (*POOL_QUALITY, 0.5):
        writers = {"teacher": lambda p, q=q: teacher_response(p, rng, q),
                   "pool": lambda p, q=q: pool_response(p, q, rng)}
        for name, write in writers.items():
            for category in prompts:
                if category in ("math", "coding"):
                    expected = q + (1 - q) * chance[name][category]
                    assert abs(rate(write, category) - expected) < 4 * np.sqrt(expected * (1 - expected) / n) + 1e-9
                else:
                    share, words = rate(write, category)
                    expected = q + (1 - q) * len(STYLE[category]) / len(CONTENT)
                    assert abs(share - expected) < 4 * np.sqrt(expected * (1 - expected) / words)
    # the mistakes differ: the teacher's are the policy's own (off by one, copied letters), the pool's random
    teacher_wrong = {teacher_response("rev a c f =", rng, 0.0) for _ in range(50)}
    assert teacher_wrong == {"a c f"}
    assert len({pool_response("rev a c f =", 0.0, rng) for _ in range(50)}) > 10
