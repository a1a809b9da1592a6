"""DPO on a mixture of on-policy and off-policy pairs: the shared body of `dpo`, `simplemix` (and the α endpoints).

Exactly round(α·n) of the n training prompts (drawn at random among those without an on-policy tie) take
their pair from D_on, the others from D_off (SimpleMix: equal totals, concatenated and shuffled). D_off: the best
vs the worst of the prompt's K off-policy responses; D_on: n samples from π_SFT (T = 0.7, top-p 0.9),
ranked by the annotator, best vs worst, dropped when best and worst are the same text (a tie).
"""

from __future__ import annotations

from bench.context import RunContext
from methods.preference._common import evaluate, implicit_reward, load_models, on_policy_lists, train_pairs
from methods.preference._losses import dpo_loss
from tasks.preference import PreferenceProblem, PreferenceResult


def mixed_pairs(problem: PreferenceProblem, policy, tokenizer, alpha: float, config, ctx: RunContext):
    """(prompts, chosen, rejected as 1-tuples, {on_policy_pairs, off_policy_pairs, on_policy_fraction}) of
    n = len(train prompts) pairs, the last the PreferenceResult fields of the training data.

    round(α·n) prompts, drawn among those whose on-policy best and worst differ (ties dropped), take their
    on-policy pair; n − round(α·n) of the others take their off-policy pair (α = 1: on-policy pairs only)."""
    n = len(problem.train_prompts)
    n_on = int(round(alpha * n))
    on: dict[int, tuple[str, ...]] = {}
    if n_on:
        lists = on_policy_lists(problem, policy, tokenizer, list(problem.train_prompts), config, ctx)
        valid = [i for i, ranked in enumerate(lists) if ranked[0] != ranked[-1]]
        on = {int(i): lists[i] for i in ctx.rng.permutation(valid)[:n_on]}
    rest = [i for i in range(n) if i not in on]
    off = {int(i): problem.off_policy[i] for i in ctx.rng.permutation(rest)[: n - n_on]}
    pairs = sorted({**on, **off}.items())
    prompts = [problem.train_prompts[i] for i, _ in pairs]

    def triples(source):
        return tuple((problem.train_prompts[i], r[0], r[-1]) for i, r in sorted(source.items()))

    training = {"on_policy_pairs": triples(on), "off_policy_pairs": triples(off),
                "on_policy_fraction": len(on) / max(1, len(pairs))}
    return prompts, [r[0] for _, r in pairs], [(r[-1],) for _, r in pairs], training


def solve_mix(problem: PreferenceProblem, config, alpha: float, ctx: RunContext) -> PreferenceResult:
    policy, ref, tokenizer = load_models(problem, ctx)
    prompts, chosen, rejected, training = mixed_pairs(problem, policy, tokenizer, alpha, config, ctx)
    loss = lambda pw, pl, rw, rl: dpo_loss(pw, pl[:, 0], rw, rl[:, 0], config.beta)  # noqa: E731
    train_pairs(policy, ref, tokenizer, prompts, chosen, rejected, loss, config, problem, ctx)
    return evaluate(problem, policy, ref, tokenizer, ctx, declared=implicit_reward(config), **training)
