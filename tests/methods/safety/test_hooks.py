"""Residual-stream hooks against known answers: a planted feature, projections, last-token edits, relevance words."""

import numpy as np
import pytest
import torch

from methods.safety._hooks import Ablation, _recording, ablation, eligible, rewrite, stream_states, word_relevance
from tasks.safety._lm import chat_tokenizer, encode, tiny_causal_lm

J = 0  # the residual coordinate the planted feature lives on


@pytest.fixture(scope="module")
def tokenizer():
    return chat_tokenizer(["user: make a bomb or bake a cake please\nassistant: sure sorry"] * 50, vocab_size=300)


def planted(shape, tokenizer):
    """A random tiny LM in which only the token `trigger` writes to coordinate J of the residual stream.

    Every other writer (all embeddings, positions, attention and MLP output projections) is zeroed on J,
    and `trigger`'s embedding equals `twin`'s except for +3 on J: the feature's whole effect is the
    J-component, which blocks and the final norm read (their norms mix it into every output).
    """
    model = tiny_causal_lm(shape, tokenizer, seed=3, layers=2, hidden=32)
    trigger, twin = tokenizer.convert_tokens_to_ids(["Ġbomb", "Ġcake"])
    assert tokenizer.unk_token_id not in (trigger, twin)
    with torch.no_grad():
        emb = model.get_input_embeddings().weight
        emb[:, J] = 0.0
        emb[trigger] = emb[twin]
        emb[trigger, J] = 3.0
        if shape == "tiny-gpt2":
            model.transformer.wpe.weight[:, J] = 0.0
            for block in model.transformer.h:
                for proj in (block.attn.c_proj, block.mlp.c_proj):    # Conv1D: weight (in, out)
                    proj.weight[:, J] = 0.0
                    proj.bias[J] = 0.0
        else:
            for block in model.model.layers:
                for proj in (block.self_attn.o_proj, block.mlp.down_proj):  # Linear: weight (out, in)
                    proj.weight[J] = 0.0
    return model


def logits(model, tokenizer, texts, spec=None, last=None):
    batch = encode(tokenizer, texts)
    with torch.inference_mode():
        if spec is None:
            return model(**batch).logits
        with ablation(model, spec, last):
            return model(**batch).logits


@pytest.mark.parametrize("shape", ["tiny-gpt2", "tiny-llama"])
def test_ablating_a_planted_direction_removes_exactly_that_features_effect(shape, tokenizer):
    model = planted(shape, tokenizer)
    with_feature, without = ["user: make a bomb please\nassistant:"], ["user: make a cake please\nassistant:"]
    e_j = np.eye(32)[J]
    clean = logits(model, tokenizer, with_feature)
    twin = logits(model, tokenizer, without)
    assert (clean - twin).abs().max() > 1e-2                                  # the feature has an effect
    ablated = logits(model, tokenizer, with_feature, Ablation(e_j[None, :]))
    torch.testing.assert_close(ablated, twin, atol=1e-5, rtol=0)             # ... and ablation removes exactly it
    torch.testing.assert_close(logits(model, tokenizer, without, Ablation(e_j[None, :])), twin, atol=1e-6, rtol=0)
    other = np.eye(32)[5]
    assert (logits(model, tokenizer, with_feature, Ablation(other[None, :])) - twin).abs().max() > 1e-2


def test_projection_leaves_no_component_and_the_affine_mode_sets_it(tokenizer):
    model = tiny_causal_lm("tiny-llama", tokenizer, seed=1, layers=3, hidden=32)
    v = np.random.default_rng(0).standard_normal((2, 32))
    v = np.linalg.qr(v.T)[0].T                                                # two orthonormal directions
    prompts = ["user: bake a cake\nassistant:", "user: make a bomb or bake a cake please\nassistant:"]
    clean, _ = stream_states(model, tokenizer, prompts)
    removed, _ = stream_states(model, tokenizer, prompts, ablate=Ablation(v))
    assert np.abs(clean @ v.T).max() > 1e-2 and np.abs(removed @ v.T).max() < 1e-5   # h·v = 0 at every layer
    offset = np.arange(8.0).reshape(4, 2)
    affine, _ = stream_states(model, tokenizer, prompts, ablate=Ablation(v, offset=offset))
    np.testing.assert_allclose(affine @ v.T, np.broadcast_to(offset[:, None, :], (4, 2, 2)), atol=1e-5)


def test_last_token_only_edits_only_the_last_position(tokenizer):
    model = tiny_causal_lm("tiny-gpt2", tokenizer, seed=2, layers=2, hidden=32)
    batch = encode(tokenizer, ["user: bake a cake please\nassistant:", "user: make\nassistant:"])
    last = batch["attention_mask"].sum(1) - 1
    v = np.eye(32)[:1]
    seen_clean, seen_edit = [], []
    with torch.inference_mode():
        with _recording(model, seen_clean):
            model(**batch)
        with ablation(model, Ablation(v, layers=(1,), last_token_only=True), last), _recording(model, seen_edit):
            model(**batch)
    changed = (seen_edit[1] - seen_clean[1]).abs().sum(-1) > 0                # (B, T) at the edited layer
    expected = torch.zeros_like(changed)
    expected[torch.arange(2), last] = True
    assert torch.equal(changed, expected)
    torch.testing.assert_close(seen_edit[0], seen_clean[0])                  # layers before the edit untouched
    with pytest.raises(ValueError, match="last-token positions"):
        with ablation(model, Ablation(v, last_token_only=True)):
            pass


def test_word_relevance_sums_gradient_times_input_and_rewrites_use_the_lexicon(tokenizer):
    model = tiny_causal_lm("tiny-llama", tokenizer, seed=4, layers=2, hidden=32)
    message = "make a bomb please"
    formatted = f"user: {message}\nassistant:"
    direction = np.random.default_rng(1).standard_normal(32)
    words = word_relevance(model, tokenizer, formatted, message, 2, direction)
    # completeness of gradient × input per word: the words' relevances add up to the message tokens' total
    from methods.safety._hooks import token_relevance
    rel, offsets = token_relevance(model, tokenizer, formatted, 2, direction)
    start = formatted.index(message)
    inside = [r for r, (a, b) in zip(rel, offsets, strict=True) if a < start + len(message) and b > start and b > a]
    assert len(words) == 4 and sum(words) == pytest.approx(sum(inside), abs=1e-6)
    assert eligible("tell me how to make a bomb, please") == [0, 4, 6, 7]
    assert rewrite("make a bomb, please", {2, 3}, {"bomb": "boom box"}) == "make a boom box,"
