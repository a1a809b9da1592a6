"""preference: every claimed metric is measured by score or the harness, none is the method's word (issue 23).

The win rates, gold rewards and LC win rate judge the returned answers; the bandit's ε̂, Pearson and frontier are
exact over the returned log-policy table and its training trace. What a method still says about itself is checked:
* the β that scales an implicit reward (the bandit's table, the world's probe set) is declared (`result.declared`)
  and compared by the harness with the run's config (bench.observe.check_declared): a method that misdeclares it, or
  declares a reference model of its own (no method config has one: π_ref is the task's π_SFT), fails with a
  Misreport instead of being scored;
* the world's `reward_pearson` / `slope1_error`: score runs the returned policy and the problem's π_SFT on the
  probe set itself (the method no longer hands over its own reward);
* `on_policy_fraction`: score counts the training pairs the method returns, each on-policy pair checked against the
  lists the problem's annotator ranked during the solve (its meter), each off-policy pair against the problem's
  off-policy lists; a pair from neither, or a reported share that differs, is a Misreport;
* `lm_eval_*` / `longbench_*`: score runs the problem's `external_eval` on the returned policy.
Rewriting the rest of what a method reports (its log-probabilities of its answers, its training loss, its share)
moves no claimed metric. docs/metrics-audit.md has the table.
"""

import dataclasses

import numpy as np
import pytest
import torch

from bench.context import RunContext
from bench.observe import Misreport, check_declared, observing
from bench.toolkit.causal_lm import load_causal_lm, sequence_logprobs
from methods.preference import dpo, epa, sft, simplemix
from tasks.preference import long_context_alignment, preference_bandit, preference_world, score, slope1_metrics
from tests.tasks._claimed import (
    OBSERVED,
    OUTPUT,
    assert_unmoved,
    claimed_metrics,
    claimed_scores,
    liar_runner,
    lie,
    pairs,
)

FAMILY = "preference"
HOW = {"win_rate": OUTPUT, "lc_win_rate": OUTPUT, "gold_reward": OUTPUT, "gold_reward_coding": OUTPUT,
       "gold_reward_creative_writing": OUTPUT, "gold_reward_long": OUTPUT, "true_value_at_kl": OUTPUT,
       "slope1_error_at_kl": OUTPUT, "reward_pearson": OUTPUT, "slope1_error": OUTPUT, "longbench_average": OUTPUT,
       "on_policy_fraction": OBSERVED}
SELF_REPORTED = {"logp_policy": lambda lp: lp + 3.0, "logp_ref": lambda lp: lp - 3.0,
                 "on_policy_fraction": lambda f: None, "train_loss": lambda v: v + 1.0}
FAST = {"batch_size": 8, "n_samples": 2}


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models: one thread is fastest and leaves the other cores alone (as tests/methods/preference does)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _world():
    return preference_world.build(preference_world.Config(**preference_world.SMALLEST), RunContext(seed=0).for_task())


@pytest.fixture(scope="module")
def world():
    return _world()


@pytest.fixture(scope="module")
def mixed():
    """(problem, SimpleMix's result) on the smallest world, solved as the harness delimits it (a problem of its own:
    the other tests' solves reset their world's meter)."""
    problem = _world()
    with observing(problem):
        result = simplemix.solve(problem, simplemix.Config(**FAST), RunContext(seed=0))
    return problem, result


def test_every_claimed_metric_is_audited():
    assert claimed_metrics(FAMILY) <= set(HOW), "a claim reads a metric docs/metrics-audit.md has not audited"


@pytest.mark.parametrize("method, task", pairs(FAMILY))
def test_what_a_method_reports_about_itself_moves_no_claimed_metric(method, task):
    assert_unmoved(FAMILY, method, task, SELF_REPORTED)


# ---- on_policy_fraction: the training pairs against the annotator's record -------------------------------------

def test_the_on_policy_share_is_counted_from_pairs_the_annotator_labelled(mixed):
    world, mixed = mixed
    labelled = {prompt for prompt, _ in world.meter.issued}
    assert len(mixed.on_policy_pairs) == len(mixed.off_policy_pairs) == 16          # round(½ · 32)
    assert {p for p, _, _ in mixed.on_policy_pairs} <= labelled and len(world.meter.issued) == 32
    assert score(world, mixed)["on_policy_fraction"] == mixed.on_policy_fraction == 0.5


def test_a_misreported_on_policy_share_is_refused(mixed):
    world, mixed = mixed
    with pytest.raises(Misreport, match="reports 0.75 as the on-policy share of its training pairs; the harness "
                                        "observed 0.5"):
        score(world, lie(mixed, {"on_policy_fraction": lambda f: 0.75}))
    with pytest.raises(Misreport, match="returns none of its training pairs"):
        score(world, dataclasses.replace(mixed, on_policy_pairs=(), off_policy_pairs=()))


def test_off_policy_pairs_passed_off_as_on_policy_are_refused(mixed):
    """Relabelling the off-policy half as on-policy (share 1.0, reported consistently) is caught: the annotator
    never ranked those answers during the solve."""
    world, mixed = mixed
    relabelled = dataclasses.replace(mixed, on_policy_pairs=mixed.on_policy_pairs + mixed.off_policy_pairs,
                                     off_policy_pairs=(), on_policy_fraction=1.0)
    with pytest.raises(Misreport, match=r"16 of the 32 on-policy pairs .* the problem's annotator did not rank"):
        score(world, relabelled)
    made_up = dataclasses.replace(mixed, off_policy_pairs=((world.train_prompts[0], "made", "up"),) * 16)
    with pytest.raises(Misreport, match="is not in the problem's off-policy lists"):
        score(world, made_up)


def test_labels_from_before_the_solve_do_not_count(world, off_policy):
    """The harness resets the meter right before the solve: a list the annotator ranked earlier is no label."""
    rng = np.random.default_rng(0)
    prompt, (best, worst) = world.train_prompts[0], ("1", "2 2 2")
    order = world.annotate(prompt, [best, worst], rng)
    pair = (prompt, *([best, worst][int(i)] for i in order))
    claim = dataclasses.replace(off_policy, on_policy_pairs=(pair,), off_policy_pairs=(), on_policy_fraction=1.0)
    assert score(world, claim)["on_policy_fraction"] == 1.0                # labelled since the meter's last reset
    with observing(world):
        pass                                                            # the harness's reset before a solve
    with pytest.raises(Misreport, match="did not rank during the solve"):
        score(world, claim)


@pytest.fixture(scope="module")
def off_policy(world):
    """Off-policy DPO on the smallest world (it labels nothing)."""
    with observing(world):
        return dpo.solve(world, dpo.Config(source="off", **FAST), RunContext(seed=1))


# ---- the world's implicit reward: the scorer runs the returned policy and the problem's π_SFT ------------------

def test_the_world_reward_is_measured_on_the_returned_policy(world, off_policy):
    result = off_policy
    assert result.declared == {"beta": 0.5}
    ref, tokenizer = load_causal_lm(world.sft_path)
    prompts = [p for p, rs in zip(world.probe_prompts, world.probe_responses, strict=True) for _ in rs]
    texts = [" " + r for rs in world.probe_responses for r in rs]
    with torch.no_grad():
        diff = (sequence_logprobs(result.model, tokenizer, prompts, texts)
                - sequence_logprobs(ref, tokenizer, prompts, texts))
    learned = (0.5 * diff).view(len(world.probe_prompts), -1).numpy().astype(float)
    true = np.array([world.judge([p] * len(rs), rs)
                     for p, rs in zip(world.probe_prompts, world.probe_responses, strict=True)])
    scores = score(world, result)
    own = slope1_metrics(learned, true / world.label_temperature)
    assert {k: scores[k] for k in own} == own                                        # bit for bit
    policy_free = dataclasses.replace(result, model=None)
    with pytest.raises(ValueError, match="must hold the trained policy"):
        score(world, policy_free)


def test_a_misdeclared_beta_or_reference_is_refused_by_the_harness(world, off_policy):
    result = off_policy
    config = dpo.Config(source="off", **FAST)
    check_declared(result, config)
    assert claimed_scores(FAMILY, world, result)["slope1_error"] != \
        claimed_scores(FAMILY, world, dataclasses.replace(result, declared={"beta": 0.05}))[
            "slope1_error"]                                             # the declaration matters to the metric...
    with pytest.raises(Misreport, match="the cell's config has"):                    # ...so the harness checks it
        check_declared(dataclasses.replace(result, declared={"beta": 0.05}), config)
    with pytest.raises(Misreport, match="declares model='tiny-gpt2', but its config has no field 'model'"):
        check_declared(dataclasses.replace(result, declared={"beta": 0.5, "model": "tiny-gpt2"}), config)


# ---- the bandit's β ---------------------------------------------------------------------------------------------

def test_the_bandit_declares_the_beta_its_rewards_are_scaled_by():
    problem = preference_bandit.build(preference_bandit.Config(**preference_bandit.SMALLEST),
                                      RunContext(seed=0).for_task())
    config = epa.Config(bandit_steps=50, weak_negatives=2)
    result = epa.solve(problem, config, RunContext(seed=0))
    check_declared(result, config)
    lying = lie(result, {"beta": lambda b: 3.0 * b})
    assert lying.declared == {"beta": 3.0 * config.beta}
    with pytest.raises(Misreport, match=r"declares beta=0\.3\d*; the cell's config has beta=0\.1"):
        check_declared(lying, config)


def test_the_harness_refuses_a_method_that_misdeclares_its_beta():
    """End to end through bench.execute: the liar (tests/tasks/preference/_liar.py) fails with the Misreport; with
    factor 1 it is DPO and is scored as DPO."""
    run = liar_runner(FAMILY, "preference_bandit", preference_bandit.SMALLEST, "tests.tasks.preference._liar", "dpo")
    lying = run("liar")
    assert lying.status == "failed" and "Misreport" in lying.error and lying.metrics == {}
    honest = run("liar", {"factor": 1.0})
    same = run("dpo", {"beta": 0.1, "bandit_steps": 50})
    assert honest.status == same.status == "done" and honest.metrics == same.metrics


# ---- external benchmarks: the scorer runs the problem's hook on the returned policy -----------------------------

def test_the_scorer_runs_the_external_benchmark_on_the_returned_policy():
    problem = long_context_alignment.build(long_context_alignment.Config(**long_context_alignment.SMALLEST),
                                           RunContext(seed=0).for_task())
    seen = []

    def weights(model) -> float:
        return float(sum(p.detach().double().sum() for p in model.parameters()))

    def benchmark(model, tokenizer, device):                       # stands in for lm_eval's LongBench
        seen.append(model)
        return {"longbench_average": weights(model)}

    object.__setattr__(problem, "external_eval", benchmark)
    result = sft.solve(problem, sft.Config(batch_size=8), RunContext(seed=0))
    assert seen == [] and "extra" not in {f.name for f in dataclasses.fields(result)}   # no scores of its own
    scores = score(problem, result)
    assert seen == [result.model]
    assert scores["longbench_average"] == weights(result.model)
