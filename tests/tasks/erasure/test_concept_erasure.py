"""The erasure family: the rectified-flow sampler on a Gaussian mixture, the attention recorder, the
judge's metrics on hand-made generations, and the task's cache / pretrained loading."""

import copy

import numpy as np
import pytest
import torch

from bench.context import RunContext
from tasks.erasure import (
    ErasureProblem,
    ErasureResult,
    MLPJudge,
    classify,
    concept_erasure,
    concept_scores,
    features,
    frechet_distance,
    score,
)
from tasks.erasure._base import BaseSettings
from tasks.erasure._flux import (
    AttentionRecorder,
    TextEncoder,
    euler_sample,
    make_transformer,
    pack,
    record_last_block,
    tokenize,
    unpack,
    velocity,
)
from tests.tasks.erasure.conftest import SMALL


def mixture_velocity(x, t, weights, means, sd):
    """Exact rectified-flow field v(x, t) = E[ε − x0 | x_t = x] for x0 ~ Σ π_k N(μ_k, sd² I), x_t = (1 − t) x0 + t ε."""
    t = t[:, None, None]                                        # (B, 1, 1)
    var = (1 - t) ** 2 * sd ** 2 + t ** 2                       # Var(x_t | k), per coordinate
    centre = (1 - t) * means[None]                              # (B, K, d)
    resid = x[:, None, :] - centre                              # (B, K, d)
    logp = torch.log(weights)[None] - 0.5 * (resid ** 2 / var).sum(-1) - 0.5 * x.shape[-1] * torch.log(var[..., 0])
    post = torch.softmax(logp, dim=1)[..., None]                # p(k | x_t)
    e_x0 = means[None] + (1 - t) * sd ** 2 / var * resid        # E[x0 | x_t, k]
    e_eps = t / var * resid                                     # E[ε | x_t, k]
    return (post * (e_eps - e_x0)).sum(1)


def test_sampler_reproduces_a_gaussian_mixture():
    """Euler integration of the exact field from N(0, I) recovers the mixture's weights, means and variances."""
    weights, means, sd = torch.tensor([0.3, 0.7]), torch.tensor([[-2.0, 1.0], [2.0, -1.0]]), 0.5
    noise = torch.randn((40_000, 2), generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    field = lambda x, t, i: mixture_velocity(x, t.double(), weights.double(), means.double(), sd)  # noqa: E731
    x = euler_sample(field, noise, steps=200)
    right = x[:, 0] > 0
    assert abs(right.double().mean() - 0.7) < 0.01
    for k, side in enumerate((~right, right)):
        np.testing.assert_allclose(x[side].mean(0), means[k], atol=0.03)
        np.testing.assert_allclose(x[side].var(0), [sd ** 2] * 2, rtol=0.06)
    overall = 0.3 * means[0] + 0.7 * means[1]
    np.testing.assert_allclose(x.mean(0), overall, atol=0.04)


def test_sampler_stops_at_t_stop_on_the_exact_straight_path():
    """For x0 = 0 deterministic, v = ε − x0 = x_t / t: Euler is exact and x_t = t ε at every grid point."""
    noise = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    field = lambda x, t, i: x / t[:, None]  # noqa: E731
    np.testing.assert_allclose(euler_sample(field, noise, 28, t_stop=0.25), 0.25 * noise, atol=1e-6)


def test_direct_attention_is_diffusers_attention_bit_for_bit():
    """The tiny model's attention modules skip diffusers' per-call signature check only: the same outputs and
    gradients as diffusers' own FluxAttention, with and without a recorder on the last block."""
    from diffusers.models.transformers.transformer_flux import FluxAttention

    torch.manual_seed(0)
    direct = make_transformer(2, 1, 4, 16)
    plain = copy.deepcopy(direct)
    for module in plain.modules():
        if isinstance(module, FluxAttention):
            module.__class__ = FluxAttention
    assert {type(m).__name__ for m in direct.modules() if isinstance(m, FluxAttention)} == {"_DirectFluxAttention"}
    x, text, t = torch.randn(3, 16, 4), torch.randn(3, 8, 32), torch.rand(3)
    for record in (False, True):
        if record:
            record_last_block(direct), record_last_block(plain)
        outs = [velocity(model, x, text, t) for model in (direct, plain)]
        grads = [torch.autograd.grad(out.pow(2).sum(), model.transformer_blocks[0].attn.to_q.weight)[0]
                 for out, model in zip(outs, (direct, plain), strict=True)]
        assert torch.equal(outs[0], outs[1]) and torch.equal(grads[0], grads[1])


def test_pack_tokenize_and_recorder():
    images = torch.randn(3, 8, 8)
    assert torch.equal(unpack(pack(images)), images) and pack(images).shape == (3, 16, 4)
    assert tokenize(["a handwritten seven"]).tolist()[0][3:] == [0] * 5
    with pytest.raises(ValueError, match="unknown words"):
        tokenize(["a handwritten cat"])
    torch.manual_seed(0)
    model = make_transformer(2, 1, 4, 16)
    x, text, t = torch.randn(2, 16, 4), torch.randn(2, 8, 32), torch.rand(2)
    expected = velocity(model, x, text, t)
    recorder = AttentionRecorder()
    model.transformer_blocks[-1].attn.set_processor(recorder)
    torch.testing.assert_close(velocity(model, x, text, t), expected, atol=1e-5, rtol=1e-5)  # same attention
    assert recorder.probs.shape == (2, 4, 24, 24)
    torch.testing.assert_close(recorder.probs.sum(-1), torch.ones(2, 4, 24))


def _hand_problem(preserve_labels, reference):
    """A problem whose judge is hand-set: features = relu(x), class = the brightest of 10 pixel groups."""
    w1 = np.zeros((64, 10))
    for c in range(10):
        w1[c * 6:(c + 1) * 6, c] = 1.0
    classifier = (np.eye(64), np.zeros(64), w1, np.zeros(10))
    return ErasureProblem(
        backbone=None, judge=MLPJudge(classifier), classifier_accuracy=1.0, concept="seven",
        concept_class=7, synonyms=("7",), irrelevant=("one",), preserve=("one", "two"), templates=("{}",),
        concept_images=torch.empty(0), eval_prompts={}, eval_noise={},
        preserve_labels=np.asarray(preserve_labels), reference_features=features(classifier, reference))


def _digit(c: int) -> np.ndarray:
    image = -np.ones(64)
    image[c * 6:(c + 1) * 6] = 1.0
    return image.reshape(8, 8)


def test_metrics_on_hand_made_generations():
    preserve = np.stack([_digit(1)] * 3 + [_digit(2)] * 3)
    problem = _hand_problem([1, 1, 1, 2, 2, 2], preserve)
    assert classify(problem.judge.weights, preserve).tolist() == [1, 1, 1, 2, 2, 2]
    edited_preserve = preserve.copy()
    edited_preserve[0], edited_preserve[4] = _digit(7), _digit(1)  # two of six preserved generations lost
    images = {"concept": np.stack([_digit(7)] * 3 + [_digit(0)]),           # 3 of 4 still the concept
              "shuffled": np.stack([_digit(7), _digit(3)]),                  # 1 of 2
              "synonym": np.stack([_digit(5)] * 4),                          # 0 of 4
              "preserve": edited_preserve}
    judged = {name: problem.judge.judge(x) for name, x in images.items()}
    s = concept_scores(problem, judged)
    assert s["concept_rate"] == 0.75 and s["shuffled_rate"] == 0.5 and s["synonym_rate"] == 0.0
    assert s["preserve_accuracy"] == pytest.approx(4 / 6)
    same = {**judged, "preserve": problem.judge.judge(preserve)}
    assert concept_scores(problem, same)["feature_fd"] == pytest.approx(0.0, abs=1e-8)
    assert s["feature_fd"] > 0.1


def _exact_moments(n, d, seed):
    """Rows with empirical mean exactly 0 and empirical covariance (ddof 1) exactly I."""
    x = np.random.default_rng(seed).standard_normal((n, d))
    x -= x.mean(0)
    chol = np.linalg.cholesky(np.cov(x, rowvar=False))
    return x @ np.linalg.inv(chol).T


def test_frechet_distance_matches_the_gaussian_closed_form():
    """FD(N(m1, diag s1²), N(m2, diag s2²)) = ‖m1 − m2‖² + Σ (s1 − s2)² on samples with exact moments."""
    m1, m2 = np.array([0.0, 1.0, 2.0]), np.array([1.0, 1.0, 0.0])
    s1, s2 = np.array([1.0, 2.0, 0.5]), np.array([2.0, 2.0, 1.5])
    a, b = _exact_moments(500, 3, 0) * s1 + m1, _exact_moments(700, 3, 1) * s2 + m2
    assert frechet_distance(a, b) == pytest.approx(np.sum((m1 - m2) ** 2) + np.sum((s1 - s2) ** 2), rel=1e-8)


def test_original_model_scores_no_drift_and_the_judge_is_accurate(small_problem):
    s = score(small_problem, ErasureResult(small_problem.transformer))
    assert s["feature_fd"] == pytest.approx(0.0, abs=1e-6)  # same noise, same model: identical generations
    assert set(s) == {"concept_rate", "synonym_rate", "shuffled_rate", "preserve_accuracy", "feature_fd"}
    assert small_problem.classifier_accuracy > 0.95
    assert small_problem.concept_images.shape == (SMALL["concept_images"], 16, 4)


def test_cache_is_reused_and_a_saved_directory_loads_as_pretrained(small_problem, small_cache):
    (entry,) = [p for p in (small_cache / "erasure").iterdir()  # cache_dir("erasure"): one base model
                if not p.name.startswith((".", "references-"))]
    settings = BaseSettings(layers=1, single_layers=0, train_steps=60)
    assert entry.name == settings.key() and (entry / "transformer" / "config.json").exists()
    again = concept_erasure.build(concept_erasure.Config(**SMALL, pretrained=str(entry)), RunContext(0).for_task())
    for a, b in zip(small_problem.transformer.parameters(), again.transformer.parameters(), strict=True):
        assert torch.equal(a, b)
    np.testing.assert_array_equal(again.reference_features, small_problem.reference_features)


def test_the_references_are_computed_once_per_seed_and_load_as_computed(small_problem, small_cache, monkeypatch):
    """The base model's preserved-prompt features and D_un are computed by the seed's first build only; a later build
    of the same seed loads them (no generation at all) and a new seed computes its own."""
    def entries():
        return sorted(p.name for p in (small_cache / "erasure").iterdir() if p.name.startswith("references-"))

    before = entries()
    with monkeypatch.context() as patched:
        patched.setattr(ErasureProblem, "judged", lambda *a: pytest.fail("seed 0's references were recomputed"))
        again = concept_erasure.build(concept_erasure.Config(**SMALL), RunContext(0, cache_root=small_cache).for_task())
    np.testing.assert_array_equal(again.reference_features, small_problem.reference_features)
    assert torch.equal(again.concept_images, small_problem.concept_images) and entries() == before
    other = concept_erasure.build(concept_erasure.Config(**SMALL), RunContext(1, cache_root=small_cache).for_task())
    assert len(entries()) == len(before) + 1
    assert not np.array_equal(other.reference_features, small_problem.reference_features)


def test_text_encoder_depends_on_its_seed_only():
    """Every weight (the layers' default-initialised biases included) comes from the seed, not the global generator."""
    first = TextEncoder(3).state_dict()
    torch.rand(7)  # move the global generator
    second = TextEncoder(3).state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
    assert not torch.equal(TextEncoder(4).state_dict()["layer.linear1.bias"], first["layer.linear1.bias"])


@pytest.mark.parametrize("bad", [{"concept": "cat"}, {"synonyms": ("8",)}, {"preserve": ("seven",)}, {"n_eval": 0},
                                 {"sample_steps": 0}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        concept_erasure.Config(**bad)


def test_the_sampler_steps_default_to_the_papers_28_on_a_pipeline_and_14_on_the_tiny_model():
    assert concept_erasure.Config().steps() == 14
    assert concept_erasure.Config(pipeline="black-forest-labs/FLUX.1-dev", concept="nudity", synonyms=("naked",),
                                  irrelevant=("cat",), preserve=("car",)).steps() == 28
    assert concept_erasure.Config(sample_steps=28).steps() == 28
