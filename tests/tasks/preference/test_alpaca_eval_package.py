"""The alpaca_eval package end to end: its GPT-4-turbo judge on a fake OpenAI, and its length-controlled win rate.

The fake stands in for `openai.OpenAI` only: the package's own prompt template, output-order shuffling,
`openai_completions`, logprob parser and annotation cache all run. It answers like gpt-4-1106-preview with
max_tokens=1, logprobs=True, top_logprobs=5: one token with its top-5 alternatives, where P("m") : P("M") is
σ(s(output shown as m) − s(output shown as M)) for a hidden quality s(text) = len(text) / 10, and 10 % of the
mass sits on other tokens (the parser renormalises over {"m", "M"}).
"""

import re

import numpy as np
import pandas as pd
import pytest

from bench.context import RunContext
from tasks.preference import PreferenceResult, alpacaeval, length_controlled_win_rate_simple, score, sigmoid

alpaca_eval = pytest.importorskip("alpaca_eval")
openai = pytest.importorskip("openai")
from openai.types.chat import ChatCompletion  # noqa: E402

SHOWN = re.compile(r'"model_identifier": "(m|M)",\s*"output": """(.*?)"""', re.S)


def quality(text: str) -> float:
    return len(text) / 10


class FakeOpenAI:
    """openai.OpenAI's surface that alpaca_eval touches: client.chat.completions.create(messages=..., **kwargs)."""

    calls: list = []

    def __init__(self, **client_kwargs):
        self.chat = self.completions = self

    def create(self, messages, model, max_tokens, logprobs, top_logprobs, **kwargs):
        assert model == "gpt-4-1106-preview" and max_tokens == 1 and logprobs and top_logprobs == 5
        shown = dict(SHOWN.findall(messages[-1]["content"]))        # {"m": output_1 as shown, "M": output_2}
        type(self).calls.append(shown)
        p_m = float(sigmoid(quality(shown["m"]) - quality(shown["M"])))
        top = [{"token": "m", "logprob": np.log(0.9 * p_m), "bytes": [109]},
               {"token": "M", "logprob": np.log(0.9 * (1 - p_m)), "bytes": [77]},
               {"token": "Both", "logprob": np.log(0.06), "bytes": list(b"Both")},
               {"token": "The", "logprob": np.log(0.03), "bytes": list(b"The")},
               {"token": "Based", "logprob": np.log(0.01), "bytes": list(b"Based")}]
        top = sorted(top, key=lambda t: -t["logprob"])
        return ChatCompletion.model_validate({
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "length",
                         "message": {"role": "assistant", "content": top[0]["token"]},
                         "logprobs": {"content": [{**top[0], "top_logprobs": top}]}}],
            "usage": {"prompt_tokens": 380, "completion_tokens": 1, "total_tokens": 381}})


@pytest.fixture
def fake_openai(monkeypatch):
    FakeOpenAI.calls = []
    monkeypatch.setattr(openai, "OpenAI", FakeOpenAI)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    return FakeOpenAI


INSTRUCTIONS = {"p0": "Name a prime.", "p1": "Say hi.", "p2": "Describe rain.", "p3": "Count to three."}
PROMPTS = ["p0", "p1", "p2", "p3"]
ANSWERS = ["7 is a prime number.", "hi", "Rain is water falling from clouds in drops.", "1, 2, 3"]
REFERENCE = ["2", "Hello there, friend!", "Rain is water falling from clouds.", "1, 2, 3"]


def test_weighted_judge_gives_the_soft_probability_that_the_answer_wins(fake_openai, tmp_path):
    cache = tmp_path / "annotations.json"
    prefs = alpacaeval.alpaca_eval_preferences(INSTRUCTIONS, PROMPTS, ANSWERS, REFERENCE, caching_path=str(cache))
    expected = [sigmoid(quality(a) - quality(r)) for a, r in zip(ANSWERS, REFERENCE, strict=True)]
    expected[3] = 0.5                                            # identical outputs: 1.5, never sent to the judge
    np.testing.assert_allclose(prefs, expected, atol=1e-9)
    assert len(fake_openai.calls) == 3
    shown_first = [call["m"] for call in fake_openai.calls]
    assert set(shown_first) & set(ANSWERS) and set(shown_first) & set(REFERENCE)   # both orders were exercised
    assert cache.is_file()
    again = alpacaeval.alpaca_eval_preferences(INSTRUCTIONS, PROMPTS, ANSWERS, REFERENCE, caching_path=str(cache))
    np.testing.assert_allclose(again, prefs, atol=1e-12)
    assert len(fake_openai.calls) == 3                           # all read back from the package's cache


def test_the_task_scores_win_rates_with_the_package_judge(fake_openai, tmp_path):
    config = alpacaeval.Config(**{**alpacaeval.SMALLEST, "judge": "alpaca_eval"})
    problem = alpacaeval.build(config, RunContext(seed=0, cache_root=tmp_path).for_task())
    responses = tuple(r + " Indeed." for r in problem.baseline_responses[:4]) + problem.baseline_responses[4:]
    zeros = np.zeros(len(responses))
    s = score(problem, PreferenceResult(responses=responses, logp_policy=zeros, logp_ref=zeros))
    p_longer = sigmoid(len(" Indeed.") / 10)                     # the answer is 8 characters longer than the reference
    assert s["win_rate"] == pytest.approx((4 * p_longer + 4 * 0.5) / 8, abs=1e-9)
    assert s["win_rate_math"] == pytest.approx(p_longer) and s["win_rate_creative_writing"] == pytest.approx(0.5)
    assert (tmp_path / "preference" / "alpaca_eval_annotations.json").is_file()  # the context's cache_dir


def test_missing_openai_key_is_a_one_line_error_before_anything_runs(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEYS", raising=False)
    config = alpacaeval.Config(**{**alpacaeval.SMALLEST, "judge": "alpaca_eval"})
    with pytest.raises(ValueError, match=r"judge alpaca_eval calls OpenAI's gpt-4-1106-preview: set OPENAI_API_KEY"):
        alpacaeval.build(config, RunContext(seed=0).for_task())


# ---- the simple per-model length-controlled fit against alpaca_eval.metrics.glm_winrate (published LC:
# test_alpacaeval_lc.py)

MINIMAL = {**alpaca_eval.metrics.glm_winrate.GLM_INFO["length_controlled_minimal"], "kwargs": {"n_splits": 0}}


def synthetic_annotations(n: int, theta: float, phi: float, seed: int) -> pd.DataFrame:
    """n instructions; soft preferences from the GLM itself, P(model wins) = σ(θ + φ·tanh(Δlen / std))."""
    rng = np.random.default_rng(seed)
    len_b = rng.integers(50, 400, n)
    len_m = np.maximum(1, len_b + rng.normal(80, 120, n).astype(int))
    delta = (len_m - len_b).astype(float)
    p = sigmoid(theta + phi * np.tanh(delta / delta.std(ddof=1)))
    pref = np.clip(p + rng.normal(0, 0.05, n), 0.0, 1.0)
    return pd.DataFrame({"index": np.arange(n), "output_1": ["b" * k for k in len_b],
                         "output_2": ["m" * k for k in len_m],
                         "preference": 1.0 + pref, "generator_1": "baseline", "generator_2": "model",
                         "annotator": "weighted_alpaca_eval_gpt4_turbo"})


def package_lc(df: pd.DataFrame, glm_info: dict, monkeypatch, tmp_path) -> dict:
    """alpaca_eval's get_length_controlled_winrate, its hub download of df_gamed.csv replaced by zero difficulties."""
    from alpaca_eval.metrics import glm_winrate

    gamed = tmp_path / "df_gamed.csv"
    pd.DataFrame({"model": "none", "index": np.arange(len(df)), "instruction_difficulty": 0.0, "preference": 0.5,
                  "std_delta_len": 0.0, "not_gamed_baseline": True}).to_csv(gamed, index=False)
    monkeypatch.setattr(glm_winrate, "hf_hub_download", lambda **kwargs: str(gamed))
    return glm_winrate.get_length_controlled_winrate(df, glm_info=glm_info, save_weights_dir=None)


@pytest.mark.parametrize("theta, phi, seed", [(0.3, 1.2, 0), (-0.8, 2.0, 1), (1.0, -0.5, 2)])
def test_the_simple_lc_fit_is_alpaca_evals_glm_at_fixed_instruction_difficulty(theta, phi, seed, monkeypatch, tmp_path):
    """With one model against one baseline the instruction-difficulty term is not identifiable (AlpacaEval fits
    it across its leaderboard's models); fixed at 0 for every instruction, AlpacaEval's `length_controlled_v1`
    formula without the gamed-baseline regularisation is its `length_controlled_minimal` GLM
    logit P = θ + φ·tanh(Δ/std(Δ)) and its LC is mean_i σ(θ + 0) = σ(θ), our quantity. Two residual
    differences set the tolerance: AlpacaEval's Δ = len(baseline) − len(model) over the pandas std (ddof = 1)
    versus our len(model) − len(baseline) over NumPy's (ddof = 0) — the sign only flips φ, the ddof rescales the
    tanh argument by √(n/(n−1)), which moves σ(θ) by ~2e-6 here — and its liblinear fit carries an L1
    penalty ‖w‖₁ with C = 100 (and liblinear's tolerance), which moves θ by about 1/(C·Σ p(1−p)) ≈ 2e-5.
    Measured: |ours − theirs| ≈ 3e-5 while the raw WR is 0.04–0.2 away; the tolerance 2e-4 keeps a margin.
    Not comparable: the package's default `length_controlled_v1` also fits the leaderboard's gamed baselines
    (df_gamed.csv from the hub, weight λ = 0.2) and picks C by 5-fold CV, so its θ depends on other models."""
    df = synthetic_annotations(2000, theta, phi, seed)
    delta = df["output_2"].str.len().to_numpy() - df["output_1"].str.len().to_numpy()
    ours = length_controlled_win_rate_simple(df["preference"].to_numpy() - 1.0, delta)
    theirs = package_lc(df, MINIMAL, monkeypatch, tmp_path)
    assert theirs["win_rate"] / 100 == pytest.approx(np.mean(df["preference"] - 1.0), abs=1e-12)   # raw WR
    assert theirs["length_controlled_winrate"] / 100 == pytest.approx(ours, abs=2e-4)
    assert abs(ours - theirs["win_rate"] / 100) > 0.02                  # the length control is doing something
    with_difficulty = {**MINIMAL,
                       "formula": alpaca_eval.metrics.glm_winrate.GLM_INFO["length_controlled_noreg"]["formula"]}
    full = package_lc(df, with_difficulty, monkeypatch, tmp_path)  # the v1 formula, difficulty fixed at 0
    assert full["length_controlled_winrate"] / 100 == pytest.approx(ours, abs=2e-4)
    assert abs(ours - sigmoid(theta)) < 0.05                          # and both recover the generating θ
