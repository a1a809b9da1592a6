"""Peak CPU memory and time of label_smoothed_ce (chunked torch) against torch's label-smoothed cross-entropy.

Spec shared/papers/label-smoothing-calibration.md §3.3–3.4 (the paper's kernel benchmark: its `baseline` is
`F.cross_entropy(e @ c.T, label_smoothing=β)`). Each variant runs forward + backward (gradients for the hidden
states and the classifier) in a fresh subprocess; its peak memory is ru_maxrss after the step minus ru_maxrss
once the inputs are allocated (tracemalloc does not see torch's allocations). Both variants hold the same
inputs and the same gradients (N·D + V·D floats); the difference is the N × V logits and their softmax/gradient.

    flock /tmp/bench-cpu.lock .venv/bin/python benchmarks/label_smoothed_ce_memory.py [--vocab 32000 128000]

Prints one line per (V, variant) and the ratios baseline / kernel (target: ≥ 10x less memory).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def child(variant: str, n: int, v: int, d: int, beta: float) -> None:
    import torch
    import torch.nn.functional as F

    from methods.calibration._label_smoothed_ce import label_smoothed_ce

    torch.manual_seed(0)
    hidden = torch.randn(n, d).requires_grad_()
    weight = (torch.randn(v, d) / d**0.5).requires_grad_()
    targets = torch.randint(v, (n,))
    targets[::10] = -100
    small = (torch.randn(64, d), torch.randn(64, d))      # warm up matmul / autograd machinery off the books
    (small[0] @ small[1].T).sum()
    base = _maxrss_mb()
    start = time.perf_counter()
    if variant == "torch":
        loss = F.cross_entropy(hidden @ weight.T, targets, label_smoothing=beta)
    else:
        loss = label_smoothed_ce(hidden, weight, targets, beta, impl="torch")
    loss.backward()
    seconds = time.perf_counter() - start
    print(json.dumps({"peak_mb": _maxrss_mb() - base, "seconds": seconds, "loss": float(loss)}))


def run(variant: str, n: int, v: int, d: int, beta: float) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", variant, "--tokens", str(n), "--vocab", str(v),
                          "--hidden", str(d), "--beta", str(beta)], capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--vocab", type=int, nargs="+", default=[32_000, 128_000])
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--child", choices=("torch", "kernel"))
    args = parser.parse_args()
    if args.child:
        child(args.child, args.tokens, args.vocab[0], args.hidden, args.beta)
        return
    n, d = args.tokens, args.hidden
    for v in args.vocab:
        logits_mb = n * v * 4 / 2**20
        results = {name: run(name, n, v, d, args.beta) for name in ("kernel", "torch")}
        for name, r in results.items():
            print(f"N={n} V={v} D={d} {name:6s} " + (f"peak +{r['peak_mb']:.0f} MB  {r['seconds']:.2f} s  "
                                                     f"loss {r['loss']:.6f}" if "error" not in r else r["error"]))
        if all("error" not in r for r in results.values()):
            k, t = results["kernel"], results["torch"]
            print(f"N={n} V={v}: memory torch/kernel = {t['peak_mb'] / k['peak_mb']:.1f}x (fp32 logits alone "
                  f"{logits_mb:.0f} MB); time kernel/torch = {k['seconds'] / t['seconds']:.2f}x; "
                  f"|loss diff| = {abs(k['loss'] - t['loss']):.2e}")


if __name__ == "__main__":
    main()
