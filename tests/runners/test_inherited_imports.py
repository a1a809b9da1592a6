import os
import signal
import sys

import pytest

from bench.cells import Entry, expand
from runners.inherited_imports import import_here, imported_since
from runners.local import run_cells


@pytest.fixture
def import_log(tmp_path, monkeypatch):
    """The file the toy's lazy dependency appends its importer's pid to; the dependency not imported yet."""
    path = tmp_path / "imports.log"
    monkeypatch.setenv("BENCH_TOY_IMPORT_LOG", str(path))
    _forget_dependency()
    yield path
    _forget_dependency()


def _forget_dependency() -> None:
    import bench_toy

    sys.modules.pop("bench_toy._lazy_dependency", None)
    bench_toy.__dict__.pop("_lazy_dependency", None)  # `from bench_toy import` reads the package's attribute first


def _importers(path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


@pytest.mark.parametrize("workers", [1, 2])
def test_a_module_one_forked_cell_imported_is_imported_once_more_by_the_driver_and_never_again(
        toy_registry, store, import_log, workers):
    cells = expand(toy_registry, [Entry("toy_lazy_import")], [Entry("toy_target")], [0, 1, 2, 3, 4], ["cpu"]).cells
    summary = run_cells(cells, store, toy_registry, workers=workers, isolate=True)
    assert summary.counts == {"done": 5}
    importers = _importers(import_log)
    # the first `workers` cells start before any reports back; then the driver imports it and the rest inherit it
    assert len(importers) == workers + 1 and importers.count(os.getpid()) == 1


def test_without_inheritance_every_forked_cell_imports_it_itself(toy_registry, store, import_log):
    cells = expand(toy_registry, [Entry("toy_lazy_import")], [Entry("toy_target")], [0, 1, 2], ["cpu"]).cells
    run_cells(cells, store, toy_registry, workers=1, isolate=True, inherit_imports=False, isolation="cell")
    importers = _importers(import_log)
    assert len(importers) == 3 and len(set(importers)) == 3 and os.getpid() not in importers


def test_a_reused_worker_imports_it_once_for_all_its_cells(toy_registry, store, import_log):
    cells = expand(toy_registry, [Entry("toy_lazy_import")], [Entry("toy_target")], [0, 1, 2], ["cpu"]).cells
    run_cells(cells, store, toy_registry, workers=1, isolate=True, inherit_imports=False)
    importers = _importers(import_log)
    assert len(importers) == 1 and os.getpid() not in importers  # one worker ran the three cells


def test_inherited_imports_change_no_number(toy_registry, tmp_path, import_log):
    from bench.store import Store

    cells = expand(toy_registry, [Entry("toy_noisy"), Entry("toy_lazy_import")], [Entry("toy_target")], [0, 1, 2],
                   ["cpu"]).cells
    a, b = Store.open(f"sqlite:///{tmp_path}/a.db"), Store.open(f"sqlite:///{tmp_path}/b.db")
    run_cells(cells, a, toy_registry, isolate=True, inherit_imports=False)
    run_cells(cells, b, toy_registry, isolate=True)
    keys = [c.run_key for c in cells]
    assert a.metrics(keys) == b.metrics(keys) and len(a.metrics(keys)) == 6


def test_imported_since_lists_new_modules_in_import_order(tmp_path, monkeypatch):
    package = tmp_path / "inherit_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "leaf.py").write_text("from inherit_pkg import helper\n")
    (package / "helper.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    try:
        import inherit_pkg.leaf  # noqa: F401
        assert imported_since(before) == ["inherit_pkg", "inherit_pkg.helper", "inherit_pkg.leaf"]
    finally:
        for name in ("inherit_pkg", "inherit_pkg.helper", "inherit_pkg.leaf"):
            sys.modules.pop(name, None)


def test_import_here_keeps_the_drivers_signal_handlers_and_output_and_skips_what_cannot_import(
        import_log, capfd):
    def handler(signum, frame):
        return None

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        count = import_here(["bench_toy._lazy_dependency", "no_such_module_anywhere", "__main__", "bench_toy"])
        assert signal.getsignal(signal.SIGTERM) is handler  # the module set SIG_IGN on import; undone
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert count == 1 and "bench_toy._lazy_dependency" in sys.modules and _importers(import_log) == [os.getpid()]
    out, err = capfd.readouterr()
    assert "banner" not in out + err  # the import-time print went nowhere, not over the driver's display
