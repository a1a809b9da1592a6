import numpy as np
import pytest

from bench.cells import Entry, make_cell
from bench.errors import BenchError
from bench.execute import device_for, execute
from bench.spec import Cell


def _cell(method, seed=0, method_config=None, task_config=None, hardware="cpu"):
    return Cell(method, "toy_target", seed, method_config or {}, task_config or {"dim": 3, "scale": 1.0}, hardware)


def test_done_run_is_scored_by_the_family_with_curves(toy_registry):
    record = execute(_cell("toy_noisy", method_config={"noise": 0.0}), toy_registry)
    assert record.status == "done" and record.error is None and record.task_version == 2
    assert record.metrics["error"] == 0.0
    target = np.random.default_rng([0, 0]).standard_normal(3)  # the task's stream: seed 0, stream 0
    assert record.metrics["norm"] == pytest.approx(np.linalg.norm(target))
    assert record.curves["loss"] == [(1, 1.0), (2, 0.5), (3, 1 / 3)]
    assert record.wall_s >= 0 and record.peak_mem_mb > 0
    assert 0 <= record.cpu_s  # the process's CPU time; several threads can make it exceed the wall time


def test_same_seed_same_numbers_other_seed_other_numbers(toy_registry):
    a = execute(_cell("toy_noisy"), toy_registry).metrics
    b = execute(_cell("toy_noisy"), toy_registry).metrics
    c = execute(_cell("toy_noisy", seed=1), toy_registry).metrics
    assert a == b and a != c


def test_exception_is_a_failed_record_with_traceback(toy_registry):
    record = execute(_cell("toy_raise", method_config={"message": "kaboom"}), toy_registry)
    assert record.status == "failed" and record.metrics == {}
    assert "Traceback" in record.error and "RuntimeError: kaboom" in record.error


def test_skip_reason_is_stored(toy_registry):
    record = execute(_cell("toy_gpu", task_config={"dim": 1, "scale": 1.0}), toy_registry)
    assert (record.status, record.error) == ("skipped", "needs dim >= 2")


def test_cuda_without_gpu_is_a_bench_error():
    try:
        import torch
        if torch.cuda.is_available():
            pytest.skip("this machine has a GPU")
    except ImportError:
        pass
    with pytest.raises(BenchError, match="allowed here: cpu"):
        device_for("cuda")


def test_what_libraries_say_is_kept_with_the_run_not_printed(toy_registry, capfd):
    """Warnings and library loggers' records go to the run's log (counted once each), not to the terminal."""
    import logging

    library = logging.getLogger("transformers")
    before = (library.handlers[:], library.propagate)
    cell = make_cell(toy_registry, Entry("toy_warns"), Entry("toy_target"), 0)
    record = execute(cell, toy_registry)
    assert record.status == "done"
    assert "FutureWarning: `past_key_values` is deprecated" in record.log
    assert "[transformers] warning: Loading weights: 16/16" in record.log
    err = capfd.readouterr().err
    assert "deprecated" not in err and "Loading weights" not in err
    assert (library.handlers, library.propagate) == before                  # the library's own set-up is back
