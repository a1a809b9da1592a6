"""ReLU networks as weight lists: x -> W_L relu(... relu(W_1 x + b_1) ...) + b_L [-> relu].

A network is a tuple of (W, b) float64 torch tensors with a ReLU between consecutive layers and,
optionally, after the last one (the FairSquare networks end in a ReLU). Input normalisation and
preprocessing (the .nnet min/mean/range scaling, FairSquare's n(x), the integrity constraint
edu := min(edu, age)) are folded into the layers, so the network is one function of the raw input:
the paper's "fuse classifier ∘ population-model into one network" (probspecs' preprocessing).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch


@dataclass(frozen=True, eq=False)
class Network:
    layers: tuple[tuple[torch.Tensor, torch.Tensor], ...]  # (W (out, in), b (out,)) per Linear
    final_relu: bool = False                                 # a ReLU after the last Linear

    def __post_init__(self) -> None:
        layers = tuple((torch.as_tensor(W, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64))
                       for W, b in self.layers)
        for (W, b), (W_next, _) in zip(layers, layers[1:] + ((None, None),)):
            if W.ndim != 2 or b.shape != (W.shape[0],):
                raise ValueError(f"a layer needs W (out, in) and b (out,), got {tuple(W.shape)} and {tuple(b.shape)}")
            if W_next is not None and W_next.shape[1] != W.shape[0]:
                raise ValueError(f"layer sizes do not chain: {tuple(W.shape)} then {tuple(W_next.shape)}")
        object.__setattr__(self, "layers", layers)

    @property
    def in_dim(self) -> int:
        return int(self.layers[0][0].shape[1])

    @property
    def out_dim(self) -> int:
        return int(self.layers[-1][0].shape[0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(N, in_dim) -> (N, out_dim)."""
        h = torch.as_tensor(x, dtype=torch.float64)
        for k, (W, b) in enumerate(self.layers):
            h = h @ W.T + b
            if k < len(self.layers) - 1 or self.final_relu:
                h = torch.relu(h)
        return h

    def to(self, device: str) -> "Network":
        return Network(tuple((W.to(device), b.to(device)) for W, b in self.layers), self.final_relu)


def affine_then(network: Network, scale: torch.Tensor, shift: torch.Tensor) -> Network:
    """The network of x -> f(scale * x + shift) (a per-input affine map folded into the first layer)."""
    (W, b), rest = network.layers[0], network.layers[1:]
    scale, shift = torch.as_tensor(scale, dtype=torch.float64), torch.as_tensor(shift, dtype=torch.float64)
    return Network(((W * scale, b + W @ shift),) + rest, network.final_relu)


def then_affine(network: Network, scale: float, shift: float) -> Network:
    """The network of x -> scale * f(x) + shift (needs final_relu False: folded into the last layer)."""
    if network.final_relu:
        raise ValueError("an output affine map cannot be folded past a final ReLU")
    rest, (W, b) = network.layers[:-1], network.layers[-1]
    return Network(rest + ((W * scale, b * scale + shift),), False)


def pad_inputs(network: Network, positions: list[int], in_dim: int) -> Network:
    """The network on a wider input vector: its inputs sit at `positions` of an `in_dim` vector."""
    (W, b), rest = network.layers[0], network.layers[1:]
    wide = torch.zeros(W.shape[0], in_dim, dtype=torch.float64)
    wide[:, positions] = W
    return Network(((wide, b),) + rest, network.final_relu)


def one_thread(fn):
    """Run fn with one torch intra-op thread, restoring the count after.

    This family's tensors are many and small (batches of boxes through tiny layers); on a loaded
    machine torch's thread pool made them 10-100x slower, so builds and solves run on one thread.
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(threads)
    return wrapper
