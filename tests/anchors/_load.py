"""Import an anchor script by its file name (slugs carry hyphens, so `import` cannot name them)."""

import importlib.util
from pathlib import Path

ANCHORS = Path(__file__).resolve().parents[2] / "benchmarks" / "anchors"


def anchor(slug: str):
    spec = importlib.util.spec_from_file_location(f"anchor_{slug.replace('-', '_')}", ANCHORS / f"{slug}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
