"""`bench claims --format json|md|csv`: the verdicts as data, one row per claim, readable when piped.

The rows are what the claims table shows (the store's verdicts, or the verdict lock's reference run where nothing
is stored), flat and unwrapped: a terminal's table folds its columns to the window, a file gets every character.
Written here rather than with pandas: flat rows of strings, numbers and flags need the standard library only.
"""

from __future__ import annotations

import csv
import io
import json
import math

from leaderboard.claims import Paper, Verdict

FIELDS = ("paper", "claim", "role", "kind", "scale", "seeds", "verdict", "control", "switched", "fragile", "source",
          "paper_value", "ours", "quantity", "estimate", "ci_low", "ci_high", "n", "interval", "threshold", "p",
          "p_adjusted", "holm_level", "seeds_needed", "cpu_s_needed", "cells", "detail")
FORMATS = ("json", "md", "csv")


def verdict_rows(paper: Paper, verdicts: list[Verdict]) -> list[dict]:
    """One flat row per verdict, in the claims file's order: the interval it rests on as numbers (null where there is
    none), and each cell's mean, interval and n."""
    return [{"paper": paper.slug, "claim": v.claim.id, "role": v.claim.role, "kind": v.claim.kind,
             "scale": v.claim.scale, "seeds": v.claim.seeds, "verdict": v.verdict, "control": v.control,
             "switched": v.switched, "fragile": bool(v.claim.fragile) or "fragile: float rounding" in v.detail,
             "source": v.source, "paper_value": v.paper_text, "ours": v.ours_text, **_evidence(v),
             "detail": v.detail} for v in verdicts]


def _evidence(v: Verdict) -> dict:
    e = v.evidence
    if e is None:
        return {k: None for k in ("quantity", "estimate", "ci_low", "ci_high", "n", "interval", "threshold", "p",
                                  "p_adjusted", "holm_level", "seeds_needed", "cpu_s_needed")} | {"cells": []}
    return {"quantity": e.quantity, "estimate": _number(e.estimate), "ci_low": _number(e.low),
            "ci_high": _number(e.high), "n": e.n, "interval": e.method, "threshold": _number(e.threshold),
            "p": _number(e.p), "p_adjusted": _number(e.p_adjusted), "holm_level": _number(e.level),
            "seeds_needed": e.seeds_needed, "cpu_s_needed": _number(e.cost_s),
            "cells": [{"label": c.label, "mean": _number(c.mean), "ci_low": _number(c.low), "ci_high": _number(c.high),
                       "n": c.n} for c in e.cells]}


def _number(x) -> float | None:
    """A float for JSON and CSV; None (null) where it is missing or not finite."""
    return None if x is None or not math.isfinite(float(x)) else float(x)


def render_rows(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({**row, "cells": json.dumps(row["cells"], ensure_ascii=False)} for row in rows)
        return buffer.getvalue()
    if fmt == "md":
        lines = ["| " + " | ".join(FIELDS) + " |", "|" + "---|" * len(FIELDS)]
        lines += ["| " + " | ".join(_cell(row[f]) for f in FIELDS) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    raise ValueError(f"format {fmt!r} unknown; allowed: {', '.join(FORMATS)}")


def _cell(value) -> str:
    """A Markdown table cell: pipes escaped, line breaks flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")
