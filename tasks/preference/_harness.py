"""EleutherAI lm-evaluation-harness on the trained policy: LongBench, RULER or any lm_eval task, as scores.

A task puts a callable `external_eval(model, tokenizer, device) -> {name: value}` on its problem, and `score` calls
it on the trained policy the method returns (`PreferenceResult.model`; tasks/preference/_observe.py), so the scores
are the scorer's measurement, not the method's report (docs/metrics-audit.md).

The call is lm_eval's own: `simple_evaluate(model=HFLM(pretrained=<the policy module>, tokenizer=...),
tasks=[...], task_manager=TaskManager(include_path=..., metadata=...), limit=...)`. Its per-task results
{"acc,none": 0.61, "acc_stderr,none": 0.02, "alias": ...} become metrics `lm_eval_<task>_<metric>`
(`lm_eval_longbench_qasper_qa_f1_score`, `lm_eval_ruler_fwe_2048`; a filter other than "none" is appended:
`lm_eval_<task>_exact_match_strict_match`); standard errors and non-numeric entries are dropped.

RULER builds its haystacks with a tokenizer named in the task metadata and at the lengths
`max_seq_lengths`: the policy's tokenizer is saved to a temporary directory and named there, and
`lm_eval_seq_lengths` gives the lengths. Two RULER subtasks run offline, through lm_eval's own generators and
scorer: `ruler_vt` and `ruler_fwe` with `lm_eval_include=tasks/preference/data/ruler` (tasks/preference/_ruler.py;
tested at 1024 and 2048 tokens, tests/tasks/preference/test_ruler.py; the tiny policies' tokenizer runs fwe only).
The other RULER subtasks need the `wonderwords` package (niah_*, cwe) or hub data (qa), and LongBench fetches its
data from the hub: lm_eval's `longbench` / `ruler` extras (`pip install -e '.[eval]'`), meant for GPU users.
Custom YAMLs in `lm_eval_include` work offline (the tests' fixture tests/fixtures/lm_eval/long_context_kv.yaml:
long_context_alignment's contexts as a multiple-choice task).
LOGO's metric (its evaluation protocol, Table 1): LongBench's English tasks in five categories (code excluded); each
category is the mean of its tasks' scores × 100 and the average is the mean of the five categories
(LOGO-80K: 44.0, 41.2, 28.1, 68.6, 53.0 -> 47.0). `lm_eval_tasks=longbench-english` asks for exactly those 14
tasks, and `longbench_scores` adds `longbench_<category>` and `longbench_average` whenever all of a category's
tasks were run. lm_eval seeds Python's, NumPy's and torch's global generators itself; they are restored afterwards
so the run's own streams are untouched.
"""

from __future__ import annotations

import random
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

LIST_HINT = "list them with `lm-eval ls tasks` (add --include_path DIR for custom YAMLs)"
LONGBENCH_CATEGORIES = {  # LongBench's English tasks by category, as LOGO's Table 1 groups them (code excluded)
    "single_doc_qa": ("narrativeqa", "qasper", "multifieldqa_en"),
    "multi_doc_qa": ("hotpotqa", "2wikimqa", "musique"),
    "summarization": ("gov_report", "qmsum", "multi_news"),
    "few_shot": ("trec", "triviaqa", "samsum"),
    "synthetic": ("passage_count", "passage_retrieval_en"),
}
LONGBENCH_ENGLISH = "longbench-english"  # not an lm_eval name: expands to the 14 tasks above


@dataclass(frozen=True)
class HarnessSettings:
    tasks: tuple[str, ...]            # lm_eval task, group or tag names
    include: str = ""                 # directory of custom task YAMLs (TaskManager include_path); "" = none
    limit: int = 0                    # documents per task (0: all)
    max_length: int = 0               # HFLM context length in tokens (0: the model config's)
    batch_size: int = 8
    seq_lengths: tuple[int, ...] = ()  # RULER's max_seq_lengths (empty: lm_eval's default)


def parse_tasks(text: str) -> tuple[str, ...]:
    """'longbench, ruler' -> ('longbench', 'ruler'); '' -> (); 'longbench-english' -> LOGO's 14 LongBench tasks."""
    names = []
    for name in (t.strip() for t in text.split(",")):
        if name == LONGBENCH_ENGLISH:
            names += [f"longbench_{task}" for tasks in LONGBENCH_CATEGORIES.values() for task in tasks]
        elif name:
            names.append(name)
    return tuple(dict.fromkeys(names))


def parse_lengths(text: str) -> tuple[int, ...]:
    try:
        lengths = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise ValueError(f"lm_eval_seq_lengths must be comma-separated token counts, e.g. '4096,8192'; "
                         f"got {text!r}") from None
    if any(n < 1 for n in lengths):
        raise ValueError(f"lm_eval_seq_lengths must be positive, got {text!r}")
    return lengths


def task_manager(settings: HarnessSettings, metadata: dict | None = None):
    """lm_eval's TaskManager that knows every requested name, else a one-line ValueError.

    With an include directory that defines all the names, lm_eval's ~15k built-in YAMLs are not indexed
    (seconds saved); otherwise the built-ins and the directory are both searched."""
    try:
        from lm_eval.tasks import TaskManager
    except ImportError:
        raise ValueError("lm_eval_tasks needs lm-evaluation-harness: pip install 'icml2025-bench[eval]'") from None

    include = str(Path(settings.include).expanduser()) if settings.include else None
    if include is not None and not Path(include).is_dir():
        raise ValueError(f"lm_eval_include {settings.include!r}: no such directory of task YAMLs")
    if include is not None:
        manager = TaskManager(include_path=include, include_defaults=False, metadata=metadata)
        if all(name in manager.all_tasks for name in settings.tasks):
            return manager
    manager = TaskManager(include_path=include, metadata=metadata)
    unknown = [name for name in settings.tasks if name not in manager.all_tasks]
    if unknown:
        raise ValueError(f"lm_eval task(s) {', '.join(map(repr, unknown))} unknown; {LIST_HINT}")
    return manager


def _metric_name(task: str, key: str) -> str:
    metric, _, filt = key.partition(",")
    name = f"lm_eval_{task}_{metric}" + (f"_{filt}" if filt and filt != "none" else "")
    return re.sub(r"[^0-9A-Za-z_]+", "_", name)


def flatten(results: dict) -> dict[str, float]:
    """lm_eval's results["results"] (tasks and groups) -> {lm_eval_<task>_<metric>[_<filter>]: value}."""
    out = {}
    for task, values in results["results"].items():
        for key, value in values.items():
            metric = key.partition(",")[0]
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            if "," not in key or metric.endswith("_stderr") or not numeric:
                continue                                    # alias, sample_len, "N/A" stderrs
            out[_metric_name(task, key)] = float(value)
    return out


def longbench_scores(flat: dict[str, float]) -> dict[str, float]:
    """`longbench_<category>` (mean task score × 100) for every category whose tasks all ran, and
    `longbench_average` (mean of the five categories) when all five did."""
    out = {}
    for category, tasks in LONGBENCH_CATEGORIES.items():
        values = [flat.get(f"lm_eval_longbench_{task}_score") for task in tasks]
        if all(v is not None for v in values):
            out[f"longbench_{category}"] = 100.0 * float(np.mean(values))
    if len(out) == len(LONGBENCH_CATEGORIES):
        out["longbench_average"] = float(np.mean(list(out.values())))
    return out


def run(model, tokenizer, settings: HarnessSettings, log_samples: bool = False) -> dict:
    """lm_eval.simple_evaluate on the in-memory `model` (a transformers causal LM); lm_eval's raw results."""
    import lm_eval
    from lm_eval.models.huggingface import HFLM

    with tempfile.TemporaryDirectory() as tokenizer_dir:
        tokenizer.save_pretrained(tokenizer_dir)            # RULER loads its tokenizer by name
        metadata = {"tokenizer": tokenizer_dir, "pretrained": tokenizer_dir}
        if settings.seq_lengths:
            metadata["max_seq_lengths"] = list(settings.seq_lengths)
        manager = task_manager(settings, metadata)
        lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=settings.batch_size,
                  max_length=settings.max_length or None)
        py_state, np_state = random.getstate(), np.random.get_state()
        devices = [model.device] if model.device.type == "cuda" else []
        try:
            with torch.random.fork_rng(devices=devices):
                results = lm_eval.simple_evaluate(model=lm, tasks=list(settings.tasks), task_manager=manager,
                                                  limit=settings.limit or None, log_samples=log_samples,
                                                  bootstrap_iters=0)
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)
    return results


def external_eval(settings: HarnessSettings):
    """The problem's hook: (model, tokenizer, device) -> {lm_eval_<task>_<metric>: value}."""

    def evaluate(model, tokenizer, device: str) -> dict[str, float]:
        was_training = model.training
        model.eval()
        try:
            flat = flatten(run(model.to(device), tokenizer, settings))
            return {**flat, **longbench_scores(flat)}
        finally:
            model.train(was_training)

    return evaluate
