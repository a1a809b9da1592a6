"""YAML files parsed once per content (leaderboard/claims/parsed.py), and the papers' values on a task read from the
files that name it (leaderboard/claims/markers.py)."""

from __future__ import annotations

import os

import pytest
import yaml

from leaderboard.claims import markers, parsed
from leaderboard.claims.parsed import read_yaml, read_yaml_naming


@pytest.fixture(autouse=True)
def cache_root(tmp_path, monkeypatch):
    """Each test its own cache root: an entry another test (or run) left would spare a parse these tests count."""
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def parses(monkeypatch) -> list[str]:
    """The texts yaml.load parsed, in order."""
    seen: list[str] = []
    real = yaml.load

    def load(text, Loader):  # noqa: N803 - yaml's own keyword
        seen.append(text)
        return real(text, Loader=Loader)

    monkeypatch.setattr(parsed.yaml, "load", load)
    return seen


def test_a_file_is_parsed_once_while_its_text_is_the_same(tmp_path, parses):
    path = tmp_path / "a.yaml"
    path.write_text("claims: [{id: one, seeds: 3}]\n")
    first, second = read_yaml(path), read_yaml(path)
    assert first == second == {"claims": [{"id": "one", "seeds": 3}]} and len(parses) == 1


def test_a_changed_file_is_read_again_even_at_the_same_size_and_time(tmp_path, parses):
    """Keyed by the text, not the modification time: the kernel stamps it in ticks of milliseconds, and a file
    rewritten within one at the same size would otherwise keep its old data."""
    path = tmp_path / "a.yaml"
    path.write_text("seeds: 3\n")
    stamp = path.stat().st_mtime_ns
    assert read_yaml(path) == {"seeds": 3}
    path.write_text("seeds: 5\n")
    os.utime(path, ns=(stamp, stamp))
    assert read_yaml(path) == {"seeds": 5} and len(parses) == 2


def _new_process(monkeypatch):
    """What another process starts with: nothing parsed in memory."""
    monkeypatch.setattr(parsed, "_parsed", {})


def test_another_process_reads_the_parse_kept_on_disk(tmp_path, parses, cache_root, monkeypatch):
    path = tmp_path / "a.yaml"
    path.write_text("claims: [{id: one, seeds: 3, value: 0.25}]\n")
    first = read_yaml(path)
    _new_process(monkeypatch)
    assert read_yaml(path) == first and len(parses) == 1
    assert len(list((cache_root / "parsed-yaml").glob("*.pickle"))) == 1


def test_a_corrupt_or_truncated_entry_is_parsed_again_and_replaced(tmp_path, parses, cache_root, monkeypatch):
    path = tmp_path / "a.yaml"
    path.write_text("seeds: 3\n")
    read_yaml(path)
    (entry,) = (cache_root / "parsed-yaml").glob("*.pickle")
    for broken in (b"", b"not a pickle", entry.read_bytes()[:-3]):
        entry.write_bytes(broken)
        _new_process(monkeypatch)
        assert read_yaml(path) == {"seeds": 3}
    assert len(parses) == 4 and read_yaml(path) == {"seeds": 3}
    _new_process(monkeypatch)
    assert read_yaml(path) == {"seeds": 3} and len(parses) == 4  # the last parse replaced the broken entry


def test_an_unwritable_cache_root_only_costs_the_parse(tmp_path, parses, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("BENCH_CACHE_DIR", str(blocker))  # a file where the folder would be: mkdir fails
    path = tmp_path / "a.yaml"
    path.write_text("seeds: 3\n")
    assert read_yaml(path) == {"seeds": 3}
    _new_process(monkeypatch)
    assert read_yaml(path) == {"seeds": 3} and len(parses) == 2


def test_each_caller_gets_its_own_copy(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("methods: {gene: {fidelity: faithful}}\n")
    read_yaml(path)["methods"]["gene"]["fidelity"] = "changed by a caller"
    assert read_yaml(path) == {"methods": {"gene": {"fidelity": "faithful"}}}


def test_a_broken_file_raises_every_time(tmp_path, parses):
    path = tmp_path / "a.yaml"
    path.write_text("claims: [unclosed\n")
    for _ in range(2):
        with pytest.raises(yaml.YAMLError):
            read_yaml(path)
    assert len(parses) == 2
    with pytest.raises(OSError):
        read_yaml(tmp_path / "missing.yaml")


def test_a_file_is_parsed_only_where_it_can_name_what_is_looked_for(tmp_path, parses):
    path = tmp_path / "a.yaml"
    path.write_text("methods: {gene: {fidelity: faithful}}\n")
    assert read_yaml_naming(path, ["pcsgd", "dicesgd"]) is None and parses == []  # not parsed
    assert read_yaml_naming(path, ["pcsgd", "gene"]) == {"methods": {"gene": {"fidelity": "faithful"}}}


@pytest.mark.parametrize(("text", "names", "could"), [
    ("task: performative\n", ["performative"], True),
    ("task: other\n", ["performative"], False),
    ('task: "perf\\x6frmative"\n', ["performative"], True),  # an escape spells it: parsed to be sure
    ("task: >\n  perf\n  ormative\n", ["performative"], False),  # folded: 'perf ormative'
    ("1000: x\n", ["1000"], True),  # a number's str(): only by parsing
    ("x: .inf\n", ["inf"], True),
    ("x: yes\n", ["True"], True),
])
def test_what_a_text_could_name(text, names, could):
    assert parsed._could_spell(text, names) is could
    if not could:  # the parsed data holds none of the names, as strings or str() of a key or value
        assert not set(names) & set(_scalars(yaml.safe_load(text)))


def _scalars(data) -> list[str]:
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in (str(k), *_scalars(v))]
    if isinstance(data, list):
        return [s for v in data for s in _scalars(v)]
    return [str(data)]


@pytest.mark.parametrize(("data", "named"), [
    ({"claims": [{"cells": [{"method": "m", "task": "performative"}]}]}, True),
    ({"defaults": {"cells": {"method": "m", "task": "performative"}}, "claims": [{"id": "x"}]}, True),
    ({"controls": [{"control": {"cells": [{"task": "performative"}]}}]}, True),
    ({"title": "performative prediction", "claims": [{"cells": [{"method": "m", "task": "other"}]}]}, False),
    ("performative", False),
])
def test_a_file_names_a_task_only_as_a_cells_task(data, named):
    assert markers._names_task(data, "performative") is named


def test_the_papers_values_on_each_task_skip_only_the_files_without_it(registry, monkeypatch):
    """Reading only the files that name the task gives the markers that building every paper gave."""
    tasks = registry.names("task")
    filtered = {task: markers.paper_markers(registry, task) for task in tasks}
    monkeypatch.setattr(markers, "read_yaml_naming", lambda path, names, encoding=None: read_yaml(path))
    monkeypatch.setattr(markers, "_names_task", lambda data, task: True)  # every paper built and validated
    assert filtered == {task: markers.paper_markers(registry, task) for task in tasks}
    assert any(filtered.values())
