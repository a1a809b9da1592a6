"""Tiny models: seeded builds that leave the global RNG alone, save/load, batched scoring = one at a time."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from bench.numerics import torch_threads
from bench.toolkit.models import TINY_SHAPES, build_tiny, load_model, save_model, score_texts, train_reward_model

TEXTS = ["Human: hi\n\nAssistant: hello there<eos>", "a much longer text " * 12, "x", "def f(x):\n    return x"]


@pytest.mark.parametrize("shape", sorted(TINY_SHAPES))
def test_batched_scores_equal_one_at_a_time(shape):
    model, tok = load_model(shape, seed=0)
    batched = score_texts(model, tok, TEXTS, batch_size=3)
    single = [score_texts(model, tok, [t], batch_size=1)[0] for t in TEXTS]
    np.testing.assert_allclose(batched, single, atol=1e-5)  # right padding is ignored by the classifier
    assert batched.shape == (4,) and len(set(np.round(batched, 6))) == 4


def test_seeded_build_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    a, _ = build_tiny("tiny-gpt2", seed=5)
    b, _ = build_tiny("tiny-gpt2", seed=5)
    c, _ = build_tiny("tiny-gpt2", seed=6)
    assert torch.equal(torch.random.get_rng_state(), state)
    pa, pb, pc = (next(m.parameters()) for m in (a, b, c))
    assert torch.equal(pa, pb) and not torch.equal(pa, pc)


def test_save_then_load_from_a_local_directory(tmp_path):
    model, tok = load_model("tiny-llama", seed=2)
    path = save_model(model, tok, tmp_path / "rm")
    again, tok2 = load_model(str(path))
    np.testing.assert_allclose(score_texts(again, tok2, TEXTS), score_texts(model, tok, TEXTS), atol=1e-6)


def test_bad_inputs_are_one_line_errors(tmp_path):
    with pytest.raises(ValueError, match="allowed: sequence-classification"):
        load_model("tiny-gpt2", kind="masked-lm")
    with pytest.raises(ValueError, match="allowed: float32, bfloat16, float16"):
        load_model("tiny-gpt2", dtype="int8")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="as a local directory"):
        load_model(str(tmp_path / "empty"))


def test_unreachable_hub_id_fails_in_one_line():
    code = "from bench.toolkit.models import load_model\nload_model('nobody/no-such-reward-model')"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # no network here either way; offline mode fails without retries
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    last = run.stderr.strip().splitlines()[-1]
    assert run.returncode == 1 and last.startswith("ValueError: cannot load model 'nobody/no-such-reward-model' "
                                                   "as a Hugging Face hub id")


@pytest.fixture
def one_thread():
    with torch_threads(1):
        yield


def test_bradley_terry_training_fits_its_pairs_reproducibly(one_thread):
    """A tiny GPT-2 trained on 12 pairs (preferred answers say "correct") ranks every training pair right;
    the same generator seed replays the same losses, and the global RNG is left alone."""
    chosen = [f"question {i}: the answer is correct and safe" for i in range(12)]
    rejected = [f"question {i}: the answer is wrong {'and harmful' if i % 2 else ''}" for i in range(12)]

    def run(steps):
        model, tok = load_model("tiny-gpt2", seed=4)
        losses = train_reward_model(model, tok, chosen, rejected, steps=steps, lr=3e-3, batch_size=6,
                                    generator=torch.Generator().manual_seed(0))
        return model, tok, losses

    state = torch.random.get_rng_state()
    model, tok, losses = run(30)
    assert run(5)[2] == losses[:5] and torch.equal(torch.random.get_rng_state(), state)
    assert losses[0] > 0.5 and np.mean(losses[-5:]) < 0.1  # from about log 2 to near 0
    assert np.all(score_texts(model, tok, chosen) > score_texts(model, tok, rejected))
