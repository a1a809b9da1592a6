"""Dependencies flow one way: the import contract of the packages, checked on the source of every module.

From the bottom up:
  bench (the core: registry, cells, configs, store, execute, the toolkit)
  tasks.<family>        the core and its own family
  methods.<family>      the core, its family's task contract (tasks.<family>, never a private tasks.<family>._x),
                        its family's shared helpers (methods.<family>._x), never another method
  runners               the core
  leaderboard           the core and the runners
  app                   anything (the CLI and Ray job submission)
Families are independent of one another. Imports inside functions count as much as those at the top; the one
exemption is the core's `python -m bench` shim (bench/__main__.py), which is only ever run.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bench", "tasks", "methods", "runners", "leaderboard", "app")
ALLOWED = {"bench": {"bench"}, "tasks": {"bench", "tasks"}, "methods": {"bench", "tasks", "methods"},
           "runners": {"bench", "runners"}, "leaderboard": {"bench", "runners", "leaderboard"}, "app": set(PACKAGES)}
ENTRY_SHIMS = {"bench.__main__"}


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import of the repository's packages, `from a import b` also as a.b."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in out if name.split(".")[0] in PACKAGES]


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
    return None


def sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


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


@pytest.mark.parametrize("importer, target, why", [
    ("bench.store", "leaderboard.claims", "bench sits below leaderboard"),
    ("runners.local", "leaderboard.lock", "runners sits below leaderboard"),
    ("tasks.causal.sachs", "methods.causal.pc", "tasks sits below methods"),
    ("tasks.causal.sachs", "tasks.cmdp", "families are independent"),
    ("methods.preference.ipo", "methods.preference.dpo", "a method imports no other method"),
    ("methods.preference.ipo", "tasks.preference._bandit", "not a private task module"),
    ("methods.causal.pc", "tasks.performative", "families are independent"),
])
def test_the_contract_refuses(importer, target, why):
    assert why in (violation(importer, target) or "")


@pytest.mark.parametrize("importer, target", [
    ("methods.preference.ipo", "methods.preference._bandit"), ("methods.preference.ipo", "tasks.preference"),
    ("methods.verification.pv", "tasks.verification.decide"), ("leaderboard.claims", "bench.cells"),
    ("app.cli", "leaderboard.claims"), ("tasks.preference.preference_bandit", "tasks.preference._bandit"),
])
def test_the_contract_allows(importer, target):
    assert violation(importer, target) is None
