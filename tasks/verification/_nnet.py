"""Reader for the .nnet format of the ACAS Xu networks (Julian et al. 2016; Katz et al., Reluplex, CAV 2017).

Layout: `//` comment lines; "L, inputs, outputs, max size"; the L + 1 layer sizes; a symmetric
flag; input minimums; input maximums; means (inputs, then one for the outputs); ranges (same);
then per layer its weight rows and its biases, comma separated. Semantics: x' = (clip(x, min,
max) − mean) / range, y = range_out · f(x') + mean_out with ReLU on every hidden layer. Inside
[min, max] the clip is the identity, so the normalisation folds exactly into the first and last
layers (tasks/verification/_network.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from tasks.verification._network import Network, affine_then, then_affine

WHERE = ("the 45 ACAS Xu networks ACASXU_run2a_<a>_<b>_batch_2000.nnet are in the nnet/ folder of the "
         "Reluplex repository, https://github.com/guykatzz/ReluplexCav2017 (commit 60b482e, CC-BY 4.0)")


@dataclass(frozen=True, eq=False)
class NNet:
    network: Network        # on raw inputs, raw outputs
    input_min: np.ndarray   # (inputs,) the box the network is defined on
    input_max: np.ndarray


def _numbers(line: str) -> list[float]:
    return [float(v) for v in line.strip().rstrip(",").split(",") if v.strip()]


def read_nnet(path: Path) -> NNet:
    lines = [ln for ln in Path(path).read_text().splitlines() if ln.strip() and not ln.startswith("//")]
    n_layers = int(_numbers(lines[0])[0])
    sizes = [int(v) for v in _numbers(lines[1])]
    mins, maxs = np.array(_numbers(lines[3])), np.array(_numbers(lines[4]))
    means, ranges = np.array(_numbers(lines[5])), np.array(_numbers(lines[6]))
    rows, layers = iter(lines[7:]), []
    for k in range(n_layers):
        W = np.array([_numbers(next(rows)) for _ in range(sizes[k + 1])])
        b = np.array([_numbers(next(rows))[0] for _ in range(sizes[k + 1])])
        if W.shape != (sizes[k + 1], sizes[k]):
            raise ValueError(f"{path}: layer {k} has shape {W.shape}, the header says {(sizes[k + 1], sizes[k])}")
        layers.append((torch.tensor(W), torch.tensor(b)))
    n_in = sizes[0]
    net = affine_then(Network(tuple(layers)), torch.tensor(1.0 / ranges[:n_in]),
                      torch.tensor(-means[:n_in] / ranges[:n_in]))
    net = then_affine(net, float(ranges[n_in]), float(means[n_in]))
    return NNet(net, mins, maxs)


def acasxu_path(directory: str | Path, network: str) -> Path:
    """The file of network "a_b" in `directory`, or FileNotFoundError saying where to get it."""
    path = Path(directory).expanduser() / f"ACASXU_run2a_{network}_batch_2000.nnet"
    if not path.is_file():
        raise FileNotFoundError(f"ACAS Xu network {network!r} not found at {path}; {WHERE}. "
                                f"Pass their folder as the task's nnet_dir.")
    return path
