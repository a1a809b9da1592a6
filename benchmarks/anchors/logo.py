"""LOGO's loss, ours against the official trainer's (ZetangForward/LCM_Stack, training/logo_train.py), same inputs.

Usage: .venv/bin/python benchmarks/anchors/logo.py --authors /tmp/LCM_Stack [--seeds 20]

Their `LOGOTrainer.concatenated_forward` and `get_batch_loss_metrics` run as released on a batch of one sample
(their scripts' per_device_train_batch_size=1): one chosen and two rejected answers after a shared prompt, logits
drawn at random per seed (vocabulary 32, prompt 6 tokens, answers 6 tokens that share their first and last token).
`get_batch_logps` comes from SimPO's trainer, which the release imports but does not ship: the standard shifted,
label-masked, length-averaged form is used here for both sides.

Rows:
- `paper 1/2-1/2` : our `logo_loss(avg_w, [avg_l1, avg_l2])` against theirs with l.127's slice fixed to
  `all_logps[len_chosen*2:]` (the intended slice): equal to rounding.
- `as released`   : theirs as released. l.127 slices `all_logps[len_chosen:]`, so at batch 1 the second "rejected"
  tensor holds both negatives and broadcasting gives two losses, ℓ(c − r1) and ℓ(c − (r1 + r2)/2), averaged:
  the negatives weigh 3/4 and 1/4. Against ours at 1/2-1/2, and against ours fed (r1, r1, r1, r2) (3/4-1/4
  inside one sigmoid; it differs from theirs only by the curvature of log σ).
- `gradient share of r1`: ∂L/∂r1 / (∂L/∂r1 + ∂L/∂r2), 0.5 in the paper, about 0.75 as released.
- `SFT term`      : theirs `nn.CrossEntropyLoss()` on unshifted logits and labels (token t's logit scored against
  token t), ours the shifted next-token NLL over the answer.
- `window`        : their average runs over the span where the three label rows differ, shifted, so the first
  differing token and the shared tokens drop out; ours averages over the whole answer.
At batch 2 their slicing raises (a (2,) and a (4,) tensor do not broadcast): the release only runs at batch 1.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.anchors._authors import definitions, parser, row, source  # noqa: E402
from methods.preference._losses import logo_loss  # noqa: E402

FILE = "training/logo_train.py"
BETA, GAMMA_BETA, SFT = 10.0, 0.3, 0.1   # training/scripts/llama3_logo.sh: --beta 10 --gamma_beta_ratio 0.3
VOCAB, PROMPT, ANSWER = 32, 6, 6


def get_batch_logps(logits, labels, average_log_prob=False, is_encoder_decoder=False, label_pad_token_id=-100):
    """SimPO/TRL's per-sequence log-probability: shift by one, mask the label pad, sum or average."""
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    mask = labels != label_pad_token_id
    labels[~mask] = 0
    per_token = torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
    total = (per_token * mask).sum(-1)
    return total / mask.sum(-1) if average_log_prob else total


def batch(seed: int, size: int = 1) -> tuple[dict, torch.Tensor]:
    """Their collator's keys for `size` samples, and the logits a model would return for the 3·size rows."""
    g = torch.Generator().manual_seed(seed)
    rows = {}
    for key in ("chosen", "reject_1", "reject_2"):
        rows[key] = []
    for _ in range(size):
        prompt = torch.randint(0, VOCAB, (PROMPT,), generator=g)
        first, last = torch.randint(0, VOCAB, (2,), generator=g)
        for key in rows:
            middle = torch.randint(0, VOCAB, (ANSWER - 2,), generator=g)
            rows[key].append(torch.cat([prompt, first.view(1), middle, last.view(1)]))
    out = {}
    for key, seqs in rows.items():
        ids = torch.stack(seqs)
        labels = ids.clone()
        labels[:, :PROMPT] = -100
        out.update({f"{key}_input_ids": ids, f"{key}_attention_mask": torch.ones_like(ids),
                    f"{key}_position_ids": torch.arange(ids.shape[1]).expand_as(ids).clone(),
                    f"{key}_labels": labels})
    logits = torch.randn(3 * size, PROMPT + ANSWER, VOCAB, generator=g) * 0.3
    return out, logits


def trainer(authors: str, fixed: bool, logits: torch.Tensor, sft_weight: float):
    """Their LOGOTrainer's three methods bound to a stand-in `self` (the model returns `logits`)."""
    text = source(authors, FILE)
    if fixed:  # l.247 only (LOGOTrainer); the SimORPOTrainer above it carries the same slice
        head, tail = text.split("class LOGOTrainer", 1)
        slice_ = "suffix_chosen_logps = all_logps[len_chosen:]"
        intended = "suffix_chosen_logps = all_logps[len_chosen*2:]"
        if slice_ not in tail:
            raise SystemExit(f"{FILE}: expected {slice_!r} in LOGOTrainer; the release has changed")
        text = head + "class LOGOTrainer" + tail.replace(slice_, intended, 1)
    names = ["LOGOTrainer.simpo_loss", "LOGOTrainer.concatenated_forward", "LOGOTrainer.get_batch_loss_metrics"]
    defs = definitions(text, names, {"torch": torch, "F": F, "nn": nn})
    self = SimpleNamespace(beta=BETA, gamma_beta_ratio=GAMMA_BETA, loss_type="sigmoid", label_smoothing=0.0,
                           sft_weight=sft_weight, max_target_length=ANSWER, label_pad_token_id=-100,
                           is_encoder_decoder=False, accelerator=SimpleNamespace(device="cpu"),
                           move_to_device=lambda b, device: b, get_batch_logps=get_batch_logps)
    for name in ("simpo_loss", "concatenated_forward", "get_batch_loss_metrics"):
        setattr(self, name, getattr(defs, name).__get__(self))
    model = lambda *a, **k: SimpleNamespace(logits=logits)  # noqa: E731
    return self, model


def window_logps(b: dict, logits: torch.Tensor) -> torch.Tensor:
    """(3,) their per-row averages: over the span where the label rows differ (their l.225-243)."""
    labels = torch.cat([b["chosen_labels"], b["reject_1_labels"], b["reject_2_labels"]])
    diff = (labels[0] != labels[1]) | (labels[1] != labels[2]) | (labels[0] != labels[2])
    pos = torch.nonzero(diff).view(-1)
    sel = torch.arange(int(pos.min()), int(pos.max()) + 1)
    return get_batch_logps(logits[:, sel], labels[:, sel], average_log_prob=True)


def compare(authors: str, seed: int) -> dict[str, float]:
    b, logits = batch(seed)
    out = {}
    for key, fixed in (("theirs_released", False), ("theirs_fixed", True)):
        self, model = trainer(authors, fixed, logits, 0.0)
        out[key] = float(self.get_batch_loss_metrics(model, b, "train")[0])
    avg = window_logps(b, logits)
    c, r1, r2 = avg[0:1], avg[1:2], avg[2:3]
    gamma = BETA * GAMMA_BETA
    out["ours_half"] = float(logo_loss(c, torch.stack([r1, r2], 1), BETA, gamma).mean())
    out["ours_three_quarters"] = float(logo_loss(c, torch.stack([r1, r1, r1, r2], 1), BETA, gamma).mean())
    # gradient share of r1 in theirs as released, from their simpo_loss on the broadcast tensors
    self, _ = trainer(authors, False, logits, 0.0)
    rr = torch.stack([r1[0], r2[0]]).detach().requires_grad_(True)
    losses = self.simpo_loss(c.detach(), (rr[0:1] + rr) / 2)[0].mean()
    grad = torch.autograd.grad(losses, rr)[0]
    out["theirs_share_r1"] = float(grad[0] / grad.sum())
    rr = torch.stack([r1[0], r2[0]]).detach().requires_grad_(True)
    grad = torch.autograd.grad(logo_loss(c.detach(), rr.view(1, 2), BETA, gamma).mean(), rr)[0]
    out["ours_share_r1"] = float(grad[0] / grad.sum())
    # SFT term: theirs (sft_weight 0.1 minus the preference part) against our shifted NLL over the answer
    self, model = trainer(authors, False, logits, SFT)
    out["theirs_sft"] = (float(self.get_batch_loss_metrics(model, b, "train")[0]) - out["theirs_released"]) / SFT
    out["ours_sft"] = -float(get_batch_logps(logits[0:1], b["chosen_labels"], average_log_prob=True))
    # length window: their differing span against our whole answer, for the chosen row
    out["theirs_avg_w"] = float(avg[0])
    out["ours_avg_w"] = -out["ours_sft"]
    return out


def batch_two_raises(authors: str) -> str:
    b, logits = batch(0, size=2)
    self, model = trainer(authors, False, logits, 0.0)
    try:
        self.get_batch_loss_metrics(model, b, "train")
    except RuntimeError as err:
        return f"raises RuntimeError ({str(err).splitlines()[0][:80]})"
    return "runs"


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    runs = [compare(args.authors, seed) for seed in range(args.seeds)]
    col = {k: [r[k] for r in runs] for k in runs[0]}
    print(f"LOGO loss, {args.seeds} seeds, batch 1, beta {BETA}, gamma/beta {GAMMA_BETA}")
    print(row("paper 1/2-1/2: ours vs theirs (slice fixed)", col["ours_half"], col["theirs_fixed"]))
    print(row("as released: ours 1/2-1/2 vs theirs", col["ours_half"], col["theirs_released"]))
    print(row("as released: ours 3/4-1/4 vs theirs", col["ours_three_quarters"], col["theirs_released"]))
    print(row("gradient share of r1: ours vs theirs", col["ours_share_r1"], col["theirs_share_r1"]))
    print(row("SFT term: ours (shifted) vs theirs (unshifted)", col["ours_sft"], col["theirs_sft"]))
    print(row("avg log p(y_w): whole answer vs their span", col["ours_avg_w"], col["theirs_avg_w"]))
    print(f"theirs at batch 2: {batch_two_raises(args.authors)}")
    print("seed 0:", {k: round(v, 6) for k, v in runs[0].items()})


if __name__ == "__main__":
    main()
