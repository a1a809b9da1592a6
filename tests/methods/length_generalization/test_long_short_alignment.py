"""The regulariser's mechanics: overlap index alignment, the l_extra = 0 case, gradients through both branches,
loading a saved model directory, and (slow) that training with α > 0 lowers the measured misalignment."""

import dataclasses

import numpy as np
import pytest
import torch

from bench.context import RunContext
from methods.length_generalization import _lm, _training, long_short_alignment, plain
from tasks.length_generalization import misalignment, sce, symmetric_kl, topic_lm


class LastTokenModel(torch.nn.Module):
    """logits[t] = W[x_t]: the prediction depends only on the last input token (and not on its position)."""

    def __init__(self, vocab):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(vocab, vocab, generator=torch.Generator().manual_seed(0)))

    def forward(self, input_ids):
        return type("Out", (), {"logits": self.table[input_ids]})()


class PositionModel(LastTokenModel):
    """logits[t] = W[x_t] + t·u: additionally position-dependent, so a misaligned pair differs."""

    def forward(self, input_ids):
        t = torch.arange(input_ids.shape[1], dtype=torch.float32)[None, :, None]
        return type("Out", (), {"logits": self.table[input_ids] + 0.3 * t * self.table[0]})()


@pytest.mark.parametrize("l_extra", [1, 3, 5])
def test_overlap_pairs_end_at_the_same_absolute_token(l_extra):
    """With a last-token model, P and Q coincide exactly iff each pair ends at the same token of x."""
    x = torch.as_tensor(np.random.default_rng(l_extra).integers(0, 7, size=(4, 10 + l_extra)))
    model = LastTokenModel(7)
    a, b = x[:, :10], x[:, l_extra:l_extra + 10]
    log_p, log_q = _lm.overlap_log_probs(model(a).logits, model(b).logits, l_extra, 7)
    assert log_p.shape == (4, 10 - l_extra, 7)
    torch.testing.assert_close(log_p, log_q, rtol=0, atol=0)
    # the shifted (spec-sketch) pairing predicts different tokens: it is not aligned
    shifted_p = torch.log_softmax(model(a).logits[:, l_extra - 1:9], -1)
    assert not torch.allclose(shifted_p, log_q[:, : 10 - l_extra])


def test_with_no_extra_tokens_the_branches_are_identical_and_the_misalignment_is_zero():
    x = torch.as_tensor(np.random.default_rng(0).integers(0, 7, size=(3, 10)))
    model = PositionModel(7)
    _, l_mis = _lm.misalignment_loss(model, x, 10, 0, 7)
    assert l_mis.item() == 0.0                                       # the symmetric KL of identical outputs
    _, shifted = _lm.misalignment_loss(model, torch.cat([x, x[:, :2]], 1), 10, 2, 7)
    assert shifted > 0
    # plain SCE (the option) is twice the entropy on identical outputs, not 0
    _, sce = _lm.misalignment_loss(model, x, 10, 0, 7, divergence="sce")
    log_p = torch.log_softmax(model(x).logits, -1)
    torch.testing.assert_close(sce, -2 * (log_p.exp() * log_p).sum(-1).mean())


def test_symmetric_kl_is_sce_minus_both_entropies_and_matches_a_hand_computed_value():
    p, q = torch.tensor([0.5, 0.25, 0.25]), torch.tensor([0.25, 0.5, 0.25])
    # (0.25)(ln 2) + (−0.25)(−ln 2) + 0 = 0.5 ln 2
    torch.testing.assert_close(_lm.symmetric_kl_loss(p.log(), q.log()),
                               torch.tensor(0.5 * np.log(2), dtype=torch.float32))
    def entropy(d):
        return -(d * d.log()).sum()
    torch.testing.assert_close(_lm.symmetric_kl_loss(p.log(), q.log()),
                               _lm.sce_loss(p.log(), q.log()) - entropy(p) - entropy(q))


def test_last_position_only_keeps_the_final_overlap_pair():
    x = torch.as_tensor(np.random.default_rng(1).integers(0, 7, size=(2, 13)))
    model = PositionModel(7)
    a, b = x[:, :10], x[:, 3:13]
    log_p, log_q = _lm.overlap_log_probs(model(a).logits, model(b).logits, 3, 7, last_only=True)
    assert log_p.shape == (2, 1, 7)
    torch.testing.assert_close(log_q[:, 0], torch.log_softmax(model(b).logits[:, 6], -1))  # B ends at x[9]
    torch.testing.assert_close(log_p[:, 0], torch.log_softmax(model(a).logits[:, 9], -1))


def test_sce_gradient_flows_to_both_branches():
    log_p = torch.log_softmax(torch.randn(5, generator=torch.Generator().manual_seed(1)), 0).requires_grad_()
    log_q = torch.log_softmax(torch.randn(5, generator=torch.Generator().manual_seed(2)), 0).requires_grad_()
    _lm.sce_loss(log_p, log_q).backward()
    assert log_p.grad.abs().sum() > 0 and log_q.grad.abs().sum() > 0


def test_a_saved_model_directory_loads_through_the_same_path(tmp_path):
    problem = topic_lm.build(topic_lm.Config(**topic_lm.SMALLEST), RunContext(0).for_task())
    model = _lm.build_model("micro-llama-lm", problem, 10000.0, 3, "cpu")
    model.save_pretrained(tmp_path / "m")
    loaded = _lm.build_model(str(tmp_path / "m"), problem, 10000.0, 0, "cpu")
    tokens = problem.eval_tokens[16]
    np.testing.assert_allclose(_lm.predictor(loaded, 32, "cpu")(tokens), _lm.predictor(model, 32, "cpu")(tokens),
                               atol=1e-6)
    with pytest.raises(ValueError, match="cannot load model"):
        _lm.build_model(str(tmp_path / "missing"), problem, 10000.0, 0, "cpu")


def test_a_model_is_trained_once_per_training_input_and_loads_as_trained(tmp_path, monkeypatch):
    """Two evaluations of one training (other eval_lengths) share the trained model: the second run trains nothing,
    logs the same curves and predicts bit for bit as the first; another α, another seed or a generator that has
    already drawn trains its own."""
    config = long_short_alignment.Config(alpha=0.1, steps=6, batch_size=4, checkpoints=2, model="micro-llama-lm")
    short = topic_lm.build(topic_lm.Config(**topic_lm.SMALLEST), RunContext(0).for_task())
    longer = topic_lm.build(topic_lm.Config(**{**topic_lm.SMALLEST, "eval_lengths": (8, 9)}), RunContext(0).for_task())
    first_ctx = RunContext(0, cache_root=tmp_path)
    first = long_short_alignment.solve(short, config, first_ctx)
    with monkeypatch.context() as patched:
        patched.setattr(_lm, "train", lambda *a, **k: pytest.fail("the same training ran twice"))
        again_ctx = RunContext(0, cache_root=tmp_path)
        again = long_short_alignment.solve(longer, config, again_ctx)
    assert again_ctx.curves == first_ctx.curves and len(first_ctx.curves["train_loss"]) == 6
    tokens = short.eval_tokens[16]
    np.testing.assert_array_equal(again.log_probs(tokens), first.log_probs(tokens))
    assert [s for s, _ in again.checkpoints] == [s for s, _ in first.checkpoints] == [3, 6]
    for (_, a), (_, b) in zip(again.checkpoints, first.checkpoints, strict=True):
        np.testing.assert_array_equal(a(tokens), b(tokens))
    plain_ctx = RunContext(0)  # the same training without the cache: the seed solve draws, then _lm.train itself
    model = _lm.build_model(config.model, short, config.rope_theta, _training.seed_of(plain_ctx), "cpu")
    model, _ = _lm.train(short, model, steps=6, batch_size=4, lr=config.lr, alpha=0.1,
                         extra_fraction=config.extra_fraction, last_only=config.last_position_only, checkpoints=2,
                         ctx=plain_ctx, divergence=config.divergence)
    np.testing.assert_array_equal(_lm.predictor(model, 32, "cpu")(tokens), first.log_probs(tokens))  # no bit changed
    long_short_alignment.solve(short, dataclasses.replace(config, alpha=0.2), RunContext(0, cache_root=tmp_path))
    long_short_alignment.solve(short, config, RunContext(1, cache_root=tmp_path))
    drawn = RunContext(0, cache_root=tmp_path)
    drawn.rng.random()  # the run's generator moved before the training: other draws, another model
    long_short_alignment.solve(short, config, drawn)
    assert len(list((tmp_path / "length_generalization").glob("lm-*"))) == 4


def test_config_validation():
    with pytest.raises(ValueError, match="alpha"):
        long_short_alignment.Config(alpha=-0.1)
    with pytest.raises(ValueError, match="steps"):
        plain.Config(steps=0)
    problem = topic_lm.build(topic_lm.Config(**topic_lm.SMALLEST), RunContext(0).for_task())
    assert long_short_alignment.skip(problem, long_short_alignment.Config(extra_fraction=1.0))


@pytest.mark.slow
@pytest.mark.parametrize("divergence", ["symmetric_kl", "sce"])
def test_the_regulariser_lowers_the_misalignment_it_penalises(divergence):
    """Same seed and steps: α = 1 ends with a lower held-out L_misalign, in the divergence it penalises, than α = 0."""
    measure = {"symmetric_kl": symmetric_kl, "sce": sce}[divergence]
    problem = topic_lm.build(topic_lm.Config(eval_lengths=(32, 64)), RunContext(0).for_task())
    got = {}
    for alpha in (0.0, 1.0):
        config = long_short_alignment.Config(alpha=alpha, steps=200, checkpoints=0, divergence=divergence)
        result = long_short_alignment.solve(problem, config, RunContext(0))
        got[alpha] = misalignment(result.log_probs, problem.misalign_tokens, 32, divergence=measure)
    assert got[1.0] < got[0.0] - (0.2 if divergence == "sce" else 0.5 * got[0.0]), got
