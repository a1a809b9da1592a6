"""GENE's SWITCHED_OFF (bench/switches.py): without the independence term (α = 0) GENE is gene_no_it bit for bit,
and the released-code variant runs with α = 0 too; on a tiny instance with short fits."""

import numpy as np

from bench.cells import Entry, make_cell
from bench.context import RunContext
from bench.registry import Registry
from methods.causal import gene, gene_forward, gene_no_it
from tasks.causal import anm_synthetic

FAST = {"epochs": 30, "max_sweeps": 1}


def tiny():
    config = anm_synthetic.Config(d=4, density=1, n=200, sem="mlp")
    return anm_synthetic.build(config, RunContext(seed=1).for_task())


def test_gene_without_the_independence_term_is_gene_no_it():
    (switch,) = Registry.discover().switched_off("gene")
    assert (switch.method, switch.config) == ("gene_no_it", {})
    problem = tiny()
    off = gene.solve(problem, gene.Config(alpha=0.0, **FAST), RunContext(seed=2))
    ablation = gene_no_it.solve(problem, gene_no_it.Config(**FAST), RunContext(seed=2))
    assert np.array_equal(off.adjacency, ablation.adjacency) and np.array_equal(off.order, ablation.order)


def test_switched_off_configs_build_cells():
    registry = Registry.discover()
    for name in ("gene", "gene_forward"):
        for s in registry.switched_off(name):
            make_cell(registry, Entry(s.method, s.config), Entry("anm_synthetic", {}), 0)
    (forward,) = registry.switched_off("gene_forward")
    assert gene_forward.Config(**forward.config).alpha == 0.0
    for name in ("gene_no_it", "cam", "direct_lingam", "ges", "notears_mlp", "pc", "r2_sortnregress",
                 "var_sortnregress", "order_oracle"):
        assert isinstance(registry.switched_off(name), str)
