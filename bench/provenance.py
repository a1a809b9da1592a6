"""Where a run was computed: git sha and dirty flag (the driver's), Python and package versions, CPU, GPU, host
(the process that ran the cell's).

Nothing here imports a heavy library: the GPU is read from torch only if the run already
imported it, else from `nvidia-smi` when present.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import socket
import subprocess
import sys
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

TRACKED_PACKAGES = (
    "icml2025-bench", "numpy", "scipy", "SQLAlchemy", "alembic", "torch", "transformers",
    "datasets", "ray", "streamlit", "causal-learn", "lingam", "peft", "diffusers", "cvxpy",
)
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_state(exclude: tuple[str, ...] = ()) -> tuple[str | None, bool | None]:
    """(HEAD, whether tracked files differ from it), ignoring the `exclude` paths (a command's own outputs)."""
    sha = _git("rev-parse", "HEAD")
    if sha is None:
        return None, None
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".", *(f":(exclude){p}" for p in exclude))
    return sha, bool(status)


def package_versions() -> dict[str, str]:
    found = {}
    for name in TRACKED_PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_info() -> tuple[str | None, str | None]:
    """(GPU names, CUDA version) or (None, None) on a machine without one."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        return names, torch.version.cuda
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return None, None
        names = ", ".join(line.strip() for line in out.stdout.splitlines() if line.strip())
        return names or None, None
    return None, None


@lru_cache(maxsize=1)
def _machine() -> dict:
    gpu, cuda = gpu_info()
    return {"python": platform.python_version(), "packages": package_versions(), "cpu": cpu_model(), "gpu": gpu,
            "cuda": cuda, "host": socket.gethostname()}


def machine() -> dict:
    """The process's machine: Python and package versions, CPU, GPU, host. Read once per process (execute()
    records it with every run, so a Ray worker's run names the worker's machine, not the driver's); a forked
    cell inherits its driver's reading. A copy: the cached reading is never changed by a caller."""
    reading = _machine()
    return {**reading, "packages": dict(reading["packages"])}


def collect(where: dict | None = None) -> dict:
    """The environment row of a run: this driver's git state and `where` it ran (default: this process)."""
    sha, dirty = git_state()
    env = {"git_sha": sha, "git_dirty": dirty, **(where if where is not None else machine())}
    env["fingerprint"] = hashlib.sha256(json.dumps(env, sort_keys=True).encode()).hexdigest()
    return env
