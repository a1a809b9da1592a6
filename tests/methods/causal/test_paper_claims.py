"""The paper's synthetic findings at reduced scale (slow tier): standardisation (§5.1.2, Fig. 4), order
quality on weak data (§5.1.5, Fig. 6) and the α = 0 ablation (§5.1.4, Fig. 5).

Sizes are far below the paper's (d = 10/20, n = 3000, 10 graphs); the numbers in the comments were
measured when the family was added (one torch thread) and are regression pins, not paper values.

Heavy tier (`pytest -m heavy`, by hand): the same statements are claims of leaderboard/papers/gene-causal.yaml
(standardising-hurts-notears-mlp, standardising-leaves-gene, gene-rev-below-cam-weak, gene-rev-below-r2sort-weak,
ablation-alpha0-worse-on-weak), which CI's slow tier reproduces at the claims' own seeds against their verdict lock;
these pins at other sizes cost ~50 s of CI for no verdict it does not already check.
"""

import numpy as np
import pytest

from bench.context import RunContext
from methods.causal import cam, gene, gene_no_it, notears_mlp, r2_sortnregress, var_sortnregress
from tasks.causal import anm_synthetic, score


def mean_metric(module, config, task_config, seeds, metric):
    values = []
    for seed in seeds:
        problem = anm_synthetic.build(task_config, RunContext(seed).for_task())
        values.append(score(problem, module.solve(problem, config, RunContext(seed)))[metric])
    return float(np.mean(values))


WEAK = anm_synthetic.Config(d=5, density=1, n=500, sem="mlp", standardize=True)


@pytest.mark.heavy
def test_gene_orders_weak_data_better_than_fit_based_methods_and_its_ablation():
    seeds = range(6)
    rev = {name: mean_metric(module, config, WEAK, seeds, "rev") for name, module, config in [
        ("gene", gene, gene.Config(epochs=200)), ("gene_no_it", gene_no_it, gene_no_it.Config(epochs=200)),
        ("cam", cam, cam.Config()), ("r2_sortnregress", r2_sortnregress, r2_sortnregress.Config()),
        ("var_sortnregress", var_sortnregress, var_sortnregress.Config())]}
    # measured: gene 0.33, gene_no_it 0.50, cam 1.00, var-sort 1.83, r2-sort 3.00 reversals per graph
    assert rev["gene"] < rev["gene_no_it"]
    assert rev["gene"] <= 0.5 * rev["cam"]                 # the paper: about half of CAM's
    assert rev["gene"] < min(rev["r2_sortnregress"], rev["var_sortnregress"])


@pytest.mark.heavy
def test_standardising_costs_notears_f1_but_not_gene():
    raw = anm_synthetic.Config(d=5, density=2, n=300, sem="mlp")
    std = anm_synthetic.Config(d=5, density=2, n=300, sem="mlp", standardize=True)
    seeds = range(3)
    # NOTEARS-MLP with L-BFGS-B capped at 100 steps per primal solve (full runs take minutes per graph)
    nt = notears_mlp.Config(max_inner=100)
    nt_raw, nt_std = (mean_metric(notears_mlp, nt, cfg, seeds, "f1") for cfg in (raw, std))
    g = gene.Config(epochs=200)
    gene_raw, gene_std = (mean_metric(gene, g, cfg, seeds, "f1") for cfg in (raw, std))
    # measured: NOTEARS 0.86 -> 0.61 (−29 %; paper −52 % on weak data), GENE 0.72 -> 0.87
    assert nt_std < 0.85 * nt_raw
    assert gene_std >= 0.85 * gene_raw
