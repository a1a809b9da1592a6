"""DPO on one source of pairs: off-policy (other models' answers) or on-policy (samples of π_SFT).

Rafailov et al., "Direct Preference Optimization", NeurIPS 2023, arXiv 2305.18290, Eq. 7:

    L_DPO(θ) = −E log σ(β[log πθ(y_w|x)/π_ref(y_w|x) − log πθ(y_l|x)/π_ref(y_l|x)]),  π_ref = π_SFT,

the two baselines of SimpleMix (spec shared/papers/simplemix.md §4: off-policy DPO on D_off, on-policy
DPO on pairs sampled from π_SFT before training). Same code path as `simplemix` with α = 0 or 1.

Fidelity: faithful to the objective (checked against a hand-computed loss and gradient). Deviations:
the data source is a config field (`source`), one pair per prompt, CPU-scale learning rate for the tiny model.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from methods.preference._common import validate_common, validate_sampling
from methods.preference._dpo import solve_mix
from tasks.preference import PreferenceProblem, PreferenceResult, kind_skip

SMOKE = {"n_samples": 2, "batch_size": 8}
SOURCES = ("off", "on")


@dataclass(frozen=True)
class Config:
    source: str = "off"         # D_off (other models, UltraFeedback-like) or D_on (samples of π_SFT)
    beta: float = 0.5           # β of DPO (the fork uses 0.1, 0.5, 0.001; the paper's value is unknown)
    model: str = ""             # policy and reference: "" = the task's π_SFT, else a hub id / local directory
    lr: float = 0.0             # 0 = 5e-7 (paper) for a given model, 1e-3 for the tiny one
    epochs: float = 1.0         # one epoch
    batch_size: int = 32        # pairs per micro-batch
    grad_accum: int = 1         # gradient accumulation steps
    warmup_ratio: float = 0.1   # linear decay with 10 % warm-up
    n_samples: int = 4          # on-policy samples per prompt (source = on)
    temperature: float = 0.7    # on-policy sampling temperature
    top_p: float = 0.9          # on-policy top-p

    def __post_init__(self) -> None:
        if self.source not in SOURCES or not self.beta > 0:
            raise ValueError(f"source {self.source!r} unknown (allowed: {', '.join(SOURCES)}) or beta {self.beta} <= 0")
        validate_common(self)
        validate_sampling(self)


def skip(problem, config: Config) -> str | None:
    return kind_skip(problem, PreferenceProblem, "dpo")


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0), skip=skip)
def solve(problem: PreferenceProblem, config: Config, ctx: RunContext) -> PreferenceResult:
    return solve_mix(problem, config, 1.0 if config.source == "on" else 0.0, ctx)
