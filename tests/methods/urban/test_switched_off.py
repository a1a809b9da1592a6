"""CoRE's SWITCHED_OFF (bench/switches.py): with both alignment weights 0 the cities are trained on L_mob alone,
uncoupled: no alignment or cycle term is computed, and nothing of the alignment's settings reaches the result."""

import numpy as np

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.urban import core
from tasks.urban import two_city

SMALL = {"dim": 8, "heads": 2, "epochs": 8, "lr": 1e-2}


def test_core_without_alignment_trains_the_mobility_losses_alone():
    (switch,) = Registry.discover().switched_off("core")
    problem = two_city.build(two_city.Config(n_source=30, n_target=20), RunContext(0).for_task())
    ctx = RunContext(1)
    off = core.solve(problem, core.Config(probes=50, **SMALL, **switch.config), ctx)
    assert set(ctx.curves) == {"loss", "loss_mob_0", "loss_mob_1"}
    other_probes = core.solve(problem, core.Config(probes=7, **SMALL, **switch.config), RunContext(1))
    np.testing.assert_array_equal(off.predictions, other_probes.predictions)
    aligned = core.solve(problem, core.Config(probes=50, **SMALL), RunContext(1))
    assert not np.array_equal(aligned.predictions, off.predictions)


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for s in registry.switched_off("core"):
        make_cell(registry, Entry(s.method, s.config), Entry("two_city", {}), 0)
    for name in ("direct_transfer", "procrustes", "source_mean", "latent_oracle", "target_readout"):
        assert isinstance(registry.switched_off(name), str)
