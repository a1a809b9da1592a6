import time

import pytest

from bench.cells import MAX_SEED, MAX_SEEDS, Entry, check_seed, expand, load_grid_file, make_cell, parse_seeds
from bench.errors import BenchError


def test_parse_seeds():
    assert parse_seeds("0-4") == [0, 1, 2, 3, 4]
    assert parse_seeds("3,1,1") == [1, 3]
    assert parse_seeds(7) == [7]
    assert parse_seeds([0, "2-3"]) == [0, 2, 3]
    for bad in ("a", "5-2", "-1", True, "", "3-", "1,", None, 1.5, [], [0, -2], 2**31, str(2**31), f"0-{2**31}"):
        with pytest.raises(BenchError, match="bad seeds? "):
            parse_seeds(bad)
    assert parse_seeds(str(MAX_SEED)) == [2**31 - 1]  # the largest seed a 32-bit runs.seed holds


def test_seed_count_is_capped_before_a_list_is_built():
    started = time.perf_counter()
    for huge in ("0-99999999999", f"0-{MAX_SEED}", [f"0-{MAX_SEEDS - 1}", MAX_SEEDS + 7]):
        with pytest.raises(BenchError, match=f"at most {MAX_SEEDS}"):
            parse_seeds(huge)
    assert time.perf_counter() - started < 0.5  # 10**11 integers were never listed
    assert len(parse_seeds(f"0-{MAX_SEEDS - 1}")) == MAX_SEEDS
    with pytest.raises(BenchError, match="bad seed -1"):
        check_seed(-1)
    assert check_seed(0) == 0


def test_grid_file_hardware_and_encoding_are_checked(tmp_path):
    path = tmp_path / "grid.yaml"
    for hardware, message in (("5", "not 5"), ("[5]", "not \\[5\\]"), ("[null]", "not \\[None\\]"),
                              ("[]", "not \\[\\]"), ("[tpu]", "hardware 'tpu'")):
        path.write_text(f"methods: [a]\ntasks: [b]\nhardware: {hardware}\n")
        with pytest.raises(BenchError, match=message):
            load_grid_file(path)
    path.write_text("methods: [a]\ntasks: [b]\nhardware: [cpu, cuda:a100, cpu]\n")
    assert load_grid_file(path)["hardware"] == ["cpu", "cuda:a100"]
    path.write_bytes("methods: [caf\u00e9]\ntasks: [b]\n".encode("latin-1"))
    with pytest.raises(BenchError, match="is not UTF-8 text"):
        load_grid_file(path)


def test_cells_carry_full_configs(toy_registry):
    cell = make_cell(toy_registry, Entry("toy_noisy", {"noise": 1}), Entry("toy_target"), 3)
    assert cell.method_config == {"noise": 1.0} and cell.task_config == {"dim": 3, "scale": 1.0}
    explicit = make_cell(toy_registry, Entry("toy_noisy", {"noise": 1.0}), Entry("toy_target", {"dim": 3}), 3)
    assert cell.run_key == explicit.run_key


def test_expand_drops_incompatible_with_reason(toy_registry):
    grid = expand(toy_registry, [Entry("toy_noisy"), Entry("toy_gpu")], [Entry("toy_target")], [0, 1], ["cpu", "cuda"])
    assert len(grid.cells) == 2 * 2 + 2  # toy_noisy on cpu only; toy_gpu on both
    assert grid.incompatible == [("toy_noisy", "toy_target", "cuda", "toy_noisy runs on cpu, not cuda")]


def test_grid_file(tmp_path, toy_registry):
    path = tmp_path / "grid.yaml"
    path.write_text("methods: [toy_noisy, {name: toy_noisy, config: {noise: 0.5}}]\n"
                    "tasks: toy_target\nseeds: 0-2\n")
    spec = load_grid_file(path)
    grid = expand(toy_registry, spec["methods"], spec["tasks"], spec["seeds"], spec["hardware"])
    assert len(grid.cells) == 6
    path.write_text("methods: [toy_noisy]\ntasks: [toy_target]\nseed: 3\n")
    with pytest.raises(BenchError, match="unknown keys \\['seed'\\]"):
        load_grid_file(path)
    path.write_text("methods: [{name: toy_noisy, config: {noise: fast}}]\ntasks: [toy_target]\n")
    spec = load_grid_file(path)
    with pytest.raises(BenchError, match="toy_noisy.noise: expected float"):
        expand(toy_registry, spec["methods"], spec["tasks"], spec["seeds"], spec["hardware"])


def test_a_task_this_machine_cannot_build_is_refused_before_any_cell(monkeypatch, tmp_path):
    """urban_cities without its data (the project never ships it): the grid is refused in one line naming where it
    looked, and `unavailable` says the same for a planner that leaves such cells out."""
    from bench.cells import Entry, expand, unavailable
    from bench.errors import BenchError
    from bench.registry import Registry
    from tasks.urban import urban_cities

    registry = Registry.discover()
    monkeypatch.setattr(urban_cities, "data_places", lambda: [tmp_path])
    assert "looked in " + str(tmp_path) in unavailable(registry, "urban_cities", {})
    with pytest.raises(BenchError, match="task urban_cities cannot be built on this machine: the released cities"):
        expand(registry, [Entry("source_mean", {})], [Entry("urban_cities", {})], [0], ["cpu"])
    assert unavailable(registry, "urban_cities", {"data": "tests/tasks/urban/fixture_cities"}) is None
    assert unavailable(registry, "performative", {}) is None  # a task without the hook is always buildable
