"""The §3 case studies' model: a small causal transformer without positional encoding (NoPE) whose final
hidden state feeds an added feed-forward regression head, trained by MSE on f(target).

f is the identity for plain training and f(n) = 1/√n for output reparameterisation (OutRep, §3); the
prediction is f^{-1}(model output). Inputs are [BOS, b_1, …, b_n]; with causal attention and no position
encoding the model can still sense n (attention to BOS dilutes as 1/(n+1)), which is how a NoPE decoder
counts. Sequences are right-padded; the output is read at the last real token, which causal attention
keeps independent of the padding.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import nn

from bench.toolkit.training import seeded
from tasks.length_generalization import BITS_BOS, RegressionProblem


class NoPERegressor(nn.Module):
    def __init__(self, dim: int, layers: int, heads: int):
        super().__init__()
        self.embed = nn.Embedding(3, dim)  # tokens 0, 1 and BOS; no position embedding (NoPE)
        block = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))  # the added FF layer

    def forward(self, bits: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """bits (n, L) right-padded, lengths (n,) -> (n,) outputs read at token index `length`."""
        tokens = torch.cat([torch.full_like(bits[:, :1], BITS_BOS), bits], dim=1)  # (n, L+1)
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1], device=bits.device)
        hidden = self.norm(self.blocks(self.embed(tokens), mask=mask, is_causal=True))  # (n, L+1, d)
        last = hidden[torch.arange(len(bits), device=bits.device), lengths]  # (n, d)
        return self.head(last).squeeze(-1)


def build_regressor(dim: int, layers: int, heads: int, seed: int, device: str) -> NoPERegressor:
    with seeded(seed):  # initialisation from the run's seed, global RNG untouched
        return NoPERegressor(dim, layers, heads).to(device)


def train_regressor(problem: RegressionProblem, model: NoPERegressor, *, steps: int, batch_size: int, lr: float,
                    forward: Callable[[np.ndarray], np.ndarray], ctx) -> None:
    """Adam on MSE(model(x), f(target)) with fresh training-length batches each step (cosine schedule)."""
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: 0.05 + 0.475 * (1 + np.cos(np.pi * s / steps)))
    model.train()
    for step in range(1, steps + 1):
        ctx.check_deadline()
        bits, lengths, targets = problem.sample(batch_size, ctx.rng)
        out = model(torch.as_tensor(bits, device=ctx.device), torch.as_tensor(lengths, device=ctx.device))
        loss = torch.mean((out - torch.as_tensor(forward(targets), dtype=torch.float32, device=ctx.device)) ** 2)
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % max(1, steps // 50) == 0 or step == steps:
            ctx.log(step, train_loss=loss.item())
            ctx.progress(step / steps)
    model.eval()


def predict(problem: RegressionProblem, model: NoPERegressor, inverse: Callable[[np.ndarray], np.ndarray],
            device: str) -> dict[int, np.ndarray]:
    """Length L -> f^{-1}(model output) for every held-out sequence of that length."""
    out = {}
    with torch.no_grad():
        for length, bits in problem.eval_inputs.items():
            lengths = torch.full((len(bits),), length, device=device)
            raw = model(torch.as_tensor(bits, device=device), lengths).cpu().numpy().astype(np.float64)
            out[length] = inverse(raw)
    return out
