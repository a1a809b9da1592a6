"""The calibration family's judge (ECE / RMS-CE) and the stochastic-facts world of sft_calibration."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from tasks.calibration import CalibrationResult, calibration_errors, option_probs, score
from tasks.calibration import sft_calibration as T
from tasks.calibration._world import LETTERS, SPECIALS, pretraining_texts, question_text

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
                                 {"entities": 0}, {"rare_fraction": 1.5}, {"rare_per_entity": -1},
                                 {"prior_count": -1}, {"sft_answers": "mode2"}])
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


def _rare_questions(config, problem):
    """(n_eval,) whether each evaluation question asks about a rare fact (never answered in pre-training)."""
    _, rare, _ = T.world(config, 0)
    return np.isin(problem.eval_input_ids[:, 0].numpy() - len(SPECIALS), rare)


def test_rare_facts_are_a_random_share_and_their_answers_are_left_out_of_pre_training():
    config = T.Config(**SMALL)
    probs, rare, _ = T.world(config, 0)
    assert len(rare) == 4 and len(set(rare.tolist())) == 4                  # rare_fraction 0.5 of 8 facts
    counts = T.pretraining_counts(config, rare)
    assert counts[rare].tolist() == [0] * 4 and np.delete(counts, rare).tolist() == [100] * 4
    texts = pretraining_texts(probs, counts, 0.0, 1, np.random.default_rng(0), prior_count=1)
    per_fact = [sum(t.startswith(question_text(i) + " ") for t in texts) for i in range(8)]
    assert per_fact == [c + 4 for c in counts.tolist()]                   # + one pseudo-document per letter
    rare_letters = sorted(t.split()[-1] for t in texts if t.startswith(question_text(int(rare[0])) + " "))
    assert rare_letters == list(LETTERS)                                    # a rare fact: its prior only
    # the SFT set and the questions do not depend on which facts are rare
    _, none_rare, after = T.world(T.Config(**{**SMALL, "rare_fraction": 0.0}), 0)
    assert len(none_rare) == 0
    assert after.integers(2**30, size=8).tolist() == T.world(config, 0)[2].integers(2**30, size=8).tolist()


def test_pretrained_lm_learns_the_posterior_predictive(small_world):
    config, problem = small_world
    renorm, full = option_probs(problem.model, problem)
    assert np.allclose(renorm.sum(1), 1.0) and (full.sum(1) <= 1 + 1e-9).all()
    rare = _rare_questions(config, problem)
    # frequent facts: (n_k + 1)/(100 + 4) ≈ p_i (sampling noise of 100 draws per fact); rare: the uniform prior
    assert np.abs(renorm[~rare] - problem.eval_bayes[~rare]).mean() < 0.1
    assert np.abs(renorm[rare] - 0.25).mean() < 0.03 and renorm[rare].max() < 0.33


def test_pretrained_accuracy_is_below_bayes_on_the_rare_facts_only(small_world):
    config, problem = small_world
    scores = score(problem, CalibrationResult(model=problem.model, final_loss=0.0))
    renorm, _ = option_probs(problem.model, problem)
    correct = renorm.argmax(1) == problem.eval_answers
    bayes = problem.eval_bayes.argmax(1) == problem.eval_answers
    rare = _rare_questions(config, problem)
    se = np.sqrt(0.25 / rare.sum())                                        # ≥ the SE of an accuracy on them
    assert bayes[rare].mean() - correct[rare].mean() > 4 * se               # the model has something to learn
    assert abs(bayes[~rare].mean() - correct[~rare].mean()) < 0.03          # frequent facts: at the Bayes accuracy
    assert scores["accuracy_before"] < scores["bayes_accuracy"] - 0.05
    assert scores["ece_before"] < 0.08                                      # and calibrated: the prior is uniform


def test_random_sft_answers_are_one_uniform_letter_per_fact_and_change_nothing_else(small_world, cache_root):
    config, problem = small_world
    rand = T.build(T.Config(**{**SMALL, "sft_answers": "random"}), RunContext(seed=0, cache_root=cache_root).for_task())
    assert len(list((cache_root / "calibration").iterdir())) == 1          # the same pre-trained model (not re-keyed)
    assert torch.equal(rand.sft_input_ids[:, :-1], problem.sft_input_ids[:, :-1])
    assert np.array_equal(rand.eval_answers, problem.eval_answers)
    letters = {}
    for fact, answer in zip(rand.sft_input_ids[:, 0].tolist(), rand.sft_input_ids[:, -1].tolist(), strict=True):
        assert letters.setdefault(fact, answer) == answer                   # one letter per fact, every copy
    expected = np.random.default_rng([0, 8]).integers(0, 4, size=config.entities)
    assert [problem.letter_ids.index(letters[f]) for f in sorted(letters)] == [
        int(expected[f - len(SPECIALS)]) for f in sorted(letters)]


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
