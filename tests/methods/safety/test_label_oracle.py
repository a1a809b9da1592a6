"""label_oracle (the world's positive control): its directions on planted data, and its measurements recomputed with
multi_direction's own code on a small fine-tuned pair."""

import numpy as np
import pytest

from bench.context import RunContext
from methods.safety import label_oracle, multi_direction
from methods.safety._hooks import stream_states
from methods.safety._pipeline import make_ablation, refusals
from tasks.safety import ANALYSIS, TEST, score, secondary_effects, threshold_accuracy
from tasks.safety._lm import chat_prompts
from tests.helpers import smallest_refusal_problem


def test_label_directions_of_planted_states():
    """States 0 everywhere except a planted offset: the unit mean difference is that offset's direction, and removing
    the dominant direction's share leaves the known orthogonal remainder."""
    e = np.eye(4)
    h = np.zeros((6, 4))
    a = np.array([1, 1, 1, 0, 0, 0], bool)
    h[a] = 3 * e[0] + 4 * e[1]                                   # group a sits at (3, 4, 0, 0), b at the origin
    np.testing.assert_allclose(label_oracle.unit_difference(h, a, ~a), [0.6, 0.8, 0, 0])
    np.testing.assert_array_equal(label_oracle.unit_difference(h, a, np.zeros(6, bool)), np.zeros(4))
    np.testing.assert_allclose(label_oracle.orthogonal_unit(np.array([0.6, 0.8, 0, 0]), e[0]), e[1])
    np.testing.assert_array_equal(label_oracle.orthogonal_unit(e[0], e[0]), np.zeros(4))


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    return smallest_refusal_problem(tmp_path_factory.mktemp("c"))


def test_oracle_measures_as_the_methods_do(problem):
    f = chat_prompts(problem.tokenizer, problem.prompts)
    x = stream_states(problem.base_model, problem.tokenizer, f)[0]
    y = stream_states(problem.finetuned_model, problem.tokenizer, f)[0]
    a, lab = problem.split == ANALYSIS, problem.refused
    result = label_oracle.solve(problem, label_oracle.Config(), RunContext(0))

    # §3.4: the refused-minus-answered direction per layer, its best analysis layer ablated as make_ablation does
    for layer, yl in enumerate(y):
        r = yl[a & lab].mean(0) - yl[a & ~lab].mean(0)
        expected = yl @ (r / np.linalg.norm(r)) if np.linalg.norm(r) > 0 else np.zeros(len(yl))
        np.testing.assert_allclose(result.layer_scores[layer], expected, atol=1e-6)
    fit = [threshold_accuracy(s[a], lab[a]) for s in result.layer_scores]
    assert result.direction_layer == int(np.argmax(fit))
    r = y[result.direction_layer][a & lab].mean(0) - y[result.direction_layer][a & ~lab].mean(0)
    ablate = make_ablation(problem, r / np.linalg.norm(r), y, "harmless_mean", True)
    np.testing.assert_array_equal(refusals(problem, problem.prompts, ablate), result.ablated_refused)

    # §3.3: C1 and the effect measure are multi_direction's; the features are the style mean differences ⊥ C1
    dirs = multi_direction.shift_directions(x, y, a)[0]
    np.testing.assert_allclose(label_oracle.dominant_directions(x, y, a), dirs[:, 0], atol=1e-9)
    source = problem.n_layers // 2
    c1_fit = [threshold_accuracy((xl @ c)[a], lab[a]) for xl, c in zip(x, dirs[:, 0], strict=True)]
    target = max(int(np.argmax(c1_fit)), source + 1) if source + 1 < problem.n_layers else source
    harm, feats = a & problem.harmful, []
    for s in range(1, len(problem.styles)):
        v = y[source][harm & (problem.style == s)].mean(0) - y[source][harm & (problem.style == 0)].mean(0)
        v -= (v @ dirs[source, 0]) * dirs[source, 0]
        feats.append(v / np.linalg.norm(v))
    planted = dirs.copy()
    planted[source, 1:1 + len(feats)] = feats
    secondary = multi_direction.secondary_directions(planted, source, target, 1 + len(feats))
    np.testing.assert_allclose(result.secondary.directions, secondary.directions, atol=1e-6)
    assert (result.secondary.layer, result.secondary.readout_layer) == (source, target)
    expected = secondary_effects(problem, secondary)
    np.testing.assert_allclose(result.secondary_effect, expected, atol=1e-6)
    s = score(problem, result)
    assert s["secondary_effect"] == pytest.approx(np.max(np.abs(expected)))
    assert "attack_success" not in s                                     # no attack is run


def test_the_null_removes_the_label_information(problem):
    oracle = score(problem, label_oracle.solve(problem, label_oracle.Config(), RunContext(0)))
    null_result = label_oracle.solve(problem, label_oracle.Config(random=True), RunContext(0))
    null = score(problem, null_result)
    assert oracle["refusal_rate"] >= 0.5
    assert oracle["ablation_refusal_drop"] > null["ablation_refusal_drop"]
    assert len(null_result.secondary_effect) == len(problem.styles) - 1
    harm = (problem.split == TEST) & problem.harmful
    assert null["ablated_refusal_rate"] == pytest.approx(null_result.ablated_refused[harm].mean())


def test_config_errors_list_what_is_allowed():
    with pytest.raises(ValueError, match="allowed: harmless_mean, zero"):
        label_oracle.Config(ablation="mean")
