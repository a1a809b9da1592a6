"""The calibration family's judge (ECE / RMS-CE) and the stochastic-facts world of sft_calibration."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from tasks.calibration import CalibrationResult, calibration_errors, option_probs, score
from tasks.calibration import sft_calibration as T

SMALL = {"entities": 8, "per_entity": 100, "vocab_size": 64, "hidden_size": 16, "pretrain_steps": 400,
         "eval_questions": 400, "sft_copies": 8}


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session")
def small_world(cache_root):
    config = T.Config(**SMALL)
    return config, T.build(config, RunContext(seed=0, cache_root=cache_root).for_task())


def test_ece_and_rms_by_hand():
    # bin (13/15, 14/15]: conf 0.9, acc 0.5 -> gap 0.4; bin (2/15, 3/15]: conf 0.2, acc 0 -> gap 0.2; weights 1/2
    ece, rms = calibration_errors(np.array([0.9, 0.9, 0.2, 0.2]), np.array([1, 0, 0, 0]))
    assert ece == pytest.approx(0.5 * 0.4 + 0.5 * 0.2, abs=1e-12)
    assert rms == pytest.approx(np.sqrt(0.5 * 0.16 + 0.5 * 0.04), abs=1e-12)
    assert calibration_errors(np.array([1.0, 0.0 + 1e-9]), np.array([1, 0])) == pytest.approx((5e-10, 7.0710678e-10))


def test_a_calibrated_forecaster_has_small_ece():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.25, 1.0, 200_000)
    ece, rms = calibration_errors(conf, rng.random(conf.size) < conf)
    assert ece < 0.005 and rms < 0.006
    ece_over, _ = calibration_errors(np.minimum(conf + 0.2, 1.0), rng.random(conf.size) < conf)
    assert ece_over > 0.15   # over-confidence by 0.2 (clipped at 1) shows up


@pytest.mark.parametrize("bad", [{"vocab_size": 10}, {"hidden_size": 24}, {"alpha": 0.0}, {"sft_fraction": 0.0},
                                 {"entities": 0}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        T.Config(**bad)


def test_world_data_shapes_masks_and_sampled_answers(small_world):
    config, problem = small_world
    n_sft = round(config.sft_fraction * config.entities) * config.sft_copies
    assert problem.sft_input_ids.shape == (n_sft, 8) and problem.eval_input_ids.shape == (config.eval_questions, 7)
    assert ((problem.sft_labels[:, :-1] == -100).all()
            and (problem.sft_labels[:, -1] == problem.sft_input_ids[:, -1]).all())
    assert set(problem.sft_labels[:, -1].tolist()) <= set(problem.letter_ids)
    assert (problem.vocab_size, problem.hidden_size) == (64, 16)
    # answers are drawn from each question's own distribution: mean p(answer) ≈ E[Σ p²]
    drawn = problem.eval_bayes[np.arange(len(problem.eval_answers)), problem.eval_answers].mean()
    assert drawn == pytest.approx(np.mean((problem.eval_bayes ** 2).sum(1)), abs=0.03)


def test_pretrained_lm_learns_the_answer_distributions(small_world):
    _, problem = small_world
    renorm, full = option_probs(problem.model, problem)
    assert np.allclose(renorm.sum(1), 1.0) and (full.sum(1) <= 1 + 1e-9).all()
    assert np.abs(renorm - problem.eval_bayes).mean() < 0.1       # near p_i (sampling noise of 100 draws per fact)


def test_score_of_an_untuned_model_changes_nothing(small_world):
    _, problem = small_world
    scores = score(problem, CalibrationResult(model=problem.model, final_loss=0.0))
    assert scores["ece_after"] == scores["ece_before"] and scores["ece_increase"] == 0.0
    assert scores["accuracy_after"] == scores["accuracy_before"]
    assert scores["ece_before"] < 0.12 and scores["bayes_accuracy"] >= scores["accuracy_before"] - 0.05


def test_cache_and_local_directory_load_the_same_model(small_world, cache_root, tmp_path):
    config, problem = small_world
    assert len(list((cache_root / "calibration").iterdir())) == 1           # the context's cache_dir("calibration")
    again = T.build(config, RunContext(seed=0, cache_root=cache_root).for_task())  # read from the cache
    state, cached = problem.model.state_dict(), again.model.state_dict()
    assert all(torch.equal(state[k], cached[k]) for k in state)
    problem.model.save_pretrained(tmp_path / "m")
    problem.tokenizer.save_pretrained(tmp_path / "m")
    local = T.build(T.Config(**{**SMALL, "model": str(tmp_path / "m")}), RunContext(seed=0).for_task())
    np.testing.assert_array_equal(option_probs(local.model, local)[0], option_probs(problem.model, problem)[0])
    with pytest.raises(ValueError, match="cannot load causal LM"):
        T.build(T.Config(**{**SMALL, "model": str(tmp_path / "missing")}), RunContext(seed=0).for_task())
