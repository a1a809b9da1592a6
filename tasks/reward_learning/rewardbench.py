"""RewardBench: prompt / chosen / rejected triples of 23 subsets, scored by the official section-weighted protocol.

Lambert et al., "RewardBench: Evaluating Reward Models for Language Modeling" (arXiv 2403.13787),
code allenai/reward-bench; the evaluation the RuleAdapter paper (Li et al., ICML 2025, arXiv
2501.15453) reports for its reward model RAMO. Loading: `dataset` is the hub id (default
allenai/reward-bench, split "filtered", 2985 triples, through `datasets.load_dataset`) or a local
.json / .jsonl / .parquet file with the same columns (prompt, chosen, rejected, subset; id
optional). Without network a hub id fails with one line naming the dataset. `subsets` restricts
to some subsets, `max_per_subset` keeps the first N triples of each (file order). Scoring (the
family's `score`, tables in tasks/reward_learning/_rewardbench.py): strict chosen > rejected per
triple, ties wrong; sections weighted by the official EXAMPLE_COUNTS; overall = mean of sections.

Fidelity: faithful to the official protocol (tables read from the official code). Deviation: a section
with no subset loaded is omitted (the official quick log prints 0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bench.context import RunContext
from bench.registry import task
from tasks.reward_learning import RewardBenchProblem
from tasks.reward_learning._rewardbench import EXAMPLE_COUNTS, HUB_ID, HUB_SPLIT, is_local, load_rows

FIXTURE = Path(__file__).resolve().parent / "data" / "rewardbench_sample.jsonl"   # package data (data/README.md)
SMALLEST = {"dataset": str(FIXTURE)}
_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


@dataclass(frozen=True)
class Config:
    dataset: str = HUB_ID            # hub id, or a local .json / .jsonl / .parquet path
    split: str = HUB_SPLIT           # split of a hub dataset ("filtered": the benchmark; "raw": before filtering)
    subsets: tuple[str, ...] = ()    # keep only these subsets; empty: all
    max_per_subset: int = 0          # keep the first N triples of each subset; 0: all

    def __post_init__(self) -> None:
        if not (is_local(self.dataset) or _HUB_ID.match(self.dataset)):
            raise ValueError(f"dataset {self.dataset!r}: give a hub id such as {HUB_ID!r} or a path ending in "
                             ".json, .jsonl or .parquet")
        unknown = sorted(set(self.subsets) - set(EXAMPLE_COUNTS))
        if unknown:
            raise ValueError(f"unknown subsets {unknown}; allowed: {', '.join(EXAMPLE_COUNTS)}")
        if self.max_per_subset < 0 or not self.split:
            raise ValueError("max_per_subset must be >= 0 and split non-empty")


@task(family="reward_learning", config=Config, version=1, problem=RewardBenchProblem, smallest=SMALLEST)
def build(config: Config, ctx: RunContext) -> RewardBenchProblem:
    """The triples, in file order; deterministic (ctx is unused)."""
    rows, seen = [], {}
    for row in load_rows(config.dataset, config.split):
        if config.subsets and row["subset"] not in config.subsets:
            continue
        seen[row["subset"]] = seen.get(row["subset"], 0) + 1
        if config.max_per_subset and seen[row["subset"]] > config.max_per_subset:
            continue
        rows.append(row)
    if not rows:
        raise ValueError(f"no RewardBench triples left in {config.dataset!r} after the subset filter {config.subsets}")
    return RewardBenchProblem(prompts=tuple(r["prompt"] for r in rows), chosen=tuple(r["chosen"] for r in rows),
                              rejected=tuple(r["rejected"] for r in rows), subsets=tuple(r["subset"] for r in rows),
                              ids=tuple(str(r.get("id", i)) for i, r in enumerate(rows)))
