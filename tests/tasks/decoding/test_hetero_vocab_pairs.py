"""The hetero_vocab_pairs task: tokenizers, cache, hub-id/directory loading, references, and the family's score."""


import pytest
import torch

from bench.context import RunContext
from bench.observe import observing
from methods.decoding.tli import intersection, output_size
from tasks.decoding import DecodingResult, score
from tasks.decoding._corpus import CODE_PROMPT, KINDS, corpus
from tasks.decoding._lm import greedy_reference, load_lm
from tasks.decoding.hetero_vocab_pairs import SMALLEST, Config, build


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def small(cache_root):
    config = Config(**SMALLEST)
    return config, build(config, RunContext(seed=0, cache_root=cache_root))


def test_build_gives_prompts_of_each_kind_and_the_targets_greedy_reference(small):
    config, problem = small
    assert problem.kinds == KINDS and len(problem.prompts) == 3
    assert problem.prompts[1].startswith(CODE_PROMPT.split("{")[0])
    for index, ref in enumerate(problem.reference):
        assert 1 <= len(ref) <= config.max_new_tokens
        assert list(ref) == greedy_reference(problem.target, problem.prompt_ids(index), config.max_new_tokens)
    assert problem.ar_seconds > 0


def test_vocabularies_differ_and_intersect_partly(small):
    _, problem = small
    target, drafter = problem.target, problem.drafter
    assert target.tokenizer.get_vocab() != drafter.tokenizer.get_vocab()
    assert problem.same_drafter.tokenizer.get_vocab() == target.tokenizer.get_vocab()
    text = corpus(5, seed=3)[4]
    assert drafter.tokenizer.decode(drafter.tokenizer.encode(text)) == text  # Metaspace round trip
    assert target.tokenizer.decode(target.tokenizer.encode(text)) == text
    assert target.tokenizer.encode(text) != drafter.tokenizer.encode(text)
    d2t = intersection(target, drafter, output_size(target), output_size(drafter))
    shared = int((d2t >= 0).sum())
    assert 0.2 * len(d2t) < shared < len(d2t)  # "▁the" (drafter) meets "Ġthe" (target), but not every token
    the_d = drafter.tokenizer.convert_tokens_to_ids("▁the")
    assert target.tokenizer.convert_ids_to_tokens(int(d2t[the_d])) == "Ġthe"


def test_cache_is_reused_and_keyed_by_the_settings(small, cache_root):
    config, _ = small
    dirs = sorted(p.name for p in (cache_root / "decoding").iterdir())  # the context's cache_dir("decoding")
    assert len(dirs) == 1 and dirs[0].startswith("pairs-")
    build(config, RunContext(seed=1, cache_root=cache_root))  # another seed: other prompts, same models
    assert sorted(p.name for p in (cache_root / "decoding").iterdir()) == dirs


def test_an_untrained_world_builds_its_models_at_their_initialisation(tmp_path):
    """train_steps 0 (the claims' negative control): the models keep their seeded initialisation, so the drafter
    knows nothing of the target; the recorded final loss is NaN (no step was taken), not an error."""
    import json

    config = Config(**{**SMALLEST, "train_steps": 0})
    problem = build(config, RunContext(seed=0, cache_root=tmp_path))
    (built,) = (tmp_path / "decoding").iterdir()
    losses = json.loads((built / "done").read_text())["final_loss"]
    assert all(loss != loss for loss in losses.values())  # NaN
    # an untrained model's next-token distribution is nearly uniform over its vocabulary
    probs = problem.target.model(torch.tensor([problem.prompt_ids(0)])).logits[0, -1].softmax(-1)
    assert float(probs.max()) < 5.0 / probs.numel()


def test_saved_directories_load_like_hub_ids(small, cache_root, tmp_path):
    _, problem = small
    local = next((cache_root / "decoding").iterdir())
    by_path = Config(**{**SMALLEST, "target": str(local / "target"), "drafter": str(local / "drafter"),
                        "same_drafter": "none"})
    again = build(by_path, RunContext(seed=0, cache_root=tmp_path))
    assert not (tmp_path / "decoding").exists()  # nothing local to train or cache
    assert again.reference == problem.reference and again.same_drafter is None
    with pytest.raises(ValueError, match="cannot load"):
        load_lm(str(local / "missing-model"))


def test_score_counts_calls_acceptance_and_exact_match(small):
    """The arithmetic of score on a made-up result; the counts are what the problem's meter holds (here written by
    the test in the harness's place: tests/tasks/decoding/test_observed_costs.py has the hooks count them)."""
    _, problem = small
    outputs = (problem.reference[0], problem.reference[1], problem.reference[2][:-1] + (99999,))
    tokens = sum(len(o) for o in outputs)
    with observing(problem) as meter:
        meter.count("target", tokens // 2)
        meter.count("drafter_rows", 10)
    result = DecodingResult(outputs=outputs, target_calls=tokens // 2, drafter_calls=10, drafted=8, accepted=6,
                            seconds=1.0, greedy=True)
    s = score(problem, result)
    assert s["target_calls_per_token"] == pytest.approx((tokens // 2) / tokens)
    assert s["acceptance_rate"] == 0.75 and s["greedy_exact_match"] == pytest.approx(2 / 3)
    assert s["modelled_speedup"] == pytest.approx(tokens / (tokens // 2 + 0.05 * 10))
    assert s["tokens_per_second"] == tokens / problem.meter.reading().seconds  # the harness's clock, not `seconds`
    with observing(problem) as meter:
        meter.count("target", tokens)
    assert "greedy_exact_match" not in score(problem, DecodingResult(outputs, tokens, 0, 0, 0, 1.0, greedy=False))


@pytest.mark.parametrize("bad", [{"prompts_per_kind": 0}, {"drafter_vocab": 50}, {"dtype": "int8"},
                                 {"target_width": 30}, {"cost_ratio": -1.0}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        Config(**bad)
