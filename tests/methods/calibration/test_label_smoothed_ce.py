"""label_smoothed_ce (chunked torch and Triton-interpreted) against F.cross_entropy(label_smoothing=β) and a closed
form."""

import importlib
import importlib.util
import math
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from methods.calibration._label_smoothed_ce import label_smoothed_ce, label_smoothed_ce_torch

BETAS = (0.0, 0.1, 0.5, 1.0)
REDUCTIONS = ("mean", "sum", "none")


def _inputs(n, v, d, dtype=torch.float32, seed=0, ignored_every=5):
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(n, d, generator=g, dtype=torch.float64)
    weight = torch.randn(v, d, generator=g, dtype=torch.float64) / math.sqrt(d) * 2.0   # logits of std ≈ 2
    targets = torch.randint(v, (n,), generator=g)
    if ignored_every:
        targets[::ignored_every] = -100
    return hidden.to(dtype).requires_grad_(), weight.to(dtype).requires_grad_(), targets


def _loss_and_grads(fn, hidden, weight, targets, reduction, seed=1):
    loss = fn(hidden, weight, targets)
    upstream = torch.randn(loss.shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    d_hidden, d_weight = torch.autograd.grad(loss, (hidden, weight), upstream.to(loss.dtype))
    return loss, d_hidden, d_weight


def _compare(impl_fn, n, v, d, beta, reduction, dtype, atol, rtol=0.0, ref_dtype=None):
    hidden, weight, targets = _inputs(n, v, d, dtype)
    ref_h = hidden.detach().to(ref_dtype or dtype).requires_grad_()
    ref_w = weight.detach().to(ref_dtype or dtype).requires_grad_()
    ref = _loss_and_grads(lambda h, w, t: F.cross_entropy(h @ w.T, t, label_smoothing=beta, reduction=reduction),
                          ref_h, ref_w, targets, reduction)
    ours = _loss_and_grads(lambda h, w, t: impl_fn(h, w, t, beta, reduction), hidden, weight, targets, reduction)
    for name, a, b in zip(("loss", "d_hidden", "d_weight"), ours, ref, strict=True):
        torch.testing.assert_close(a.to(b.dtype), b, atol=atol, rtol=rtol, msg=lambda m, name=name: f"{name}: {m}")


def _torch_impl(chunk):
    return lambda h, w, t, beta, red: label_smoothed_ce(h, w, t, beta, reduction=red, impl="torch", chunk_size=chunk)


@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_torch_version_equals_cross_entropy_float32(beta, reduction):
    # V = 1000 is not a multiple of the chunk (96); N = 77 tokens, every 5th ignored
    # 1e-5 absolute, and relative for the summed loss (~500: float32's own rounding there is ~3e-5)
    _compare(_torch_impl(96), 77, 1000, 48, beta, reduction, torch.float32, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("beta", BETAS)
def test_torch_version_float64_is_exact(beta):
    _compare(_torch_impl(7), 33, 50, 8, beta, "mean", torch.float64, atol=1e-12)


def test_torch_version_default_chunk_at_a_larger_size():
    # default chunk: N·K ≈ 4M elements, so V = 32,000 at N = 512 runs in 4 chunks
    _compare(lambda h, w, t, beta, red: label_smoothed_ce_torch(h, w, t, beta, reduction=red),
             512, 32_000, 32, 0.1, "mean", torch.float32, atol=1e-5, rtol=1e-5)


def test_torch_version_bfloat16_within_cce_tolerance():
    # bf16 inputs, float32 accumulation; the reference is float32 on the same (rounded) values
    _compare(_torch_impl(64), 64, 500, 32, 0.1, "mean", torch.bfloat16, atol=1e-2, ref_dtype=torch.float32)


def test_closed_form_and_the_smoothing_sign():
    # hidden = e_1, so the logits are the first column of C: z = (0, ln 2, ln 3), softmax = (1, 2, 3)/6
    hidden = torch.tensor([[1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    weight = torch.tensor([[0.0, 5.0], [math.log(2), -1.0], [math.log(3), 2.0]], dtype=torch.float64,
                          requires_grad=True)
    beta = 0.3
    loss = label_smoothed_ce(hidden, weight, torch.tensor([2]), beta, chunk_size=2)
    # ℓ = lse − (1 − β) z_y − (β/V) Σ z = ln 6 − 0.7 ln 3 − 0.1 (ln 2 + ln 3)
    assert loss.item() == pytest.approx(math.log(6) - 0.8 * math.log(3) - 0.1 * math.log(2), abs=1e-14)
    (d_weight,) = torch.autograd.grad(loss, weight)
    # ∂ℓ/∂z = softmax − (1 − β) onehot − β/V = (1/6 − 0.1, 2/6 − 0.1, 3/6 − 0.8); it sums to 0 (the target's
    # coefficient is 1 − β + β/V; the fused kernel's 1 − β − β/V would leave 2β/V)
    expected = torch.tensor([1 / 6 - 0.1, 2 / 6 - 0.1, 3 / 6 - 0.8], dtype=torch.float64)
    torch.testing.assert_close(d_weight[:, 0], expected, atol=1e-14, rtol=0)
    assert d_weight[:, 1].abs().max() == 0.0 and abs(d_weight[:, 0].sum().item()) < 1e-14


def test_frozen_classifier_and_all_ignored_tokens():
    hidden, weight, targets = _inputs(20, 40, 8)
    weight = weight.detach()
    (d_hidden,) = torch.autograd.grad(label_smoothed_ce(hidden, weight, targets, 0.1, chunk_size=16), hidden)
    (ref,) = torch.autograd.grad(F.cross_entropy(hidden @ weight.T, targets, label_smoothing=0.1), hidden)
    torch.testing.assert_close(d_hidden, ref, atol=1e-6, rtol=0)
    none = torch.full((20,), -100)
    assert torch.isnan(label_smoothed_ce(hidden, weight, none, 0.1)).item()          # 0/0, as torch gives
    assert label_smoothed_ce(hidden, weight, none, 0.1, reduction="sum").item() == 0.0


@pytest.mark.parametrize("kwargs,match", [({"beta": 1.5}, "beta"), ({"reduction": "avg"}, "reduction"),
                                          ({"impl": "cuda"}, "impl")])
def test_bad_arguments_are_named(kwargs, match):
    hidden, weight, targets = _inputs(4, 10, 8)
    with pytest.raises(ValueError, match=match):
        label_smoothed_ce(hidden, weight, targets, **kwargs)
    with pytest.raises(ValueError, match="weight \\(V, D\\)"):
        label_smoothed_ce(hidden, weight[:, :3], targets)  # D mismatch


# ---- the Triton kernel, on the CPU through the interpreter (tiny shapes: it is slow) ------------------------

# triton reads TRITON_INTERPRET when it is imported (its own @triton.jit library) and at each launch; torch or
# transformers may import triton earlier in a test session, so on a CPU these tests run in a fresh process
# with TRITON_INTERPRET=1 set from the start (DIRECT there, or on a CUDA machine).
DIRECT = torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1"


@pytest.fixture(scope="module")
def triton_kernel():
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed (pip install triton): the Triton kernel is untested here")
    if not DIRECT:
        pytest.skip("runs in a fresh TRITON_INTERPRET=1 process (test_triton_kernel_in_the_interpreter)")
    return importlib.import_module("methods.calibration._label_smoothed_ce_triton").label_smoothed_ce_triton


def test_triton_kernel_in_the_interpreter():
    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton is not installed (pip install triton): the Triton kernel is untested here")
    if DIRECT:
        pytest.skip("the Triton tests run directly in this process")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                          "triton_kernel_equals or triton_kernel_rejects"],
                         capture_output=True, text=True, env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=300)
    assert run.returncode == 0 and "13 passed" in run.stdout and "skipped" not in run.stdout, run.stdout[-3000:]


def _on_device(fn):
    device = "cuda" if torch.cuda.is_available() else "cpu"

    def run(h, w, t, beta, red):
        return fn(h.to(device), w.to(device), t.to(device), beta, reduction=red, blocks=(16, 32, 16)).cpu()
    return run


@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_triton_kernel_equals_cross_entropy(triton_kernel, beta, reduction):
    # N = 37 and V = 83 are not multiples of the blocks; D = 24 is not a multiple of BLOCK_D
    _compare(_on_device(triton_kernel), 37, 83, 24, beta, reduction, torch.float32, atol=1e-5, rtol=1e-5)


def test_triton_kernel_rejects_float64(triton_kernel):
    hidden, weight, targets = _inputs(4, 10, 8, torch.float64)
    with pytest.raises(ValueError, match="float32"):
        triton_kernel(hidden, weight, targets, 0.1)
