"""multi_direction and single_direction on a small fine-tuned pair: recomputed by hand from their definitions."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.safety import multi_direction, single_direction
from methods.safety._directions import orient, shift_residual
from methods.safety._hooks import stream_states
from methods.safety._pipeline import make_ablation, refusals
from tasks.safety import ANALYSIS, TEST, components, layer_accuracies, score
from tasks.safety._lm import chat_prompts
from tests.helpers import smallest_refusal_problem


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return smallest_refusal_problem(tmp_path_factory.mktemp("c"))


@pytest.fixture(scope="module")
def states(problem):
    f = chat_prompts(problem.tokenizer, problem.prompts)
    return (stream_states(problem.base_model, problem.tokenizer, f)[0],
            stream_states(problem.finetuned_model, problem.tokenizer, f)[0])


def test_multi_direction_scores_are_base_activations_on_the_oriented_dominant_component(problem, states):
    x, y = states
    result = multi_direction.solve(problem, multi_direction.Config(secondary=3), RunContext(0))
    a = problem.split == ANALYSIS
    for layer in range(problem.n_layers):
        r = shift_residual(x[layer][a], y[layer][a])
        c1 = orient(components(r)[0][0], r)
        np.testing.assert_allclose(result.layer_scores[layer], x[layer] @ c1, atol=1e-6)
    s = score(problem, result)
    assert s["best_layer_accuracy"] == pytest.approx(layer_accuracies(problem, result.layer_scores).max())
    assert len(result.secondary_effect) == 2 and 1 <= s["effective_rank"] <= problem.finetuned_model.config.hidden_size


def test_ablation_and_attack_fields_are_the_victims_own_refusals(problem, states):
    _, y = states
    result = single_direction.solve(problem, single_direction.Config(), RunContext(0))
    h = y[:, problem.split == ANALYSIS]
    harm = problem.harmful[problem.split == ANALYSIS]
    r = h[result.direction_layer][harm].mean(0) - h[result.direction_layer][~harm].mean(0)
    ablate = make_ablation(problem, r / np.linalg.norm(r), y, "harmless_mean", True)
    np.testing.assert_array_equal(refusals(problem, problem.prompts, ablate), result.ablated_refused)
    mask = result.attack_mask
    assert mask.tolist() == ((problem.split == TEST) & problem.harmful & (problem.style > 0)).tolist()
    attacked = [result.attacked_prompts[i] for i in np.flatnonzero(mask)]
    np.testing.assert_array_equal(refusals(problem, attacked), result.attacked_refused[mask])
    assert all(len(problem.prompts[i].split(" ")) - len(result.attacked_prompts[i].split(" ")) <= 3
               for i in np.flatnonzero(mask))
    s = score(problem, result)
    assert s["attack_success"] == pytest.approx(1 - result.attacked_refused[mask].mean())


def test_config_errors_list_what_is_allowed():
    with pytest.raises(ValueError, match="allowed: harmless_mean, zero"):
        multi_direction.Config(ablation="mean")
    with pytest.raises(ValueError, match="rank_tau"):
        multi_direction.Config(rank_tau=0)
    with pytest.raises(ValueError, match="attack_words"):
        single_direction.Config(attack_words=0)


def test_the_small_pair_learned_to_refuse_and_ablation_and_attack_lower_refusal(problem):
    result = multi_direction.solve(problem, multi_direction.Config(secondary=3), RunContext(0))
    s = score(problem, result)
    assert result.direction_layer > 0 and s["refusal_rate"] >= 0.5 and s["base_jailbreak_refusal_rate"] == 0.0
    assert s["ablated_refusal_rate"] < s["refusal_rate"] and s["attack_refusal_drop"] > 0
