"""RULER's offline subtasks (tasks/preference/_ruler.py) through lm-evaluation-harness's own task code: its YAMLs but
for the offline hooks, an oracle that reads the context scores 1.0, a half-answer its share, silence 0.0; vt refused
where lm_eval's generator would loop; a trained long-context policy's scores stored as declared metrics."""

import collections
import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import yaml

from bench.toolkit.tokenizer import train_bpe_tokenizer
from tasks.preference._harness import HarnessSettings, flatten, task_manager
from tasks.preference._long_context import FILLER, KEYS, VALUES
from tasks.preference._ruler import DIRECTORY, OFFLINE, check_vt_fits, interleaved, process_results
from tests.helpers import run_bench

lm_eval = pytest.importorskip("lm_eval")
from lm_eval.api.model import LM  # noqa: E402  (after the importorskip)
from lm_eval.tasks.ruler import fwe_utils, vt_utils  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
LM_EVAL_RULER = Path(lm_eval.__file__).parent / "tasks" / "ruler"
NOISE = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.\n"  # vt's filler
LENGTHS = (1024, 2048)


def english_tokenizer():
    """A byte-level BPE trained on RULER's own wording: about 4 characters a token, as a real tokenizer writes it
    (vt's worked example must fit lm_eval's 500 tokens)."""
    corpus = [vt_utils.TEMPLATE, fwe_utils.TEMPLATE, NOISE, " ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), "VAR = 0123456789"]
    return train_bpe_tokenizer(corpus, vocab_size=600)


def policy_tokenizer():
    """long_context_alignment's tokenizer: a BPE over its own world's words (long_context_alignment._train_sft)."""
    return train_bpe_tokenizer(list(FILLER) + [" ".join(KEYS), " ".join(VALUES)], vocab_size=400)


def unresolved_yaml(path: Path) -> dict:
    """A task YAML as written: `!function x.y` kept as the string "!function x.y", `include` not followed."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: f"!function {loader.construct_scalar(node)}")
    return yaml.load(path.read_text(), Loader=Loader)


@pytest.mark.parametrize("name,lm_eval_yaml", [("ruler_vt", "vt.yaml"), ("ruler_fwe", "fwe.yaml")])
def test_the_yamls_are_lm_evals_but_for_the_offline_hooks(name, lm_eval_yaml):
    """lm_eval's task (its YAML over the included niah_single_1.yaml) field by field: the prompt, target, prefix,
    generation settings and version are theirs; only the data, results and metric hooks differ."""
    theirs = unresolved_yaml(LM_EVAL_RULER / lm_eval_yaml)
    merged = {**unresolved_yaml(LM_EVAL_RULER / theirs.pop("include")), **theirs}
    ours = unresolved_yaml(DIRECTORY / f"{name}.yaml")
    hooks = {"custom_dataset", "process_results", "metric_list"}
    assert {k: v for k, v in ours.items() if k not in hooks} == {k: v for k, v in merged.items()
                                                                  if k not in hooks | {"tag"}}
    assert merged["tag"] == ["longcxt"] and "tag" not in ours            # lm_eval's tag is not redefined
    assert merged["process_results"] == "!function common_utils.process_results"
    assert [m["metric"] for m in ours["metric_list"]] == ["1024", "2048", "4096", "8192"]
    assert {m["aggregation"] for m in ours["metric_list"]} == {
        "!function lm_eval.tasks.ruler.common_utils.aggregate_metrics"}         # lm_eval's own (-1: no document)
    assert ours["task"] == name and name in OFFLINE


def test_documents_are_interleaved_over_lengths_and_other_lengths_are_not_scored():
    from datasets import Dataset

    docs = Dataset.from_list([{"max_length": n, "index": i} for n, i in
                              [(1024, 0), (1024, 1), (1024, 2), (2048, 0), (2048, 1), (2048, 2)]])
    order = [(d["max_length"], d["index"]) for d in interleaved(docs)]
    assert order == [(1024, 0), (2048, 0), (1024, 1), (2048, 1), (1024, 2), (2048, 2)]
    doc = {"max_length": 1024, "outputs": ["ABCDE", "FGHIJ"]}
    assert process_results(doc, [" fghij and more "]) == {"1024": 0.5}   # lm_eval's: case-blind share found; no 4096


def test_vt_is_refused_where_lm_evals_generator_would_loop_forever():
    """The policy's tokenizer writes RULER's English near letter by letter: vt's worked example (5 filler lines, lm_eval
    builds it in 500 tokens) does not fit, and lm_eval would retry with 0 lines forever."""
    with pytest.raises(ValueError, match=r"^ruler_vt needs a tokenizer that writes its worked example in 500 tokens "
                                         r"\(lm_eval fixes that length\); this one takes \d+: run ruler_fwe only$"):
        check_vt_fits(policy_tokenizer(), [4096])
    state = random.getstate()
    check_vt_fits(english_tokenizer(), list(LENGTHS))                 # fits; lm_eval's random stream left alone
    assert random.getstate() == state
    with pytest.raises(ValueError, match=r"^ruler_vt lengths \[600\] are below its smallest document"):
        check_vt_fits(english_tokenizer(), [600, 1024])


# ---- known answers: models that read the context -----------------------------------------------------------------

def vt_answer(context: str) -> list[str]:
    """The variables that hold the queried value: the one assigned it, then every `VAR b = VAR a` of a holder a."""
    query = re.findall(r"assigned the value (\d+)", context)[-1]
    held = [a for a, b in re.findall(r"VAR (\w+) = (\d+)", context) if b == query]
    links = re.findall(r"VAR (\w+) = VAR (\w+)", context)
    while more := [a for a, b in links if b in held and a not in held]:
        held += more
    return held


def fwe_answer(context: str) -> list[str]:
    """The three most frequent coded words, the noise word '...' aside."""
    text = context.split("coded words.", 1)[1].split("\nQuestion", 1)[0]
    return [w for w, _ in collections.Counter(w for w in text.split() if w != "...").most_common(3)]


class Reader(LM):
    """An lm_eval model that answers from the context it is given, `keep` answer words of each (None: all)."""

    def __init__(self, keep: int | None = None):
        super().__init__()
        self.keep, self.contexts = keep, []

    def generate_until(self, requests):
        self.contexts += [r.args[0] for r in requests]
        answers = [vt_answer(c) if "VAR " in c else fwe_answer(c) for c, _ in (r.args for r in requests)]
        return [" ".join(words[: self.keep]) for words in answers]

    def loglikelihood(self, requests):
        raise NotImplementedError("RULER only generates")

    loglikelihood_rolling = loglikelihood


@pytest.fixture(scope="module")
def ruler_tasks(tmp_path_factory):
    """lm_eval's task dict of both subtasks at 1024 and 2048 tokens of english_tokenizer (the documents built once)."""
    folder = tmp_path_factory.mktemp("tokenizer")
    tokenizer = english_tokenizer()
    tokenizer.save_pretrained(folder)
    metadata = {"tokenizer": str(folder), "pretrained": str(folder), "max_seq_lengths": list(LENGTHS)}
    manager = task_manager(HarnessSettings(tasks=OFFLINE, include=str(DIRECTORY)), metadata)
    state, np_state = random.getstate(), np.random.get_state()
    random.seed(0)
    np.random.seed(1234)                                   # lm_eval's simple_evaluate seeds
    try:
        return manager.load(list(OFFLINE)), tokenizer
    finally:
        random.setstate(state)
        np.random.set_state(np_state)


def scores(model, task_dict) -> dict[str, float]:
    from lm_eval.evaluator import evaluate

    return flatten(evaluate(lm=model, task_dict=task_dict, limit=4, bootstrap_iters=0, log_samples=False))


@pytest.mark.parametrize("keep,vt,fwe", [(None, 1.0, 1.0), (1, 1 / 5, 1 / 3), (0, 0.0, 0.0)])
def test_a_reader_scores_its_share_of_the_answer(ruler_tasks, keep, vt, fwe):
    """All 5 variables / 3 words: 1.0; the first only: 1/5 and 1/3 (lm_eval's share of reference words found);
    nothing: 0.0; at both lengths (limit 4 takes 2 documents of each), under the names the run stores."""
    task_dict, tokenizer = ruler_tasks
    reader = Reader(keep)
    expected = {f"lm_eval_{task}_{n}": value for task, value in (("ruler_vt", vt), ("ruler_fwe", fwe)) for n in LENGTHS}
    assert scores(reader, task_dict) == pytest.approx(expected, abs=1e-12)
    tokens = [len(tokenizer(c).input_ids) for c in reader.contexts]
    assert len(tokens) == 8 and max(tokens) <= max(LENGTHS)                   # contexts within their lengths


# ---- the task end to end -----------------------------------------------------------------------------------------

@pytest.mark.integration  # the `bench` command as a subprocess
def test_a_trained_logo_policy_stores_its_ruler_scores(tmp_path):
    """bench run: π_SFT and LOGO train at CPU scale, ruler_fwe runs through lm_eval on the trained policy at 1024 and
    2048 tokens (2 documents each), and the store holds one declared metric per length: a mean of 2 documents'
    scores in {0, 1/3, 2/3, 1}, so a multiple of 1/6 in [0, 1]. vt is left out: the policy's tokenizer cannot
    write it (test_vt_is_refused_where_lm_evals_generator_would_loop_forever)."""
    from bench.registry import Registry

    db = tmp_path / "store.db"
    proc = run_bench("run", "-m", "logo", "-t", "long_context_alignment", "--set", "batch_size=8",
                     *[a for kv in ("train_per_kind=8", "eval_per_kind=1", "sft_steps=20", "sft_examples=60",
                                    "lm_eval_tasks=ruler_fwe", "lm_eval_include=tasks/preference/data/ruler",
                                    "lm_eval_seq_lengths=1024,2048", "lm_eval_max_length=2112", "lm_eval_limit=4")
                       for a in ("--set", f"task.{kv}")],
                     db=db, cwd=ROOT, env={"BENCH_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with sqlite3.connect(db) as connection:
        stored = dict(connection.execute("SELECT name, value FROM metrics WHERE name LIKE 'lm_eval_%'").fetchall())
    assert set(stored) == {"lm_eval_ruler_fwe_1024", "lm_eval_ruler_fwe_2048"}
    for value in stored.values():
        assert 0 <= value <= 1 and value * 6 == pytest.approx(round(value * 6), abs=1e-9)
    family = Registry.discover(plugins=False).family("preference")
    assert all(family.metric(name) is not None for name in stored)
    assert {"gold_reward_long", "lm_eval_ruler_fwe_2048"} <= set(re.findall(r"^(\w+) = ", proc.stdout, re.M))
