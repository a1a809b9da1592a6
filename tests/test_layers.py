"""Dependencies flow one way, and no modules import each other in a circle: the import contract of the packages,
checked on the source of every module.

From the bottom up:
  bench (the core: registry, cells, configs, store, execute, the toolkit)
  tasks.<family>        the core and its own family
  methods.<family>      the core, its family's task contract (tasks.<family>, never a private tasks.<family>._x),
                        its family's shared helpers (methods.<family>._x), never another method
  runners               the core
  leaderboard           the core and the runners; inside it, from the bottom up: the SQL aggregations (queries) and
                        the lock inputs' digest, the claims package, what verdicts become (locks, exports, cards,
                        plots), the web app (LEADERBOARD_LAYERS; the claims package's own order: CLAIMS_LAYERS)
  app                   anything (the CLI and Ray job submission)
Families are independent of one another. Imports inside functions count as much as those at the top; the one
exemption is the core's `python -m bench` shim (bench/__main__.py), which is only ever run.

A circle is a set of modules each of which imports, directly or through the others, every other one. Importing a
module runs its package's __init__ first, so an import of pkg.sub from outside pkg also counts as an import of pkg:
a package whose __init__ imports (through any module) the importer is a circle too.
"""

import sys
from pathlib import Path

import pytest

from leaderboard.inputs import import_statements

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bench", "tasks", "methods", "runners", "leaderboard", "app")
ALLOWED = {"bench": {"bench"}, "tasks": {"bench", "tasks"}, "methods": {"bench", "tasks", "methods"},
           "runners": {"bench", "runners"}, "leaderboard": {"bench", "runners", "leaderboard"}, "app": set(PACKAGES)}
ENTRY_SHIMS = {"bench.__main__"}
LEADERBOARD_LAYERS = (("queries", "inputs"), ("claims",),
                      ("lock", "reproduction", "export", "verdict_export", "plots", "cards"),
                      ("ui", "streamlit_server", "app"))
CLAIMS_LAYERS = (("parsed",), ("model", "statistics"), ("judge", "switched"), ("verdict", "cells"), ("stored",),
                 ("validate", "claim_judge", "cost", "reference"), ("load", "evaluate"), ("markers", "overview"))
WITHIN = {"leaderboard": LEADERBOARD_LAYERS, "leaderboard.claims": CLAIMS_LAYERS}


def module_name(path: Path, root: Path = ROOT) -> str:
    name = ".".join(path.relative_to(root).with_suffix("").parts)
    return name.removesuffix(".__init__")


def sources(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> list[Path]:
    return sorted(p for package in packages for p in (root / package).rglob("*.py"))


def imported(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, module) of every import of the repository's packages, `from a import b` also as a.b."""
    out = []
    for line, base, names in import_statements(path, root):
        out += [(line, base)] + [(line, f"{base}.{n}") for n in names]
    return [(line, name) for line, name in out if name.split(".")[0] in PACKAGES]


def import_graph(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES,
                 skip: set[str] = ENTRY_SHIMS) -> dict[str, dict[str, int]]:
    """{module: {module it imports: line}} over the modules of `packages`: `from a import b` is an import of a.b when
    that is a module, else of a; an import of pkg.x from outside pkg is an import of pkg too (its __init__ runs)."""
    files = {module_name(p, root): p for p in sources(root, packages)}
    inits = {name for name, p in files.items() if p.name == "__init__.py"}
    graph: dict[str, dict[str, int]] = {name: {} for name in files if name not in skip}
    for importer, edges in graph.items():
        for line, base, names in import_statements(files[importer], root):
            modules = [f"{base}.{n}" for n in names if f"{base}.{n}" in files]
            if base in files and len(modules) < len(names or (None,)):
                modules.append(base)
            for target in modules:
                parts = target.split(".")
                parents = {".".join(parts[:i]) for i in range(1, len(parts))} & inits
                for module in {target} | {p for p in parents if not (importer + ".").startswith(p + ".")}:
                    if module != importer:
                        edges.setdefault(module, line)
    return graph


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected sets of two modules or more (Tarjan 1972), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(members) > 1:
                found.append(sorted(members))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def ties(circle: list[str], graph: dict[str, dict[str, int]]) -> str:
    """A circle's imports, `a:line -> b`, one a line."""
    return "\n".join(f"  {a}:{graph[a][b]} -> {b}" for a in circle for b in sorted(graph[a]) if b in circle)


def _layer(importer: str, target: str) -> str | None:
    """Why `importer` may not import `target` by the layers inside a package (WITHIN), None when it may."""
    for package, layers in WITHIN.items():
        prefix = package + "."
        if not (importer.startswith(prefix) and target.startswith(prefix)):
            continue
        a, b = importer[len(prefix):].split(".")[0], target[len(prefix):].split(".")[0]
        if a == b:  # inside one module or subpackage: its own layers, if any, are the next entry of WITHIN
            continue
        place = {name: i for i, layer in enumerate(layers) for name in layer}
        for name in (a, b):
            if name not in place:
                return f"{package}.{name} has no layer: place it in the layers of {package} (tests/test_layers.py)"
        if place[b] > place[a]:
            return f"{package}.{a} sits below {package}.{b}"
    return None


def violation(importer: str, target: str) -> str | None:
    """Why `importer` may not import `target` (None: it may)."""
    top, parts = importer.split(".")[0], target.split(".")
    if parts[0] not in ALLOWED[top]:
        return f"{top} sits below {parts[0]}"
    if top in ("tasks", "methods") and parts[0] in ("tasks", "methods") and len(parts) > 1:
        family = importer.split(".")[1]
        if parts[1] != family:
            return f"families are independent ({family} imports {parts[1]})"
        if top == "methods" and parts[0] == "tasks" and len(parts) > 2 and parts[2].startswith("_"):
            return "a method uses its family's contract (tasks.<family>), not a private task module"
        if top == "methods" and parts[0] == "methods" and len(parts) > 2 and not parts[2].startswith("_"):
            own = importer.split(".")[2] if importer.count(".") >= 2 else None
            if parts[2] != own and (ROOT / "methods" / family / f"{parts[2]}.py").is_file():
                return "a method imports no other method: shared code lives in methods.<family>._helpers"
    return _layer(importer, target)


def test_every_package_is_covered():
    assert {p.relative_to(ROOT).parts[0] for p in sources()} == set(PACKAGES)
    assert len(sources()) > 200


def test_dependencies_flow_one_way():
    found = []
    for path in sources():
        importer = module_name(path)
        if importer in ENTRY_SHIMS:
            continue
        for line, target in imported(path):
            why = violation(importer, target)
            if why:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {target}: {why}")
    assert found == [], "\n".join(found)


def test_no_modules_import_each_other_in_a_circle():
    graph = import_graph()
    assert len(graph) > 200
    found = circles(graph)
    assert found == [], "\n".join(f"circle of {len(c)}:\n{ties(c, graph)}" for c in found)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_checker_finds_a_planted_circle_even_behind_an_import_inside_a_function(tmp_path):
    """pkg.a imports pkg.b at the top; pkg.b imports pkg.a only inside a function: a circle of two. pkg.c imports
    pkg.sub.d, and pkg.sub's __init__ imports pkg.c back (relatively): a circle through a package's __init__."""
    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import g\n\n\ndef f():\n    return g()\n",
                     "pkg/b.py": "def g():\n    from pkg import a\n\n    return a\n",
                     "pkg/c.py": "from pkg.sub.d import h\n", "pkg/sub/__init__.py": "from .. import c\n",
                     "pkg/sub/d.py": "h = 1\n", "pkg/e.py": "import pkg.a\n"})
    graph = import_graph(tmp_path, ("pkg",), set())
    assert circles(graph) == [["pkg.a", "pkg.b"], ["pkg.c", "pkg.sub"]]
    assert ties(["pkg.a", "pkg.b"], graph) == "  pkg.a:1 -> pkg.b\n  pkg.b:2 -> pkg.a"
    assert graph["pkg.e"] == {"pkg.a": 1}  # an import of the package's own child: its __init__ already runs


def test_a_tree_in_layers_has_no_circle(tmp_path):
    """The same package with the function's import removed and pkg.sub's __init__ re-exporting its own module."""
    _tree(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import g\n", "pkg/b.py": "def g():\n    pass\n",
                     "pkg/c.py": "from pkg.sub.d import h\n", "pkg/sub/__init__.py": "from pkg.sub.d import h\n",
                     "pkg/sub/d.py": "h = 1\n"})
    graph = import_graph(tmp_path, ("pkg",), set())
    assert circles(graph) == []
    assert graph["pkg.c"] == {"pkg.sub.d": 1, "pkg.sub": 1} and graph["pkg.sub"] == {"pkg.sub.d": 1}


@pytest.mark.parametrize("importer, target, why", [
    ("bench.store", "leaderboard.claims", "bench sits below leaderboard"),
    ("runners.local", "leaderboard.lock", "runners sits below leaderboard"),
    ("tasks.causal.sachs", "methods.causal.pc", "tasks sits below methods"),
    ("tasks.causal.sachs", "tasks.cmdp", "families are independent"),
    ("methods.preference.ipo", "methods.preference.dpo", "a method imports no other method"),
    ("methods.preference.ipo", "tasks.preference._bandit", "not a private task module"),
    ("methods.causal.pc", "tasks.performative", "families are independent"),
    ("leaderboard.queries", "leaderboard.claims", "leaderboard.queries sits below leaderboard.claims"),
    ("leaderboard.claims.overview", "leaderboard.lock", "leaderboard.claims sits below leaderboard.lock"),
    ("leaderboard.claims.model", "leaderboard.claims.judge", "leaderboard.claims.model sits below"),
    ("leaderboard.claims.judge", "leaderboard.claims.evaluate", "claims.judge sits below leaderboard.claims.evaluate"),
    ("leaderboard.lock", "leaderboard.ui.paper", "leaderboard.lock sits below leaderboard.ui"),
    ("leaderboard.cards", "leaderboard.newcomer", "leaderboard.newcomer has no layer"),
])
def test_the_contract_refuses(importer, target, why):
    assert why in (violation(importer, target) or "")


@pytest.mark.parametrize("importer, target", [
    ("methods.preference.ipo", "methods.preference._bandit"), ("methods.preference.ipo", "tasks.preference"),
    ("methods.verification.pv", "tasks.verification.decide"), ("leaderboard.claims", "bench.cells"),
    ("app.cli", "leaderboard.claims"), ("tasks.preference.preference_bandit", "tasks.preference._bandit"),
    ("leaderboard.lock", "leaderboard.claims.reference"), ("leaderboard.claims.judge", "leaderboard.queries"),
    ("leaderboard.claims.overview", "leaderboard.claims.reference"), ("leaderboard.ui.paper", "leaderboard.lock"),
    ("leaderboard.claims", "leaderboard.claims.overview"), ("leaderboard.ui.paper", "leaderboard.ui.common"),
])
def test_the_contract_allows(importer, target):
    assert violation(importer, target) is None
