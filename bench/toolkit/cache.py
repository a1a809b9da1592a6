"""The cache of built artefacts (tiny models and their worlds): one directory per set of settings, written once.

`cached_dir(root, settings, build)`: `root/<prefix><hash>`, keyed by every setting that changes the artefact and
by this process's float numerics (`numerics_keyed`: a model trained where the kernels round differently is another
model), built into a temporary directory and renamed into place, so a crashed or concurrent build never leaves a
half-written model where a run would load it; what the build cost is kept beside it in `build.json` (read by
`bench reproduce --all` to report the share of a reproduction spent training tiny models).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Callable

import torch

from bench.numerics import fingerprint


def cache_key(settings: dict) -> str:
    """A short stable hash of every setting that changes a cached artefact."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]


def source_digest(*modules) -> str:
    """A short hash of the modules' source files: a cache key holding it forgets what older code computed (a cached
    result of a training loop, say), where a FORMAT constant would have to be bumped by hand."""
    digest = hashlib.sha256()
    for module in modules:
        digest.update(Path(module.__file__).read_bytes())
    return digest.hexdigest()[:16]


def numerics_keyed(settings: dict) -> dict:
    """`settings` with this process's float numerics (bench.numerics.fingerprint at its thread count): a model
    trained where the kernels round differently is another model, never reused as this one."""
    return {**settings, "numerics": fingerprint(torch.get_num_threads())}


def cached_dir(root: str | Path, settings: dict, build: Callable[[Path], None], prefix: str = "") -> Path:
    """`root/<prefix><hash of settings>`: built once by `build(tmp_dir)` into a temporary directory, then renamed.
    The key holds this process's float numerics too (`numerics_keyed`)."""
    settings = numerics_keyed(settings)
    root = Path(root).expanduser()
    final = root / f"{prefix}{cache_key(settings)}"
    if final.is_dir():
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".tmp-"))
    try:
        clock, cpu = time.perf_counter(), time.process_time()
        build(tmp)
        (tmp / "settings.json").write_text(json.dumps(settings, sort_keys=True, default=str))
        # not part of the key: what building it cost on this machine, and when it finished
        (tmp / "build.json").write_text(json.dumps({"seconds": time.perf_counter() - clock,
                                                    "cpu_seconds": time.process_time() - cpu,
                                                    "finished_at": time.time()}))
        os.replace(tmp, final)
    except OSError:
        if not final.is_dir():  # another process won the race: theirs is as good as ours
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
