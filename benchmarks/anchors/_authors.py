"""Shared by the side-by-side anchors: read the authors' definitions out of a checkout, compare, print.

An anchor runs the authors' own functions from a checkout that `fetch` brought (a work tree, e.g.
`git --git-dir=/work/.mirror/<owner>+<name>/repo worktree add /tmp/<name> HEAD`), given as `--authors PATH`.
Nothing of theirs is copied into the project: `definitions` parses their file at run time and executes only the
named top-level functions or class methods (their module imports, which pull in training stacks we do not install,
are skipped; the names those definitions need are passed in `namespace`).
"""

from __future__ import annotations

import argparse
import ast
import math
import statistics
from pathlib import Path
from types import SimpleNamespace


def parser(description: str) -> argparse.ArgumentParser:
    out = argparse.ArgumentParser(description=description)
    out.add_argument("--authors", required=True, help="a work tree of the authors' repository (see the docstring)")
    out.add_argument("--seeds", type=int, default=20, help="random inputs, one per seed (0 .. seeds-1)")
    return out


def source(root: str | Path, relpath: str) -> str:
    path = Path(root).expanduser() / relpath
    if not path.is_file():
        raise SystemExit(f"--authors {root}: {relpath} not found; pass a work tree of the authors' repository")
    return path.read_text(encoding="utf-8")


def definitions(text: str, names: list[str], namespace: dict, replace: dict[str, str] | None = None,
                label: str = "authors") -> SimpleNamespace:
    """Execute the named definitions of `text` ("func", "Class.method" or "outer.inner") in `namespace`;
    `replace` patches the source first (old -> new, each must occur), to run a variant of theirs (e.g. a slicing
    fix)."""
    for old, new in (replace or {}).items():
        if old not in text:
            raise SystemExit(f"{label}: expected {old!r} in their source; the release has changed")
        text = text.replace(old, new)
    tree = ast.parse(text)
    found = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = node
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):  # class methods, and functions nested in a function
            found.update({f"{node.name}.{item.name}": item for item in node.body if isinstance(item, ast.FunctionDef)})
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"{label}: no definition {', '.join(missing)} in their source")
    scope = dict(namespace)  # one scope: the definitions may call each other, as in their module
    for name in names:
        node = found[name]
        code = compile(ast.Module(body=[node], type_ignores=[]), f"<{label}:{name}>", "exec")
        exec(code, scope)  # noqa: S102 - the authors' function, read from the checkout named by --authors
    out = {name.split(".")[-1]: scope[found[name].name] for name in names}
    return SimpleNamespace(**out)


def interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and a normal 95 % interval of the mean (0-width for one value)."""
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return mean, mean - half, mean + half


def row(name: str, ours: list[float], theirs: list[float]) -> str:
    diff = [a - b for a, b in zip(ours, theirs, strict=True)]
    m, lo, hi = interval(diff)
    return (f"{name:44s} ours {statistics.fmean(ours):12.6g}  theirs {statistics.fmean(theirs):12.6g}  "
            f"diff {m:+.3g} [{lo:+.3g}, {hi:+.3g}]  max|diff| {max(abs(d) for d in diff):.3g}")


def statements(text: str, function: str, first: str, last: str, namespace: dict, label: str = "authors") -> dict:
    """Run the statements of their top-level `function` from the one whose source starts with `first` through the
    one starting with `last`, in a copy of `namespace` (the local variables they read); returns the new scope.
    For losses written inline in a long training function that needs a full model to run as a whole."""
    node = next((n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if node is None:
        raise SystemExit(f"{label}: no function {function} in their source")
    body, keep = node.body, []
    starts = [ast.get_source_segment(text, s) or "" for s in body]
    try:
        i = next(k for k, s in enumerate(starts) if s.startswith(first))
        j = next(k for k, s in enumerate(starts) if k >= i and s.startswith(last))
    except StopIteration:
        raise SystemExit(f"{label}: {function} has no statements {first!r} .. {last!r}; the release has changed") \
            from None
    keep = body[i:j + 1]
    scope = dict(namespace)
    exec(compile(ast.Module(body=keep, type_ignores=[]), f"<{label}:{function}>", "exec"), scope)  # noqa: S102
    return scope
