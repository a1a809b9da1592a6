"""LoRA through peft (base weights untouched, merge = W + (α/r) B A) and UCE's closed form (a least-squares solve)."""

import numpy as np
import pytest
import torch

from bench.context import RunContext
from bench.toolkit.training import seeded
from methods.erasure import uce
from methods.erasure._common import add_lora, merge
from tasks.erasure import score
from tasks.erasure._flux import make_transformer, velocity


def _model():
    with seeded(0, device=None):
        return make_transformer(2, 1, 4, 16)


def test_lora_trains_only_the_adapter_and_merges_to_base_plus_low_rank():
    base = _model()
    originals = {n: p.detach().clone() for n, p in base.named_parameters()}
    peft_model = add_lora(base, rank=4, alpha=8.0, modules=("add_q_proj", "add_k_proj"),
                          generator=torch.Generator().manual_seed(0))
    trainable = [n for n, p in peft_model.named_parameters() if p.requires_grad]
    assert len(trainable) == 2 * 2 * 2 and all("lora_" in n and ".attn.add_" in n for n in trainable)
    x, text, t = torch.randn(3, 16, 4), torch.randn(3, 8, 32), torch.rand(3)
    torch.testing.assert_close(velocity(peft_model, x, text, t), velocity(base, x, text, t))  # B = 0 at init
    optimiser = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(5):
        optimiser.zero_grad()
        velocity(peft_model, x, text, t).square().mean().backward()
        optimiser.step()
    inner = peft_model.get_base_model()
    for name, param in inner.named_parameters():
        if "lora_" not in name:  # every base weight, adapted layers' included, is as it was
            assert torch.equal(param, originals[name.replace(".base_layer", "")]), name
    lora_out = velocity(peft_model, x, text, t)
    expected = {}
    for i, block in enumerate(inner.transformer_blocks):
        for proj in ("add_q_proj", "add_k_proj"):
            layer = getattr(block.attn, proj)
            delta = layer.lora_B["default"].weight @ layer.lora_A["default"].weight
            assert delta.abs().max() > 0
            expected[f"transformer_blocks.{i}.attn.{proj}.weight"] = originals[
                f"transformer_blocks.{i}.attn.{proj}.weight"] + (8.0 / 4) * delta
    merged = merge(peft_model)
    params = dict(merged.named_parameters())
    for name, value in expected.items():
        torch.testing.assert_close(params[name], value.detach(), atol=1e-6, rtol=1e-6)
    for name, value in originals.items():
        if name not in expected:
            assert torch.equal(params[name], value), name
    torch.testing.assert_close(velocity(merged, x, text, t), lora_out.detach(), atol=1e-5, rtol=1e-5)
    for name, value in base.named_parameters():  # the problem's model itself is never touched
        assert torch.equal(value, originals[name])


@pytest.mark.parametrize("seed", range(3))
def test_uce_closed_form_is_the_least_squares_solution(seed):
    """W' minimises s_e Σ‖W'c_e − W c*_e‖² + s_p Σ‖W'c_p − W c_p‖² + λ‖W' − W‖²: stack and solve with lstsq."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((6, 4))
    erase, guide, keep = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    lamb, s_e, s_p = 0.1, 1.0, 0.3
    ours = uce.closed_form(w, erase, guide, keep, lamb, s_e, s_p)
    design = np.vstack([np.sqrt(s_e) * erase, np.sqrt(s_p) * keep, np.sqrt(lamb) * np.eye(4)])  # rows: inputs
    targets = np.vstack([np.sqrt(s_e) * guide @ w.T, np.sqrt(s_p) * keep @ w.T, np.sqrt(lamb) * w.T])
    reference = np.linalg.lstsq(design, targets, rcond=None)[0].T
    np.testing.assert_allclose(ours, reference, atol=1e-10)


def test_uce_without_preservation_maps_the_concept_onto_its_guide():
    """With λ → 0 and fewer erase vectors than dimensions, W' c_e = W c*_e exactly."""
    rng = np.random.default_rng(3)
    w, erase, guide = rng.standard_normal((5, 8)), rng.standard_normal((3, 8)), rng.standard_normal((3, 8))
    edited = uce.closed_form(w, erase, guide, np.zeros((0, 8)), 1e-9, 1.0, 0.0)
    np.testing.assert_allclose(erase @ edited.T, guide @ w.T, atol=1e-6)


def test_uce_edits_only_the_text_projection(small_problem):
    result = uce.solve(small_problem, uce.Config(), RunContext(0))
    changed = [n for (n, a), b in zip(result.transformer.named_parameters(), small_problem.transformer.parameters(),
                                      strict=True)
               if not torch.equal(a, b)]
    assert changed == ["context_embedder.weight"]
    assert set(score(small_problem, result)) >= {"concept_rate", "feature_fd"}


def test_uce_config_is_validated():
    with pytest.raises(ValueError, match="lamb"):
        uce.Config(lamb=0.0)
