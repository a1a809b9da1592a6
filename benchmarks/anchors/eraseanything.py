"""EraseAnything's loss terms, ours against the authors' code (tomguluson92/EraseAnything), same tensors.

Usage: .venv/bin/python benchmarks/anchors/eraseanything.py --authors /tmp/EraseAnything [--seeds 20]

Their losses are written inline in the training functions of utils/calc_loss.py, which need FLUX.1-dev to run as
a whole; the anchor runs their exact statements on tensors of the shapes those functions see (batch 1, 4 heads,
24 joint tokens, keyword columns {3, 5}):
- L_ESD  : calculate_upper_loss l.389, `criteria(e_n, e_0 − η (e_p − e_0))` with criteria = nn.MSELoss()
           (train_flux_lora.py l.269), η = negative_guidance 1 (config/config.yaml); ours: methods/erasure/_common
           `esd_target` + `mse` (velocities of a stand-in backbone that returns the same e_0, e_p, e_n).
- L_attn : calculate_upper_loss l.435-441 (mask the keyword columns, norm over batch and heads, sum); ours
           `attention_loss`.
- L_FM   : calculate_lower_loss l.529-532 (per-sample mean squared error, sample 0); ours `mse(v, ε − x0)`.
- L_rSCL : utils/infoNCE.py `calculate_steer_loss` (τ = 0.07) on the maps built as calculate_lower_loss
           l.601-608 builds them; ours `keyword_attention` + `rscl_loss`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.anchors._authors import definitions, parser, row, source, statements  # noqa: E402
from methods.erasure._common import esd_target, mse  # noqa: E402
from methods.erasure.eraseanything import attention_loss, keyword_attention, rscl_loss  # noqa: E402

ETA, TAU, K_IRR = 1.0, 0.07, 3
HEADS, TOKENS, KEYS = 4, 24, [3, 5]


def inputs(seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    v = {name: torch.randn(1, 16, 8, generator=g) for name in ("e_0", "e_p", "e_n", "v", "noise", "x0")}
    maps = [torch.softmax(torch.randn(1, HEADS, TOKENS, TOKENS, generator=g) * 2, -1) for _ in range(2 + K_IRR)]
    return {**v, "attn_center": maps[0], "attn_syn": maps[1], "attn_irr": maps[2:]}


def theirs(authors: str, x: dict) -> dict[str, float]:
    text = source(authors, "utils/calc_loss.py")
    ns = {"torch": torch, "criteria": torch.nn.MSELoss(), "negative_guidance": ETA,
          "transformer": SimpleNamespace(device="cpu"), **x}
    esd = statements(text, "calculate_upper_loss", "loss_esd = criteria", "loss_esd = criteria", ns)["loss_esd"]
    batch = {"remove_indices": [KEYS]}
    attn = statements(text, "calculate_upper_loss", "attn_map_mask = torch.ones_like", "loss_attn =",
                      {**ns, "remove_indices": KEYS, "attn_maps": x["attn_center"]})["loss_attn"]
    fm = statements(text, "calculate_lower_loss", "loss_lora = torch.mean", "loss_lora = torch.mean",
                    {**ns, "model_pred": x["v"], "target": x["noise"] - x["x0"]})["loss_lora"]
    steer = definitions(source(authors, "utils/infoNCE.py"), ["calculate_steer_loss"],
                        {"torch": torch, "F": F}).calculate_steer_loss
    maps = statements(text, "calculate_lower_loss", "attn_map_neg = attn_map_lst_neg", "info_center =",
                      {**ns, "batch": batch, "K": K_IRR, "attn_map_lst_neg": {0: x["attn_syn"]},
                       "attn_map_rand_idx": 0, "pos_lst": x["attn_irr"], "attn_maps": x["attn_center"]})
    rscl = steer(maps["info_center"], maps["info_neg"], maps["info_pos_lst"], temperature=TAU)
    return {"esd": float(esd), "attn": float(attn), "fm": float(fm), "rscl": float(rscl)}


def ours(x: dict) -> dict[str, float]:
    velocities = {"p": x["e_p"], "0": x["e_0"]}
    backbone = SimpleNamespace(velocity=lambda model, z, text, t: velocities[text])
    esd = mse(x["e_n"], esd_target(backbone, None, None, None, "p", "0", ETA))
    a_irr = torch.stack([keyword_attention(m, KEYS) for m in x["attn_irr"]])
    rscl = rscl_loss(keyword_attention(x["attn_center"], KEYS), keyword_attention(x["attn_syn"], KEYS), a_irr, TAU)
    return {"esd": float(esd), "attn": float(attention_loss(x["attn_center"], KEYS)),
            "fm": float(mse(x["v"], x["noise"] - x["x0"])), "rscl": float(rscl)}


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    pairs = [(ours(inputs(s)), theirs(args.authors, inputs(s))) for s in range(args.seeds)]
    print(f"EraseAnything loss terms, {args.seeds} seeds, eta {ETA}, tau {TAU}, K {K_IRR} irrelevant prompts")
    for term in ("esd", "attn", "fm", "rscl"):
        print(row(f"L_{term}: ours vs theirs", [o[term] for o, _ in pairs], [t[term] for _, t in pairs]))
    print("seed 0 theirs:", {k: round(v, 6) for k, v in pairs[0][1].items()})


if __name__ == "__main__":
    main()
