"""SFT: supervised fine-tuning of the policy on the preferred answers (the no-preference baseline).

The standard baseline of the preference papers: maximise log πθ(y_w|x) on the chosen answers of the
preference data (SimpleMix / EPA: the SFT starting point, continued on the chosen answers; LOGO §3:
"Instruct Tuning (Partial)", the loss on the prediction only):

    L_SFT(θ) = −E_{(x, y_w)} (1/|y_w|) Σ_t log πθ(y_w,t | x, y_w,<t).

Fidelity: faithful (completion-only token-averaged NLL). Deviation: trained on the task's chosen answers
(preference_world: the best off-policy answer of each prompt) for one epoch at the CPU-scale learning rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from bench.toolkit.causal_lm import sequence_logprobs, train
from methods.preference._common import (
    TrainingSettings,
    completions,
    evaluate,
    learning_rate,
    load_models,
    validate_common,
)
from tasks.preference import PreferenceProblem, PreferenceResult

SMOKE = {"batch_size": 8}

SWITCHED_OFF = "a baseline of LOGO (instruct tuning on the preferred answers): no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config(TrainingSettings):
    """SFT takes only the shared training settings."""

    def __post_init__(self) -> None:
        validate_common(self)


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0),
        accepts=PreferenceProblem, smoke=SMOKE)
def solve(problem: PreferenceProblem, config: Config, ctx: RunContext) -> PreferenceResult:
    policy, ref, tokenizer = load_models(problem, ctx)
    prompts, chosen = list(problem.train_prompts), [ranked[0] for ranked in problem.off_policy]

    def nll(idx):
        return -sequence_logprobs(policy, tokenizer, [prompts[i] for i in idx], completions([chosen[i] for i in idx]),
                                  average=True, device=ctx.device).mean()

    steps = max(1, int(round(config.epochs * len(prompts) / (config.batch_size * config.grad_accum))))
    train(policy, nll, len(prompts), steps=steps, lr=learning_rate(problem, config), batch_size=config.batch_size,
          grad_accum=config.grad_accum, warmup_ratio=config.warmup_ratio, generator=ctx.torch_generator,
          device=ctx.device, on_step=lambda s, v: (ctx.log(s, loss=v), ctx.check_deadline()))
    return evaluate(problem, policy, ref, tokenizer, ctx)
