"""`bench claims --format json|md|csv`: the verdicts as data, one row per claim, readable when piped.

The rows are what the claims table shows (the store's verdicts, or the verdict lock's reference run where nothing
is stored), flat and unwrapped: a terminal's table folds its columns to the window, a file gets every character.
Written here rather than with pandas: flat rows of strings, numbers and flags need the standard library only.
"""

from __future__ import annotations

import csv
import io
import json

from leaderboard.claims import Paper, Verdict

FIELDS = ("paper", "claim", "role", "kind", "scale", "seeds", "verdict", "control", "fragile", "source", "paper_value",
          "ours", "detail")
FORMATS = ("json", "md", "csv")


def verdict_rows(paper: Paper, verdicts: list[Verdict]) -> list[dict]:
    """One flat row per verdict, in the claims file's order."""
    return [{"paper": paper.slug, "claim": v.claim.id, "role": v.claim.role, "kind": v.claim.kind,
             "scale": v.claim.scale, "seeds": v.claim.seeds, "verdict": v.verdict, "control": v.control,
             "fragile": bool(v.claim.fragile), "source": v.source, "paper_value": v.paper_text, "ours": v.ours_text,
             "detail": v.detail} for v in verdicts]


def render_rows(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue()
    if fmt == "md":
        lines = ["| " + " | ".join(FIELDS) + " |", "|" + "---|" * len(FIELDS)]
        lines += ["| " + " | ".join(_cell(row[f]) for f in FIELDS) + " |" for row in rows]
        return "\n".join(lines) + "\n"
    raise ValueError(f"format {fmt!r} unknown; allowed: {', '.join(FORMATS)}")


def _cell(value) -> str:
    """A Markdown table cell: pipes escaped, line breaks flattened."""
    return str(value).replace("|", "\\|").replace("\n", " ")
