"""IPO: identity preference optimisation, a squared loss on the log-ratio margin (a baseline for EPA).

Azar, Rowland, Piot, Guo, Calandriello, Valko & Munos, "A General Theoretical Paradigm to Understand Learning
from Human Preferences", AISTATS 2024, arXiv 2310.12036 (the sampled IPO loss of its Algorithm 1):

    L_IPO(θ) = E (h_θ(x, y_w, y_l) − 1/(2τ))²,  h_θ = log πθ(y_w|x)/π_ref(y_w|x) − log πθ(y_l|x)/π_ref(y_l|x),

TRL's loss_type="ipo" with β = τ. Unlike DPO's logistic loss, the squared loss has a finite minimiser on
separable data (each compared margin settles at 1/(2τ) on average), so IPO does not drift without bound.
The reported implicit reward is β·log πθ/π_ref, on the same scale as DPO's.

Fidelity: faithful to the objective. preference_world / alpacaeval / long_context_alignment: best vs worst of the
task's off-policy answers, one epoch, CPU-scale learning rate for the tiny model (the `dpo` recipe with IPO's loss).
preference_bandit: the pairs of `pairs` on a free logit table (or MLP), 4000 full-batch Adam steps, as `dpo`.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.context import RunContext
from bench.registry import method
from bench.spec import Resources
from methods.preference._bandit import PAIRS, bandit_objective, solve_bandit, validate_bandit
from methods.preference._common import (
    TrainingSettings,
    evaluate,
    implicit_reward,
    load_models,
    train_pairs,
    validate_common,
)
from methods.preference._losses import ipo_loss
from tasks.preference import BanditPreferenceProblem, BanditPreferenceResult, PreferenceProblem, PreferenceResult

SMOKE = {"batch_size": 8, "bandit_steps": 200}

SWITCHED_OFF = "a baseline of EPA (IPO, a pairwise squared loss): there is no mechanism of the paper to switch off"


@dataclass(frozen=True)
class Config(TrainingSettings):
    beta: float = 0.1           # τ of IPO (TRL's beta; bandit world: the same β = 0.1 as DPO and EPA)
    # bandit world (preference_bandit) only
    pairs: str = "binarized"    # UF-binarized pair, best vs each other member of the UF-all list, or best vs worst
    bandit_policy: str = "table"  # free logit table (P × V) or prompt embedding → MLP → logits
    bandit_steps: int = 4000    # Adam steps (full batch: 4000 epochs)
    bandit_lr: float = 0.1      # Adam learning rate on the parameters (linear decay to 0)
    bandit_batch: int = 0       # lists per step (0: full batch)
    bandit_init_noise: float = 0.0  # std of N(0, s²) added to the table's initial logits (0: start at π_ref)

    def __post_init__(self) -> None:
        if not self.beta > 0 or self.pairs not in PAIRS:
            raise ValueError(f"need beta > 0 and pairs in ({', '.join(PAIRS)}); got {self.beta}, {self.pairs!r}")
        validate_common(self)
        validate_bandit(self)


@method(family="preference", config=Config, hardware=("cpu", "cuda"), resources=Resources(memory_gb=2.0),
        accepts=(PreferenceProblem, BanditPreferenceProblem), smoke=SMOKE)
def solve(problem: PreferenceProblem | BanditPreferenceProblem, config: Config,
          ctx: RunContext) -> PreferenceResult | BanditPreferenceResult:
    if isinstance(problem, BanditPreferenceProblem):
        return solve_bandit(problem, config, bandit_objective(problem, config, ipo_loss), ctx)
    policy, ref, tokenizer = load_models(problem, ctx)
    prompts = list(problem.train_prompts)
    chosen, rejected = [r[0] for r in problem.off_policy], [(r[-1],) for r in problem.off_policy]
    loss = lambda pw, pl, rw, rl: ipo_loss(pw, pl[:, 0], rw, rl[:, 0], config.beta)  # noqa: E731
    train_pairs(policy, ref, tokenizer, prompts, chosen, rejected, loss, config, problem, ctx)
    return evaluate(problem, policy, ref, tokenizer, ctx, declared=implicit_reward(config))
