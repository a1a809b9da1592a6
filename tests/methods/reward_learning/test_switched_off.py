"""The reward-learning methods' SWITCHED_OFF settings (bench/switches.py) remove exactly the papers' mechanisms.

Weighted MLE with its Voronoi weights replaced by w ≡ 1 is the standard MLE bit for bit (Eq. 2 becomes Eq. 1);
adaptive rule selection with both selection weights 0 labels every pair by one fixed set of rules; RAMO's switch is
its starting checkpoint, which the RewardBench claim already scores.
"""

import numpy as np

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.reward_learning import adaptive_rules, mle, weighted_mle
from tasks.reward_learning import clones, rule_world


def test_weighted_mle_with_uniform_weights_is_the_mle(monkeypatch):
    (switch,) = Registry.discover().switched_off("weighted_mle")
    assert (switch.method, switch.config) == ("mle", {})
    problem = clones.build(clones.Config(per_theme=4, clones=5), RunContext(0).for_task())
    voronoi = weighted_mle.solve(problem, weighted_mle.Config(samples=5_000), RunContext(3))
    monkeypatch.setattr(weighted_mle, "voronoi_weights",
                        lambda point_sets, box, samples, rng: [np.ones(len(p)) for p in point_sets])
    off = weighted_mle.solve(problem, weighted_mle.Config(samples=5_000), RunContext(3))
    plain = mle.solve(problem, mle.Config(), RunContext(3))
    for field in ("reward", "clone_reward", "weights", "clone_weights"):
        assert np.array_equal(getattr(off, field), getattr(plain, field)), field
    assert off.lam == plain.lam
    assert not np.array_equal(voronoi.clone_reward, plain.clone_reward)  # the weights move the fit


def test_adaptive_rules_switched_off_use_one_fixed_rule_set(monkeypatch):
    (switch,) = Registry.discover().switched_off("adaptive_rules")
    problem = rule_world.build(rule_world.Config(), RunContext(0).for_task())
    chosen, real = [], adaptive_rules.top_rules

    def recorded(*args):
        chosen.append(real(*args))
        return chosen[-1]

    monkeypatch.setattr(adaptive_rules, "top_rules", recorded)
    adaptive_rules.solve(problem, adaptive_rules.Config(**switch.config), RunContext(0))
    adaptive_rules.solve(problem, adaptive_rules.Config(), RunContext(0))
    fixed, adaptive = chosen
    assert len(np.unique(fixed, axis=0)) == 1          # the same rules for every pair
    assert len(np.unique(adaptive, axis=0)) > 1         # the paper's selection adapts them per pair


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for name, task in (("weighted_mle", "clones"), ("adaptive_rules", "rule_world"), ("reward_model", "rewardbench")):
        for s in registry.switched_off(name):
            make_cell(registry, Entry(s.method, s.config), Entry(task, {}), 0)
    for name in ("mle", "all_rules", "random_rules", "overall_judgement", "clone_oracle", "rule_oracle"):
        assert isinstance(registry.switched_off(name), str)
