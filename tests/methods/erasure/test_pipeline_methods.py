"""The erasure methods on the pipeline path (a tiny FluxPipeline saved locally): each edits exactly the modules it
names on the real FluxTransformer2DModel, UCE's edit is its closed form on the pipeline's own T5 embeddings, and
the methods run on CUDA when there is one."""

import re

import numpy as np
import pytest
import torch

from bench.context import RunContext
from bench.registry import Registry
from methods.erasure import ca, eraseanything, esd, no_erasure, uce
from tasks.erasure import concept_erasure, score
from tests.tasks.erasure.conftest import PIPELINE_SMALL

EDITED = {  # method -> the weights it may change (dual-stream blocks' text-stream projections / the text projection)
    eraseanything: r"transformer_blocks\.\d+\.attn\.add_[qk]_proj\.weight",
    esd: r"transformer_blocks\.\d+\.attn\.(add_[qkv]_proj|to_add_out)\.(weight|bias)",
    ca: r"transformer_blocks\.\d+\.attn\.add_[kv]_proj\.(weight|bias)",
    uce: r"context_embedder\.weight",
}


def _changed(before: dict, model) -> list[str]:
    return [n for n, p in model.named_parameters() if not torch.equal(p, before[n])]


@pytest.mark.parametrize("module", list(EDITED))
def test_each_method_edits_only_its_modules_of_the_flux_transformer(pipeline_problem, module):
    before = {n: p.detach().clone() for n, p in pipeline_problem.transformer.named_parameters()}
    config = module.Config(**getattr(module, "SMOKE", {}))
    result = module.solve(pipeline_problem, config, RunContext(1))
    assert type(result.transformer) is type(pipeline_problem.transformer)
    assert not _changed(before, pipeline_problem.transformer)  # the problem's model is untouched
    changed = _changed(before, result.transformer)
    assert changed and all(re.fullmatch(EDITED[module], n) for n in changed), changed
    s = score(pipeline_problem, result)
    assert s["feature_fd"] > 0 and 0.0 <= s["concept_rate"] <= 1.0


def test_eraseanything_alternates_and_reads_multi_token_keywords(pipeline_problem):
    ctx = RunContext(0)
    eraseanything.solve(pipeline_problem, eraseanything.Config(iterations=4, synonym_p=1.0), ctx)
    assert [s for s, _ in ctx.curves["esd"]] == [0, 2] and [s for s, _ in ctx.curves["rscl"]] == [1, 3]
    assert all(np.isfinite(v) and v > 0 for _, v in ctx.curves["attn"])
    backbone = pipeline_problem.backbone  # a synonym of two T5 tokens gives two key columns
    assert len(backbone.keyword_tokens(["a", "photo", "of", "kitten"], [3])) == 2


def test_uce_is_the_closed_form_on_the_pipelines_t5_embeddings(pipeline_problem):
    pipe = pipeline_problem.backbone.pipe
    result = uce.solve(pipeline_problem, uce.Config(), RunContext(0))

    def rows(prompts):
        embeds, _, _ = pipe.encode_prompt(prompts, device="cpu", max_sequence_length=PIPELINE_SMALL["max_tokens"])
        return embeds.reshape(-1, embeds.shape[-1]).double().numpy()

    templates = pipeline_problem.templates
    expected = uce.closed_form(pipeline_problem.transformer.context_embedder.weight.double().numpy(),
                               rows([t.format("cat") for t in templates]), rows([t.format("<pad>") for t in templates]),
                               rows([t.format(w) for t in templates for w in ("dog", "car", "tree")]), 0.1, 1.0, 1 / 3)
    np.testing.assert_allclose(result.transformer.context_embedder.weight.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_every_erasure_method_runs_on_cpu_and_cuda():
    registry = Registry.discover()
    for name in ("eraseanything", "esd", "uce", "ca", "no_erasure"):
        assert set(registry.method(name).spec.hardware) == {"cpu", "cuda"}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("pipeline", [False, True])
def test_methods_run_on_cuda(tiny_pipeline_dir, tiny_judge_dir, tmp_path, pipeline):
    """The whole problem (models, noise, text embeddings) on ctx.device; bfloat16 for the pipeline."""
    if pipeline:
        config = concept_erasure.Config(**PIPELINE_SMALL, pipeline=tiny_pipeline_dir, judge=tiny_judge_dir)
    else:
        config = concept_erasure.Config(**concept_erasure.SMALLEST)
    problem = concept_erasure.build(config, RunContext(0, device="cuda", cache_root=tmp_path / "cache").for_task())
    assert problem.transformer.device.type == "cuda" and problem.eval_noise["concept"].device.type == "cuda"
    assert problem.transformer.dtype == (torch.bfloat16 if pipeline else torch.float32)
    for module in (eraseanything, esd, ca, uce, no_erasure):
        result = module.solve(problem, module.Config(**getattr(module, "SMOKE", {})), RunContext(1, device="cuda"))
        s = score(problem, result)
        assert np.isfinite(s["feature_fd"]) and 0.0 <= s["concept_rate"] <= 1.0
