"""Causal LMs: completion log-probs = a hand loop over tokens, padding-free batching, sampling, accumulation."""

import numpy as np
import pytest
import torch

from bench.toolkit.cache import cached_dir
from bench.toolkit.causal_lm import load_causal_lm, sample, sequence_logprobs, train
from bench.toolkit.models import TINY_SHAPES, save_model
from bench.toolkit.tokenizer import train_bpe_tokenizer

CORPUS = ["add 3 4 = 7", "rev a b c = c b a", "story sea = bright calm waves", "recommend moon = quiet walk"] * 20
PROMPTS = ["add 3 4 =", "story sea =", "rev a b c ="]
COMPLETIONS = [" 7", " bright calm waves sing", " c b a"]


@pytest.fixture(scope="module")
def tokenizer():
    return train_bpe_tokenizer(CORPUS, vocab_size=300)


def _hand_logprob(model, tok, prompt, completion):
    """Σ log p(token | prefix) over the completion tokens and eos, one forward per token."""
    p = tok(prompt, add_special_tokens=False)["input_ids"]
    c = tok(completion, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    total = 0.0
    with torch.no_grad():
        for i, token in enumerate(c):
            logits = model(input_ids=torch.tensor([p + c[:i]])).logits[0, -1]
            total += float(torch.log_softmax(logits, -1)[token])
    return total, len(c)


@pytest.mark.parametrize("shape", sorted(TINY_SHAPES))
def test_sequence_logprobs_equal_a_token_by_token_loop(shape, tokenizer):
    model, tok = load_causal_lm(shape, tokenizer=tokenizer, seed=1)
    with torch.no_grad():
        summed = sequence_logprobs(model, tok, PROMPTS, COMPLETIONS, batch_size=2)
        mean = sequence_logprobs(model, tok, PROMPTS, COMPLETIONS, average=True)
    for i, (p, c) in enumerate(zip(PROMPTS, COMPLETIONS, strict=True)):
        total, n = _hand_logprob(model, tok, p, c)
        assert summed[i].item() == pytest.approx(total, abs=1e-4)
        assert mean[i].item() == pytest.approx(total / n, abs=1e-5)


def test_greedy_sampling_follows_the_argmax_and_sampling_replays_with_its_generator(tokenizer):
    model, tok = load_causal_lm("tiny-llama", tokenizer=tokenizer, seed=3)
    greedy = sample(model, tok, PROMPTS, max_new_tokens=4, temperature=0)
    for prompt, text in zip(PROMPTS, greedy, strict=True):  # the hand argmax chain from the unpadded prompt
        ids = tok(prompt, add_special_tokens=False)["input_ids"]
        out = []
        with torch.no_grad():
            for _ in range(4):
                token = int(model(input_ids=torch.tensor([ids + out])).logits[0, -1].argmax())
                if token == tok.eos_token_id:
                    break
                out.append(token)
        assert text == tok.decode(out, skip_special_tokens=True)
    a = sample(model, tok, PROMPTS * 4, max_new_tokens=5, generator=torch.Generator().manual_seed(0))
    b = sample(model, tok, PROMPTS * 4, max_new_tokens=5, generator=torch.Generator().manual_seed(0))
    assert a == b and len(set(a)) > 3


def test_top_p_sampling_stays_in_the_nucleus(tokenizer):
    """With top_p tiny only the argmax token survives, so sampling equals greedy decoding."""
    model, tok = load_causal_lm("tiny-gpt2", tokenizer=tokenizer, seed=2)
    greedy = sample(model, tok, PROMPTS, max_new_tokens=4, temperature=0)
    nucleus = sample(model, tok, PROMPTS, max_new_tokens=4, top_p=1e-6, generator=torch.Generator().manual_seed(1))
    assert nucleus == greedy


def test_gradient_accumulation_equals_the_full_batch_step(tokenizer):
    """Two micro-batches of 2 with accumulation take the same AdamW step as one batch of 4 (SGD-equal grads)."""
    def run(batch, accum):
        model, tok = load_causal_lm("tiny-gpt2", tokenizer=tokenizer, seed=0)
        prompts, completions = PROMPTS + ["add 1 1 ="], COMPLETIONS + [" 2"]

        def loss_fn(idx):
            return -sequence_logprobs(model, tok, [prompts[i] for i in idx], [completions[i] for i in idx]).mean()

        train(model, loss_fn, 4, steps=min(accum, 1), lr=1e-2, batch_size=batch, grad_accum=max(accum, 1),
              generator=torch.Generator().manual_seed(5), max_grad_norm=None)
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    start, full, accumulated = run(4, 0), run(4, 1), run(2, 2)
    assert (full - start).abs().max() > 5e-3  # the step moved the weights by about lr
    # Adam's first step is lr·g/(|g| + eps): float noise on coordinates with |g| ~ eps shows up at 1e-5
    torch.testing.assert_close(full, accumulated, atol=1e-4, rtol=0)


def test_local_directory_round_trip_and_atomic_cache(tmp_path, tokenizer):
    model, tok = load_causal_lm("tiny-gpt2", tokenizer=tokenizer, seed=4)
    calls = []

    def build(path):
        calls.append(path)
        save_model(model, tok, path)

    first = cached_dir(tmp_path / "cache", {"shape": "tiny-gpt2", "seed": 4}, build)
    again = cached_dir(tmp_path / "cache", {"seed": 4, "shape": "tiny-gpt2"}, build)
    assert first == again and len(calls) == 1 and not any(p.name.startswith(".tmp") for p in first.parent.iterdir())
    loaded, tok2 = load_causal_lm(str(first))
    with torch.no_grad():
        np.testing.assert_allclose(sequence_logprobs(loaded, tok2, PROMPTS, COMPLETIONS).numpy(),
                                   sequence_logprobs(model, tok, PROMPTS, COMPLETIONS).numpy(), atol=1e-5)
    with pytest.raises(ValueError, match="as a local directory"):
        (tmp_path / "empty").mkdir()
        load_causal_lm(str(tmp_path / "empty"))
