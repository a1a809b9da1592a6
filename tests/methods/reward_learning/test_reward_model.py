"""reward_model: its scores are the model's own, aggregated by hand; chat templates; a model saved to disk."""

import numpy as np
import pytest

from bench.context import RunContext
from bench.toolkit.models import load_model, save_model, score_texts
from methods.reward_learning import reward_model
from tasks.reward_learning import rewardbench, score
from tasks.reward_learning._rewardbench import EXAMPLE_COUNTS, SUBSET_MAPPING


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    model, tok = load_model("tiny-gpt2", seed=11)
    return str(save_model(model, tok, tmp_path_factory.mktemp("rm") / "tiny-gpt2-rm"))


@pytest.fixture(scope="module")
def problem():
    return rewardbench.build(rewardbench.Config(dataset=str(rewardbench.FIXTURE)), RunContext(0).for_task())


def test_scores_are_the_models_and_the_metrics_aggregate_them_by_hand(saved_model, problem):
    result = reward_model.solve(problem, reward_model.Config(model=saved_model, batch_size=7), RunContext(0))
    model, tok = load_model(saved_model)
    for texts, got in ((problem.chosen, result.scores_chosen), (problem.rejected, result.scores_rejected)):
        own = [score_texts(model, tok, [f"Human: {p}\n\nAssistant: {r}<eos>"])[0]
               for p, r in zip(problem.prompts, texts, strict=True)]
        np.testing.assert_allclose(got, own, atol=1e-5)
    correct = {}
    for sub, c, r in zip(problem.subsets, result.scores_chosen, result.scores_rejected, strict=True):
        correct.setdefault(sub, []).append(1.0 if c > r else 0.0)
    acc = {sub: sum(v) / len(v) for sub, v in correct.items()}
    sections = {}
    for section, members in SUBSET_MAPPING.items():
        present = [m for m in members if m in acc]
        sections[section] = sum(acc[m] * EXAMPLE_COUNTS[m] for m in present) / sum(EXAMPLE_COUNTS[m] for m in present)
    s = score(problem, result)
    for section, value in sections.items():
        assert s[section] == pytest.approx(value, abs=1e-12)
    assert s["rewardbench_score"] == pytest.approx(sum(sections.values()) / 4, abs=1e-12)


def test_chat_template_of_the_tokenizer_has_precedence(problem):
    _, tok = load_model("tiny-llama")
    plain = reward_model.format_texts(tok, problem.prompts[:2], problem.chosen[:2], "auto")
    assert plain[0] == f"Human: {problem.prompts[0]}\n\nAssistant: {problem.chosen[0]}<eos>"
    tok.chat_template = "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}{% endfor %}"
    templated = reward_model.format_texts(tok, problem.prompts[:1], problem.chosen[:1], "auto")
    assert templated == [f"<user>{problem.prompts[0]}<assistant>{problem.chosen[0]}"]
    assert reward_model.format_texts(tok, problem.prompts[:1], problem.chosen[:1], "plain")[0] == plain[0]
    tok.chat_template = None
    with pytest.raises(ValueError, match="has no chat template"):
        reward_model.format_texts(tok, problem.prompts[:1], problem.chosen[:1], "tokenizer")


def test_config_errors_list_what_is_allowed():
    with pytest.raises(ValueError, match="allowed: auto, tokenizer, plain"):
        reward_model.Config(chat_template="ziya")
    with pytest.raises(ValueError, match="allowed: auto, float32, bfloat16, float16"):
        reward_model.Config(dtype="int4")
