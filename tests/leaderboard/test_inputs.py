"""The inputs digest (leaderboard/inputs.py): blind to docstrings, comments, wrapping and import order; sensitive to
any change in what runs; and the closure follows imports inside functions but stops at the registry."""

from pathlib import Path

import pytest

from leaderboard import inputs
from leaderboard.inputs import closure, digest, normalized

CODE = '''"""A module."""
import math
from os import path, sep


def f(x):
    """Doubles."""
    return 2 * math.sqrt(x)  # a comment
'''


@pytest.mark.parametrize("same", [
    CODE.replace('"""Doubles."""', '"""Twice x, reworded."""'),
    CODE.replace("# a comment", "# another"),
    CODE.replace("import math\nfrom os import path, sep", "from os import sep, path\nimport math"),
    CODE.replace("from os import path, sep", "from os import path\nfrom os import sep"),
    CODE.replace("return 2 * math.sqrt(x)", "return (2\n            * math.sqrt(x))"),
    CODE.replace('"""A module."""\n', ""),
])
def test_what_does_not_run_leaves_the_code_unchanged(same):
    assert normalized(same) == normalized(CODE)


@pytest.mark.parametrize("other", [
    CODE.replace("2 * math", "3 * math"),
    CODE.replace("math.sqrt(x)", "math.sqrt(abs(x))"),
    CODE.replace("from os import path, sep", "from os import path"),
    CODE.replace("import math\nfrom os", "import math\nx = 1\nfrom os"),
])
def test_any_change_to_what_runs_moves_the_code(other):
    assert normalized(other) != normalized(CODE)


def test_the_digest_covers_paths_and_bytes_of_other_files(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "ROOT", tmp_path)
    (tmp_path / "a.py").write_text(CODE)
    (tmp_path / "c.txt").write_text("torch==2.13.0\n")
    before = digest({tmp_path / "a.py", tmp_path / "c.txt"})
    (tmp_path / "a.py").write_text(CODE.replace("# a comment", "# edited"))
    assert digest({tmp_path / "a.py", tmp_path / "c.txt"}) == before
    (tmp_path / "c.txt").write_text("torch==2.14.0\n")
    assert digest({tmp_path / "a.py", tmp_path / "c.txt"}) != before


def test_the_closure_follows_imports_inside_functions_and_leaves_the_registry_out():
    files = {p.relative_to(inputs.ROOT).as_posix() for p in closure({"methods.performative.dicesgd"})}
    assert "methods/performative/dicesgd.py" in files
    assert "bench/__init__.py" in files and "bench/numerics.py" in files   # the numerics pin runs first
    assert not {"bench/registry.py", "bench/static.py", "bench/errors.py"} & files
    assert all(Path(inputs.ROOT, f).is_file() for f in files)


def test_a_claims_file_counts_by_its_data_not_its_comments(tmp_path, monkeypatch):
    monkeypatch.setattr(inputs, "ROOT", tmp_path)
    claims = tmp_path / "p.yaml"
    claims.write_text("claims:\n  - id: a   # the gap\n    seeds: 5\n")
    before = digest({claims})
    claims.write_text("# reworded\nclaims:\n- {id: a, seeds: 5}\n")
    assert digest({claims}) == before
    claims.write_text("claims:\n  - id: a\n    seeds: 6\n")
    assert digest({claims}) != before
