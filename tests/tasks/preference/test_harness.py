"""lm-evaluation-harness on the trained policy: lm_eval's acc against our own log-prob argmax, names, errors, the
hook."""

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from bench.context import RunContext
from bench.toolkit.causal_lm import load_causal_lm, sequence_logprobs
from bench.toolkit.tokenizer import train_bpe_tokenizer
from methods.preference._common import evaluate
from tasks.preference import alpacaeval, long_context_alignment, score
from tasks.preference._harness import (
    LONGBENCH_CATEGORIES,
    HarnessSettings,
    external_eval,
    flatten,
    longbench_scores,
    parse_tasks,
    run,
    task_manager,
)
from tasks.preference._long_context import FILLER, KEYS, KINDS, VALUES, make_example, prompt_text

pytest.importorskip("lm_eval")
ROOT = Path(__file__).resolve().parents[3]
INCLUDE = ROOT / "tests" / "fixtures" / "lm_eval"
KV = HarnessSettings(tasks=("long_context_kv",), include=str(INCLUDE), batch_size=4)


def kv_documents(seed: int = 20250, per_kind: int = 2, n_chunks: int = 32) -> list[dict]:
    """The fixture's documents: long contexts of _long_context.py, the ten values as choices."""
    rng = np.random.default_rng(seed)
    docs = []
    for kind in KINDS:
        for _ in range(per_kind):
            chunks, question, answer = make_example(kind, n_chunks, rng)
            docs.append({"kind": kind, "prompt": prompt_text(chunks, question), "choices": list(VALUES),
                         "label": VALUES.index(answer)})
    return docs


@pytest.fixture(scope="module")
def tiny():
    """A randomly initialised tiny Llama over a BPE tokenizer of the contexts' words."""
    tokenizer = train_bpe_tokenizer(list(FILLER) + [" ".join(KEYS), " ".join(VALUES), "? ka ="], vocab_size=300)
    return load_causal_lm("tiny-llama", tokenizer=tokenizer, seed=3)


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)                   # the fixture YAML's data_files are relative to the repository root


def own_loglikelihoods(model, tokenizer, docs) -> np.ndarray:
    """(docs, choices) log π(" " + choice | prompt) without the eos term sequence_logprobs adds."""
    prompts = [d["prompt"] for d in docs for _ in d["choices"]]
    choices = [" " + c for d in docs for c in d["choices"]]
    with torch.no_grad():
        with_eos = sequence_logprobs(model, tokenizer, prompts, choices)
        eos = sequence_logprobs(model, tokenizer, [p + c for p, c in zip(prompts, choices, strict=True)],
                                [""] * len(prompts))
    return (with_eos - eos).numpy().reshape(len(docs), -1)


def test_fixture_documents_are_generated_from_the_long_contexts():
    lines = (INCLUDE / "long_context_kv.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == kv_documents()


def test_lm_eval_acc_is_the_argmax_of_our_summed_logprobs(tiny, at_root):
    model, tokenizer = tiny
    results = run(model, tokenizer, KV, log_samples=True)
    docs = kv_documents()
    ours = own_loglikelihoods(model, tokenizer, docs)
    samples = sorted(results["samples"]["long_context_kv"], key=lambda s: s["doc_id"])
    theirs = np.array([[r[0][0] for r in s["resps"]] for s in samples])
    np.testing.assert_allclose(theirs, ours, atol=1e-4)          # the same log-likelihood of every choice
    accuracy = float(np.mean(ours.argmax(axis=1) == [d["label"] for d in docs]))
    assert flatten(results) == {"lm_eval_long_context_kv_acc": pytest.approx(accuracy, abs=1e-12)}


def test_flattened_names_drop_stderr_and_keep_filters():
    results = {"results": {"ruler": {"alias": "ruler", "4096,none": 0.5, "4096_stderr,none": "N/A"},
                           "gsm8k": {"exact_match,strict-match": 0.25, "exact_match_stderr,strict-match": 0.01,
                                     "sample_len": 7}}}
    assert flatten(results) == {"lm_eval_ruler_4096": 0.5, "lm_eval_gsm8k_exact_match_strict_match": 0.25}
    assert parse_tasks(" longbench, ruler ,") == ("longbench", "ruler") and parse_tasks("") == ()


def test_longbench_english_is_logos_fourteen_tasks_and_its_average_is_table_1s():
    tasks = parse_tasks("longbench-english, ruler")
    assert len(tasks) == 15 and tasks[-1] == "ruler" and "longbench_multifieldqa_zh" not in tasks
    assert task_manager(HarnessSettings(tasks=tasks[:-1])) is not None          # every name is a real lm_eval task
    # LOGO-80K's Table 1 row: categories 44.0, 41.2, 28.1, 68.6, 53.0 -> average 46.98 (printed 47.0); task scores
    # spread around each category mean so that only the per-category mean of the tasks gives the row back
    row = dict(zip(LONGBENCH_CATEGORIES, (44.0, 41.2, 28.1, 68.6, 53.0), strict=True))
    flat = {}
    for category, names in LONGBENCH_CATEGORIES.items():
        offsets = np.linspace(-5, 5, len(names))
        flat.update({f"lm_eval_longbench_{n}_score": (row[category] + o) / 100
                     for n, o in zip(names, offsets, strict=True)})
    scores = longbench_scores(flat)
    assert scores["longbench_average"] == pytest.approx(46.98, abs=1e-9)
    assert all(scores[f"longbench_{c}"] == pytest.approx(v, abs=1e-9) for c, v in row.items())
    del flat["lm_eval_longbench_samsum_score"]                                      # a category incomplete: no average
    assert set(longbench_scores(flat)) == {f"longbench_{c}" for c in row if c != "few_shot"}


def test_unknown_task_is_a_one_line_error_naming_how_to_list_tasks():
    config = long_context_alignment.Config(lm_eval_tasks="long_context_kv, no_such_suite", lm_eval_include=str(INCLUDE))
    with pytest.raises(ValueError,
                       match=r"^lm_eval task\(s\) 'no_such_suite' unknown; list them with `lm-eval ls tasks`"):
        long_context_alignment.harness(config)                   # what build() checks before any training
    with pytest.raises(ValueError, match="lm_eval_include '/nonexistent': no such directory"):
        task_manager(HarnessSettings(tasks=("x",), include="/nonexistent"))
    with pytest.raises(ValueError, match="lm_eval_seq_lengths must be comma-separated"):
        long_context_alignment.Config(lm_eval_seq_lengths="4k")


def test_score_runs_the_problem_hook_on_the_policy_the_method_returns():
    """score calls problem.external_eval(model, tokenizer, device) on PreferenceResult.model (tasks/preference/
    _observe.py); the methods' shared evaluate (methods/preference/_common.py) only returns the policy."""
    problem = alpacaeval.build(alpacaeval.Config(**alpacaeval.SMALLEST), RunContext(seed=0).for_task())
    seen = []

    def hook(model, tokenizer, device):
        seen.append((model, tokenizer, device))
        return {"lm_eval_x_acc": 0.5}

    object.__setattr__(problem, "external_eval", hook)
    policy, tokenizer = load_causal_lm(problem.sft_path)
    result = evaluate(problem, policy, policy, tokenizer, RunContext(seed=0))
    assert seen == [] and result.model is policy and result.tokenizer is tokenizer
    assert score(problem, result)["lm_eval_x_acc"] == 0.5
    assert seen == [(policy, tokenizer, "cpu")]


def test_the_task_reports_lm_eval_scores_of_the_trained_policy(at_root):
    """long_context_alignment with lm_eval_tasks: sft trains, the harness scores the trained policy, score reports
    it."""
    from methods.preference import sft

    config = long_context_alignment.Config(**long_context_alignment.SMALLEST, sft_steps=0, sft_examples=30,
                                           lm_eval_tasks="long_context_kv", lm_eval_include=str(INCLUDE))
    problem = long_context_alignment.build(config, RunContext(seed=0).for_task())
    own = []

    def checked(model, tokenizer, device):                       # our accuracy on the very policy the hook sees
        docs = kv_documents()
        own.append(float(np.mean(own_loglikelihoods(model, tokenizer, docs).argmax(1) == [d["label"] for d in docs])))
        return harness_hook(model, tokenizer, device)

    harness_hook = problem.external_eval
    object.__setattr__(problem, "external_eval", checked)
    result = sft.solve(problem, sft.Config(batch_size=8), RunContext(seed=0))
    scores = score(problem, result)
    assert scores["lm_eval_long_context_kv_acc"] == pytest.approx(own[0], abs=1e-12)
    assert "win_rate" in scores and isinstance(external_eval(KV), Callable)
    from bench.registry import Registry

    family = Registry.discover(plugins=False).family("preference")
    assert all(family.metric(name) is not None for name in scores)    # every stored name is declared
