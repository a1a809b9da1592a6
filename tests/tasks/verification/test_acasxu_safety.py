"""ACAS Xu (tasks/verification/_nnet.py, acasxu_safety.py): the folded network equals the .nnet
semantics evaluated literally (clip, normalise, ReLU layers, denormalise); a missing folder says
where to get the files. Needs ../shared/data/acasxu (skipped without it)."""

from pathlib import Path

import numpy as np
import pytest
import torch

from bench.context import RunContext
from tasks.verification.acasxu_safety import Config, build

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "acasxu"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"ACAS Xu .nnet files not at {DATA}")


def literal_nnet(path, x):
    rows = [[float(v) for v in ln.strip().rstrip(",").split(",")] for ln in open(path) if not ln.startswith("//")]
    sizes = [int(v) for v in rows[1]]
    mins, maxs, means, ranges = map(np.array, rows[3:7])
    h = (np.clip(x, mins, maxs) - means[:5]) / ranges[:5]
    r = 7
    for k in range(len(sizes) - 1):
        W = np.array(rows[r:r + sizes[k + 1]])
        r += sizes[k + 1]
        b = np.array([v[0] for v in rows[r:r + sizes[k + 1]]])
        r += sizes[k + 1]
        h = h @ W.T + b
        if k < len(sizes) - 2:
            h = np.maximum(h, 0)
    return h * ranges[5] + means[5]


@needs_data
@pytest.mark.parametrize("network", ["4_3", "1_9"])
def test_network_matches_the_nnet_semantics(network):
    problem = build(Config(network=network, nnet_dir=str(DATA)), RunContext(0).for_task())
    x = problem.population.sample(500, np.random.default_rng(0))
    expected = literal_nnet(DATA / f"ACASXU_run2a_{network}_batch_2000.nnet", x)
    assert np.allclose(problem.network.forward(torch.tensor(x)).numpy(), expected, rtol=1e-9, atol=1e-9)


def test_missing_files_and_bad_names(tmp_path):
    with pytest.raises(FileNotFoundError, match="ReluplexCav2017"):
        build(Config(nnet_dir=str(tmp_path)), RunContext(0).for_task())
    with pytest.raises(ValueError, match="allowed: 2, 7, 8"):
        Config(property=1)
    with pytest.raises(ValueError, match="random"):
        Config(network="6_1")


def test_random_stand_in_is_deterministic_per_seed():
    a, b = (build(Config(network="random"), RunContext(s).for_task()) for s in (3, 3))
    c = build(Config(network="random"), RunContext(4).for_task())
    x = torch.tensor(a.population.sample(10, np.random.default_rng(0)))
    assert torch.equal(a.network.forward(x), b.network.forward(x))
    assert not torch.equal(a.network.forward(x), c.network.forward(x))
