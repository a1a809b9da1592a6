"""The pinned float numerics (bench/numerics.py): the kernels held at AVX2, and a fingerprint that sees a change."""

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench.numerics import PINNED, X86_64, fingerprint, pin, torch_threads
from bench.toolkit.cache import cached_dir

X86 = platform.machine().lower() in X86_64
FINGERPRINT = "from bench.numerics import fingerprint; print(fingerprint(1))"


def _in_fresh_python(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in PINNED} | env
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_pin_sets_the_defaults_and_keeps_an_explicit_setting(monkeypatch):
    for name in PINNED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    pin()
    assert os.environ["ATEN_CPU_CAPABILITY"] == "avx2" and os.environ["ONEDNN_MAX_CPU_ISA"] == "AVX2"
    assert os.environ["MKL_CBWR"] == "COMPATIBLE"


def test_pin_leaves_other_architectures_alone(monkeypatch):
    for name in PINNED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    pin()
    assert not set(PINNED) & set(os.environ)


@pytest.mark.skipif(not X86, reason="the pins are x86-64 kernel choices")
def test_importing_bench_holds_torch_at_avx2_before_its_first_operation():
    code = "import torch, bench; torch.ones(2) @ torch.ones(2); print(torch.backends.cpu.get_cpu_capability())"
    assert _in_fresh_python(code) == "AVX2"


@pytest.mark.integration
def test_the_fingerprint_is_the_same_in_two_fresh_processes_and_here():
    fresh = _in_fresh_python("import bench; " + FINGERPRINT)
    assert fresh == _in_fresh_python("import bench; " + FINGERPRINT)
    if os.environ.get("ATEN_CPU_CAPABILITY", "avx2") == "avx2":  # this process is pinned as the fresh ones are
        assert fingerprint(1) == fresh


@pytest.mark.integration
@pytest.mark.skipif(not X86 or "avx512f" not in Path("/proc/cpuinfo").read_text(), reason="needs an AVX512 CPU")
def test_the_fingerprint_sees_torch_kernels_other_than_avx2():
    """On an AVX512 machine the unpinned kernels round differently: the fingerprint must tell them apart, or a lock
    from such a machine would be compared where its verdicts cannot be reproduced."""
    pinned = _in_fresh_python("import bench; " + FINGERPRINT)
    assert _in_fresh_python("import bench; " + FINGERPRINT, ATEN_CPU_CAPABILITY="avx512") != pinned
    assert _in_fresh_python("import bench; " + FINGERPRINT, ONEDNN_MAX_CPU_ISA="ALL") != pinned


def test_the_fingerprint_sees_the_thread_count():
    assert fingerprint(1) != fingerprint(2)


def test_torch_threads_restores_the_pools():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1 and os.environ["OMP_NUM_THREADS"] == "1"
    assert torch.get_num_threads() == before


def test_a_model_cached_under_other_numerics_is_built_again(tmp_path):
    """The cache key holds the numerics: a model trained on another thread count is not reused as this one."""
    built = []

    def build(path):
        built.append(torch.get_num_threads())
        (path / "model.txt").write_text("weights")

    with torch_threads(1):
        one = cached_dir(tmp_path, {"model": "tiny"}, build)
        assert cached_dir(tmp_path, {"model": "tiny"}, build) == one
    with torch_threads(2):
        two = cached_dir(tmp_path, {"model": "tiny"}, build)
    assert two != one and built == [1, 2]
