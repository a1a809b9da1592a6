"""GPU check and benchmark of the Triton label-smoothed linear cross-entropy (one short script, < 2 min on an H200).

Spec shared/papers/label-smoothing-calibration.md §3.3–3.4. Needs CUDA and triton.
1. Correctness on CUDA: the Triton kernel against F.cross_entropy(e @ c.T, label_smoothing=β) in loss, ∂e and ∂c:
   float32 (TF32 off) to 1e-5 (absolute + relative), bfloat16 to 1e-2 against float32 on the same rounded inputs,
   for β ∈ {0, 0.1, 1}, reductions mean / sum / none, ignored tokens, sizes that are not multiples of the blocks.
   Any mismatch: the script exits with status 1.
2. Memory and speed at N = 8,192 tokens, hidden 1,024, V = 32,000 and 128,000 (bfloat16, the paper's benchmark
   dtype, and float32): peak CUDA memory of forward + backward above the inputs (torch.cuda.max_memory_allocated),
   and the median time of 5 steps, for torch's label-smoothed CE, the Triton kernel and the chunked torch version;
   prints the ratios torch / Triton.

    python benchmarks/gpu_label_smoothed_ce.py
"""

from __future__ import annotations

import statistics
import sys
import time

import torch
import torch.nn.functional as F

from methods.calibration._label_smoothed_ce import label_smoothed_ce

BETA = 0.1


def _inputs(n, v, d, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    hidden = torch.randn(n, d, device="cuda", generator=g).to(dtype).requires_grad_()
    weight = (torch.randn(v, d, device="cuda", generator=g) / d**0.5 * 2).to(dtype).requires_grad_()
    targets = torch.randint(v, (n,), device="cuda", generator=g)
    targets[::7] = -100
    return hidden, weight, targets


def _grads(loss, hidden, weight):
    upstream = torch.randn(loss.shape, device="cuda", generator=torch.Generator(device="cuda").manual_seed(1))
    return (loss, *torch.autograd.grad(loss, (hidden, weight), upstream.to(loss.dtype)))


def check_correctness() -> list[str]:
    failures = []
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 1e-2)):
        for n, v, d in ((1000, 5003, 256), (77, 300, 40)):
            for beta in (0.0, 0.1, 1.0):
                for reduction in ("mean", "sum", "none"):
                    hidden, weight, targets = _inputs(n, v, d, dtype)
                    ref_h = hidden.detach().float().requires_grad_()
                    ref_w = weight.detach().float().requires_grad_()
                    ref = _grads(F.cross_entropy(ref_h @ ref_w.T, targets, label_smoothing=beta, reduction=reduction),
                                 ref_h, ref_w)
                    ours = _grads(label_smoothed_ce(hidden, weight, targets, beta, reduction=reduction, impl="triton"),
                                  hidden, weight)
                    for name, a, b in zip(("loss", "d_hidden", "d_weight"), ours, ref, strict=True):
                        err = ((a.float() - b).abs() - tol * b.abs()).max().item()
                        if not err <= tol:
                            failures.append(f"{dtype} N={n} V={v} D={d} beta={beta} {reduction} {name}: "
                                            f"excess error {err:.3g} over {tol:g}")
    return failures


def measure(variant: str, n: int, v: int, d: int, dtype) -> tuple[float, float]:
    """(peak MB above the inputs, median seconds) of forward + backward."""
    hidden, weight, targets = _inputs(n, v, d, dtype)

    def step():
        hidden.grad = weight.grad = None
        if variant == "torch":
            loss = F.cross_entropy((hidden @ weight.T).float(), targets, label_smoothing=BETA)
        else:
            loss = label_smoothed_ce(hidden, weight, targets, BETA,
                                     impl="torch" if variant == "torch_chunked" else "triton")
        loss.backward()

    step()                                             # compile / warm up
    hidden.grad = weight.grad = None
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak = (torch.cuda.max_memory_allocated() - base) / 2**20
    times = []
    for _ in range(5):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    hidden = weight = targets = None  # free the GPU memory (the closure holds the same cells)
    torch.cuda.empty_cache()
    return peak, statistics.median(times)


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device: this script is for a GPU machine (the CPU numbers: label_smoothed_ce_memory.py)")
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}")
    start = time.perf_counter()
    failures = check_correctness()
    print(f"correctness: {'OK' if not failures else f'{len(failures)} MISMATCHES'} "
          f"({time.perf_counter() - start:.1f} s)")
    for line in failures[:20]:
        print("  " + line)
    n, d = 8192, 1024
    for dtype in (torch.bfloat16, torch.float32):
        for v in (32_000, 128_000):
            rows = {name: measure(name, n, v, d, dtype) for name in ("torch", "triton", "torch_chunked")}
            for name, (mb, s) in rows.items():
                print(f"{str(dtype):15s} N={n} V={v} D={d} {name:14s} peak +{mb:9.1f} MB  {s * 1e3:8.1f} ms")
            (t_mb, t_s), (k_mb, k_s) = rows["torch"], rows["triton"]
            print(f"{str(dtype):15s} V={v}: memory torch/triton = {t_mb / k_mb:.1f}x, "
                  f"time triton/torch = {k_s / t_s:.2f}x")
    print(f"total {time.perf_counter() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
