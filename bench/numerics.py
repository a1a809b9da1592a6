"""Floating-point numerics that do not depend on which x86-64 CPU computes them.

The tiny models' training is chaotic: one rounding difference in a reduction changes the trained π_SFT, every
sampled answer after it, and with them a borderline verdict. SimpleMix's CPU world reproduced from an empty cache
on CI's machine gave two verdicts other than this machine's (CI failed on it), and the same run with torch's
kernels held to AVX2 flipped three, one of them among CI's two (docs/papers/simplemix.md). The libraries pick
their kernels from the CPU they find, so the same code gives different bits on different machines:

* ATen's vectorised kernels (softmax, layer norm, GELU, reductions) by `ATEN_CPU_CAPABILITY` (AVX512 here);
* oneDNN's JIT kernels (convolutions) by `ONEDNN_MAX_CPU_ISA`;
* MKL's GEMM (every linear layer) by its code branch, held by `MKL_CBWR` (MKL's conditional numerical
  reproducibility: the same results on every processor that has the branch, for the same thread count).

`pin()` holds all three at AVX2, which every x86-64 CPU of the last decade has: this platform computes the same
bits on all of them, for the same number of threads (a reduction split over two threads adds in another order;
the verdict locks run every cell on one). An explicit setting is kept; other architectures are left alone. The
variables must be set before torch's first operation: `bench` calls `pin()` when it is imported.

`fingerprint()` hashes the weights after a few AdamW steps of a small conv + transformer model: equal
fingerprints mean equal float operations, so a verdict lock records its machine's and the lock test compares
verdicts only where they are equal (tests/leaderboard/test_verdict_lock.py). On an AVX512 Xeon, ATen at AVX512
instead of AVX2, oneDNN unpinned, or two threads instead of one each change it.

The pin does not make every vendor's CPU compute the same bits: on a 2-core AMD EPYC (2026-12-07) the pinned
fingerprint is eece09d528e6 and the scalar kernels' f91be4267110, where the Intel machines that made most locks give
da2511b176e6 and d777f2c48532 (which of ATen, oneDNN and MKL differs is not known). A lock made on one vendor is
therefore compared on the other as under other numerics: verdicts against the shown one, means as independent draws.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from contextlib import contextmanager
from functools import lru_cache

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "AVX2"}
X86_64 = ("x86_64", "amd64")


def pin() -> None:
    """Hold the kernel choice at AVX2 (x86-64 only); an explicit setting in the environment is kept."""
    if platform.machine().lower() in X86_64:
        for name, value in PINNED.items():
            os.environ.setdefault(name, value)


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def size_pools(threads: int):
    """torch's and the BLAS's pools at `threads`, and the thread variables for libraries loaded later and processes
    started after; torch is set only if loaded (a forked cell that never needs it does not pay its import). Returns
    threadpoolctl's limiter, whose restore_original_limits() undoes the BLAS part."""
    from threadpoolctl import threadpool_limits

    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    return threadpool_limits(threads)


@contextmanager
def torch_threads(threads: int | None):
    """`size_pools(threads)` for the block, then every pool and variable as it was; None changes nothing."""
    if threads is None:
        yield
        return
    import torch  # loaded first, so that its own pool is known and restored

    before, env = torch.get_num_threads(), {name: os.environ.get(name) for name in THREAD_VARIABLES}
    limiter = size_pools(threads)
    try:
        yield
    finally:
        limiter.restore_original_limits()
        torch.set_num_threads(before)
        for name, value in env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@lru_cache(maxsize=8)
def fingerprint(threads: int = 1) -> str:
    """12 hex digits of the weights of a conv + transformer model after 8 AdamW steps on `threads` threads."""
    import torch

    with torch_threads(threads), torch.random.fork_rng(devices=[]):
        generator = torch.Generator().manual_seed(0)
        images = torch.randn(64, 3, 12, 12, generator=generator)
        labels = torch.randint(0, 10, (64,), generator=generator)
        tokens = torch.randint(0, 97, (64, 16), generator=generator)
        torch.manual_seed(0)
        conv, embed = torch.nn.Conv2d(3, 8, 3), torch.nn.Embedding(97, 48)
        layer = torch.nn.TransformerEncoderLayer(48, 4, 96, dropout=0.0, batch_first=True)
        head = torch.nn.Linear(8 * 10 * 10 + 48, 10)
        params = [p for m in (conv, embed, layer, head) for p in m.parameters()]
        optimiser = torch.optim.AdamW(params, lr=1e-2)
        for _ in range(8):
            features = torch.cat([torch.nn.functional.gelu(conv(images)).flatten(1), layer(embed(tokens)).mean(1)], 1)
            loss = torch.nn.functional.cross_entropy(head(features), labels)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        return hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in params)).hexdigest()[:12]
