"""The label-smoothed SFT loss, ours against the authors' training code, same inputs.

Usage: .venv/bin/python benchmarks/anchors/label-smoothing-calibration.py --authors /tmp/Calibrating-LLMs [--seeds 20]

Theirs: `cross_entropy_loss` of openinstruct/open_instruct/finetune-working.py (l.76-107: logits / τ, then
`F.cross_entropy(..., label_smoothing=β, reduction=...)`, times τ), called as their training loop calls it
(l.851 `reduction="mean"`, l.883 `reduction="sum"`; their sweep script own-scripts-v2/finetune_with_accelerate_
config-alpaca-label_smoothing.sh runs `for reduction in sum; # mean;`). Their `@torch.compile` decorator is
dropped (the same function, eager). Ours: methods/calibration/_sft.sft_loss's reduction, i.e.
`label_smoothed_ce(h / τ, W, y, β, reduction="mean") · τ` on hidden states h and an LM head W.

Inputs per seed: 4 sequences of 16 tokens, vocabulary 64, hidden size 8, prompts of 3-10 tokens at −100, β = 0.1,
τ = 1 and τ = 2. Rows: the mean-reduced losses (equal); theirs summed against ours (ratio = the batch's answer
tokens); the gradient's direction within one batch (cosine 1); and across a two-micro-batch accumulation
(open-instruct sums micro-batch losses), the weight each micro-batch gets: theirs ∝ its token count, ours equal.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.anchors._authors import definitions, parser, row, source  # noqa: E402
from methods.calibration._label_smoothed_ce import label_smoothed_ce  # noqa: E402

FILE = "openinstruct/open_instruct/finetune-working.py"
BETA = 0.1
BATCH, T, VOCAB, HIDDEN = 4, 16, 64, 8


def theirs(authors: str):
    text = source(authors, FILE).replace("@torch.compile(fullgraph=True, dynamic=True)\n", "", 1)
    return definitions(text, ["softcapping", "cross_entropy_loss"], {"torch": torch, "F": F}).cross_entropy_loss


def inputs(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(hidden (B·(T−1), d), head (V, d), shifted targets (B·(T−1),) with prompt tokens at −100)."""
    g = torch.Generator().manual_seed(seed)
    hidden = torch.randn(BATCH, T, HIDDEN, generator=g)
    head = torch.randn(VOCAB, HIDDEN, generator=g)
    labels = torch.randint(0, VOCAB, (BATCH, T), generator=g)
    prompt = torch.randint(3, 11, (BATCH,), generator=g)
    labels[torch.arange(T)[None, :] < prompt[:, None]] = -100
    return hidden[:, :-1].reshape(-1, HIDDEN), head, labels[:, 1:].reshape(-1)


def ours_loss(h, w, y, temperature: float = 1.0) -> torch.Tensor:
    return temperature * label_smoothed_ce(h / temperature, w, y, BETA, ignore_index=-100, reduction="mean")


def their_loss(fn, h, w, y, reduction: str, temperature: float | None = None) -> torch.Tensor:
    return fn(h @ w.T, y, temperature=temperature, reduction=reduction, label_smoothing=BETA)


def compare(authors: str, seed: int) -> dict[str, float]:
    fn = theirs(authors)
    h, w, y = inputs(seed)
    n = int((y != -100).sum())
    out = {"tokens": float(n)}
    out["ours_mean"], out["theirs_mean"] = float(ours_loss(h, w, y)), float(their_loss(fn, h, w, y, "mean"))
    out["theirs_sum"] = float(their_loss(fn, h, w, y, "sum"))
    out["ours_mean_tau2"] = float(ours_loss(h, w, y, 2.0))
    out["theirs_mean_tau2"] = float(their_loss(fn, h, w, y, "mean", 2.0))
    hw = h.clone().requires_grad_(True)
    g_ours = torch.autograd.grad(ours_loss(hw, w, y), hw)[0].view(-1)
    hw = h.clone().requires_grad_(True)
    g_theirs = torch.autograd.grad(their_loss(fn, hw, w, y, "sum"), hw)[0].view(-1)
    out["grad_cosine"] = float(F.cosine_similarity(g_ours, g_theirs, dim=0))
    out["grad_ratio"] = float(g_theirs.norm() / g_ours.norm())
    # two micro-batches (sequences 0-1 and 2-3): the share of the accumulated gradient's weight on the first
    half = (T - 1) * BATCH // 2
    n1, n2 = int((y[:half] != -100).sum()), int((y[half:] != -100).sum())
    out["ours_share_first"], out["theirs_share_first"] = 0.5, n1 / (n1 + n2)
    return out


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    runs = [compare(args.authors, seed) for seed in range(args.seeds)]
    col = {k: [r[k] for r in runs] for k in runs[0]}
    print(f"label-smoothed CE, beta {BETA}, {args.seeds} seeds, {BATCH} x {T} tokens, V {VOCAB}")
    print(row("mean reduction: ours vs theirs", col["ours_mean"], col["theirs_mean"]))
    print(row("mean reduction, tau 2: ours vs theirs", col["ours_mean_tau2"], col["theirs_mean_tau2"]))
    scaled = [a * n for a, n in zip(col["ours_mean"], col["tokens"], strict=True)]
    print(row("ours (mean) x tokens vs theirs (sum)", scaled,
              col["theirs_sum"]))
    print(row("ours (mean) vs theirs (sum)", col["ours_mean"], col["theirs_sum"]))
    print(row("gradient cosine, one batch: 1 vs measured", [1.0] * len(runs), col["grad_cosine"]))
    print(row("gradient norm ratio theirs/ours vs tokens", col["tokens"], col["grad_ratio"]))
    print(row("2 micro-batches, weight of the first", col["ours_share_first"], col["theirs_share_first"]))
    print("seed 0:", {k: round(v, 6) for k, v in runs[0].items()})


if __name__ == "__main__":
    main()
