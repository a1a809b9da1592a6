"""What a paper's verdicts depend on, as one digest: the lock records it, and CI compares each paper whose digest moved.

The inputs are the paper's claims file (its data: comments and layout aside), constraints.txt (the pinned
package versions), and the code of every module in the import closure of its methods and tasks (claims, controls and
switched-off cells) within the repository's bench/, methods/ and tasks/. Code is hashed as the interpreter sees it,
not as it is typed: the module's syntax tree without docstrings (comments never reach it), with each run of
consecutive import statements in sorted order, so a reworded docstring, a re-wrapped line or sorted imports never
send a paper to be compared again, while any change to what runs does.

Three core modules are left out: the registry, its static reader and the error types (bench/registry.py,
bench/static.py, bench/errors.py). They decide which module serves a name and how a refusal reads, never what a run
computes; a change there that served the wrong module or value fails the unit tiers on every family. The configs'
coercion (bench/configs.py), the numerics pin (bench/__init__.py, bench/numerics.py) and everything else a run
executes stay in.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
INPUT_PACKAGES = ("bench", "methods", "tasks")
NOT_INPUTS = frozenset({"bench.registry", "bench.static", "bench.errors"})


def digest(files: set[Path]) -> str:
    """sha256 (first 16 hex digits) over the files in path order: each one's repository path, then its content (a
    .py file's code by `normalized`, a YAML file's data, any other file's bytes)."""
    out = hashlib.sha256()
    for path in sorted(files):
        if path.is_file():
            out.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name).encode())
            out.update(_content(path))
    return out.hexdigest()[:16]


def _content(path: Path) -> bytes:
    if path.suffix == ".py":
        return normalized(path.read_text(encoding="utf-8")).encode()
    if path.suffix in (".yaml", ".yml"):   # a claims file: its data, not its comments or layout
        return json.dumps(yaml.safe_load(path.read_text(encoding="utf-8")), sort_keys=True, default=str).encode()
    return path.read_bytes()


def closure(modules: set[str]) -> set[Path]:
    """The files of `modules` and of every repository module they import, transitively (imports inside functions
    count; a package's __init__ counts for each module under it), within INPUT_PACKAGES and outside NOT_INPUTS."""
    files: set[Path] = set()
    todo = list(modules)
    while todo:
        path = module_file(todo.pop())
        if path is None or path in files:
            continue
        files.add(path)
        todo.extend(imports(path))
    return files


def normalized(source: str) -> str:
    """The code of a module as its runs see it: the syntax tree without docstrings, each run of consecutive imports
    sorted one name per import, dumped without line numbers."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and _is_docstring(body[0])):
            node.body = body[1:] or [ast.Pass()]
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                setattr(node, name, _imports_sorted(statements))
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def module_file(module: str) -> Path | None:
    if module.split(".")[0] not in INPUT_PACKAGES or module in NOT_INPUTS:
        return None
    base = ROOT.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def import_statements(path: Path, root: Path = ROOT) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) of every import statement of a file, at any depth (imports inside functions count); a
    relative import resolved against the file's package; `names` empty for `import a.b`."""
    name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[:len(package) - node.level + 1], *([base] if base else [])])
            out.append((node.lineno, base, tuple(alias.name for alias in node.names)))
    return out


def imports(path: Path) -> list[str]:
    """The modules a file imports, `from a import b` also as a.b, with the packages on their way (a package's
    __init__ runs first)."""
    out = []
    for _, base, names in import_statements(path):
        for name in [base, *(f"{base}.{n}" for n in names)]:
            parts = name.split(".")
            out += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return out


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _imports_sorted(statements: list[ast.stmt]) -> list[ast.stmt]:
    """Each run of consecutive imports as one import per name, in sorted order: `from m import a, b` and two
    separate `from m import` lines are the same code."""
    out: list[ast.stmt] = []
    run: list[ast.stmt] = []
    for statement in [*statements, None]:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            run += [_one_name(statement, alias) for alias in statement.names]
            continue
        out += sorted(run, key=ast.dump)
        run = []
        if statement is not None:
            out.append(statement)
    return out


def _one_name(statement: ast.Import | ast.ImportFrom, alias: ast.alias) -> ast.stmt:
    if isinstance(statement, ast.Import):
        return ast.Import(names=[alias])
    return ast.ImportFrom(module=statement.module, names=[alias], level=statement.level)
