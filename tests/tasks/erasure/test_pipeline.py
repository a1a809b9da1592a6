"""The pipeline path of the erasure family on a tiny FluxPipeline saved locally: the backbone against diffusers'
own FluxPipeline (velocity, sampler, decoding), the keyword's T5 tokens, the CLIP judge against a hand computation."""

import numpy as np
import pytest
import torch
from diffusers import FluxPipeline

from bench.context import RunContext
from tasks.erasure import CLIPJudge, ErasureResult, concept_erasure, score
from tasks.erasure._backbone import PipelineBackbone, load_pipeline
from tasks.erasure._flux import AttentionRecorder
from tests.fixtures.erasure.tiny_flux import RESOLUTION, build_pipeline
from tests.tasks.erasure.conftest import PIPELINE_SMALL


def _backbone(directory, steps=5, guidance=3.0, train_guidance=3.5, max_tokens=12):
    return PipelineBackbone(load_pipeline(directory, "cpu"), steps, guidance, train_guidance, RESOLUTION, max_tokens,
                            batch=2)


def test_velocity_is_the_pipeline_transformer_with_the_pipelines_packing_and_ids(tiny_pipeline_dir):
    backbone = _backbone(tiny_pipeline_dir)
    pipe = backbone.pipe
    g = torch.Generator().manual_seed(0)
    latents = torch.randn(2, 4, 8, 8, generator=g)                        # (B, C, H, W) VAE latents
    packed = FluxPipeline._pack_latents(latents, 2, 4, 8, 8)
    t = torch.tensor([0.3, 0.8])
    prompts = ["a photo of cat", "a dog"]
    embeds, pooled, text_ids = pipe.encode_prompt(prompts, device="cpu", max_sequence_length=12)
    expected = pipe.transformer(hidden_states=packed, timestep=t, guidance=torch.full((2,), 3.5),
                                pooled_projections=pooled,
                                encoder_hidden_states=embeds, txt_ids=text_ids,
                                img_ids=FluxPipeline._prepare_latent_image_ids(2, 4, 4, "cpu", torch.float32),
                                return_dict=False)[0]
    got = backbone.velocity(backbone.transformer, packed, backbone.encode(prompts), t)
    torch.testing.assert_close(got, expected, atol=0, rtol=0)
    assert backbone.latent_shape == (16, 16) and packed.shape == (2, 16, 16)


@pytest.mark.parametrize("guidance_embeds", [True, False])  # FLUX.1-dev (guidance embedding) and schnell (none)
def test_sampler_and_decoder_equal_flux_pipeline_call(tiny_pipeline_dir, tmp_path, guidance_embeds):
    directory = (tiny_pipeline_dir if guidance_embeds
                 else str(build_pipeline(tmp_path / "schnell", guidance_embeds=False)))
    backbone = _backbone(directory, steps=5, guidance=2.5)
    noise = torch.randn(2, 16, 16, generator=torch.Generator().manual_seed(1))
    prompts = ["a photo of cat", "a picture showing a dog"]
    ours = backbone.sample(backbone.transformer, backbone.encode(prompts), noise)
    kwargs = dict(prompt=prompts, latents=noise.clone(), num_inference_steps=5, guidance_scale=2.5, height=RESOLUTION,
                  width=RESOLUTION, max_sequence_length=12)
    theirs = backbone.pipe(**kwargs, output_type="latent").images
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)
    assert (ours - noise).abs().max() > 0.1  # the sampler moved
    images = backbone.pipe(**kwargs, output_type="pt").images
    np.testing.assert_allclose(backbone.decode(theirs), images.numpy(), atol=1e-5)
    # the schedule is the scheduler's: shifted sigmas (μ from the 16 image tokens), not a uniform grid
    assert backbone.grid[0] == 1.0 and backbone.grid[-1] == 0.0 and len(backbone.grid) == 6
    assert not np.allclose(backbone.grid.numpy(), np.linspace(1, 0, 6))


def test_sampler_stops_at_t_stop_on_the_scheduler_grid(tiny_pipeline_dir):
    backbone = _backbone(tiny_pipeline_dir)
    text, noise = (backbone.encode(["a photo of cat"]),
                   torch.randn(1, 16, 16, generator=torch.Generator().manual_seed(2)))
    field, t_stop = backbone.field(backbone.transformer, text), backbone.step_end(1)  # the end of step 1
    with torch.no_grad():
        x = noise
        for i in range(2):  # two Euler steps by hand on the scheduler's sigmas
            x = x + (backbone.grid[i + 1] - backbone.grid[i]) * field(x, None, i)
    torch.testing.assert_close(backbone.sample(backbone.transformer, text, noise, t_stop), x, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("words, positions, pieces", [
    (["a", "photo", "of", "van gogh"], [3], ["▁van", "▁go", "gh"]),          # a two-word concept, three tokens
    (["nudity", "a", "photo", "of"], [0], ["▁nud", "ity"]),                  # shuffled first, two sub-word tokens
    (["a", "cat", "photo", "of", "cat"], [1, 4], ["▁cat", "▁cat"]),
])
def test_keyword_tokens_are_the_keywords_t5_tokens(tiny_pipeline_dir, words, positions, pieces):
    backbone = _backbone(tiny_pipeline_dir)
    keys = backbone.keyword_tokens(words, positions)
    ids = backbone.pipe.tokenizer_2(" ".join(words), padding="max_length", max_length=12, truncation=True).input_ids
    assert backbone.pipe.tokenizer_2.convert_ids_to_tokens([ids[k] for k in keys]) == pieces
    # the columns are those of the T5 embeddings the transformer reads (encode_prompt's tokenisation)
    embeds = backbone.encode([" ".join(words)]).tokens
    with torch.no_grad():
        direct = backbone.pipe.text_encoder_2(torch.tensor([ids]))[0]
    torch.testing.assert_close(embeds[0, keys], direct[0, keys])


def test_clip_judge_labels_are_the_argmax_cosine_of_clip_features(tiny_judge_dir):
    classes = ("cat", "dog", "car", "tree")
    judge = CLIPJudge(tiny_judge_dir, classes)
    rng = np.random.default_rng(0)
    images = np.concatenate([rng.random((6, 3, 16, 16)), np.ones((6, 3, 16, 16)) * rng.random((6, 3, 1, 1))])
    images = images.astype(np.float32)                                      # noise, then flat colours
    labels, feats = judge.judge(images)
    # by hand: CLIP's own preprocessing (resize to 8, normalise), projections, cosine, argmax
    pixels = judge.processor.image_processor(images=list(torch.from_numpy(images)), do_rescale=False,
                                             return_tensors="pt")["pixel_values"]
    tokens = judge.processor.tokenizer([f"a photo of {c}" for c in classes], return_tensors="pt", padding=True)
    with torch.no_grad():
        out_i = judge.model.get_image_features(pixel_values=pixels)
        out_t = judge.model.get_text_features(**tokens)
    f_i = out_i if isinstance(out_i, torch.Tensor) else out_i.pooler_output
    f_t = out_t if isinstance(out_t, torch.Tensor) else out_t.pooler_output
    cosine = (f_i @ f_t.T) / (f_i.norm(dim=1)[:, None] * f_t.norm(dim=1)[None])
    np.testing.assert_array_equal(labels, cosine.argmax(1).numpy())
    np.testing.assert_allclose(feats, f_i.numpy(), rtol=1e-5, atol=1e-6)
    assert pixels.shape == (12, 3, 8, 8) and len(set(labels.tolist())) > 1  # the judge is not constant here


def test_recorder_and_lora_targets_on_the_pipeline_transformer(pipeline_problem):
    model = pipeline_problem.transformer
    names = [n for n, _ in model.named_modules() if n.endswith(("attn.add_q_proj", "attn.add_k_proj"))]
    assert names == [f"transformer_blocks.{i}.attn.{p}" for i in range(2) for p in ("add_q_proj", "add_k_proj")]
    backbone = pipeline_problem.backbone
    x, t = pipeline_problem.eval_noise["concept"][:2], torch.tensor([0.4, 0.9])
    text = backbone.encode(pipeline_problem.eval_prompts["concept"][:2])
    expected = backbone.velocity(model, x, text, t)
    recorder = AttentionRecorder()
    processor = model.transformer_blocks[-1].attn.processor
    model.transformer_blocks[-1].attn.set_processor(recorder)
    try:
        torch.testing.assert_close(backbone.velocity(model, x, text, t), expected, atol=1e-5, rtol=1e-5)
    finally:
        model.transformer_blocks[-1].attn.set_processor(processor)
    assert recorder.probs.shape == (2, 2, 12 + 16, 12 + 16)  # text tokens first, then the 16 image tokens
    torch.testing.assert_close(recorder.probs.sum(-1), torch.ones(2, 2, 28))


def test_pipeline_problem_scores_the_original_with_no_drift(pipeline_problem):
    p = pipeline_problem
    assert p.concept_images.shape == (4, 16, 16) and p.templates == concept_erasure.PIPELINE_TEMPLATES
    assert p.preserve_labels.tolist() == [1, 1, 1, 2, 2, 2] and p.concept_class == 0 and np.isnan(p.classifier_accuracy)
    assert [len(v) for v in p.eval_prompts.values()] == [4, 4, 8, 6]
    s = score(p, ErasureResult(p.transformer))
    assert s["feature_fd"] == pytest.approx(0.0, abs=1e-6)  # same noise, same model: identical generations
    assert all(0.0 <= s[k] <= 1.0 for k in ("concept_rate", "synonym_rate", "shuffled_rate", "preserve_accuracy"))


def test_pipeline_config_takes_free_concepts_and_checks_them(tiny_pipeline_dir):
    ok = concept_erasure.Config(pipeline=tiny_pipeline_dir, concept="Van Gogh", synonyms=("vincent",),
                                preserve=("Monet",), irrelevant=("tree",))
    assert ok.concept == "Van Gogh"
    with pytest.raises(ValueError, match="unknown concept"):  # the tiny path keeps its vocabulary
        concept_erasure.Config(concept="Van Gogh")
    for bad in ({"preserve": ("cat",)}, {"synonyms": ("",)}, {"concept": "a {} b"}, {"pretrained": "x"},
                {"resolution": 24}, {"judge": ""}, {"preserve": ("dog", "dog")}):
        with pytest.raises(ValueError):
            concept_erasure.Config(**{**PIPELINE_SMALL, "pipeline": tiny_pipeline_dir, **bad})


def test_build_is_reproducible_from_the_task_seed(pipeline_problem, tiny_pipeline_dir, tiny_judge_dir):
    config = concept_erasure.Config(**PIPELINE_SMALL, pipeline=tiny_pipeline_dir, judge=tiny_judge_dir)
    again = concept_erasure.build(config, RunContext(0).for_task())
    torch.testing.assert_close(again.concept_images, pipeline_problem.concept_images)
    np.testing.assert_array_equal(again.reference_features, pipeline_problem.reference_features)
