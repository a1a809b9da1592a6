"""The leaderboard as CSV, JSON, Markdown or LaTeX (one row per task instance x method config x metric).

Numbers a reader pastes into a paper: the mean, std and 95 % CI of a row share one number of decimals, set by the
CI's half-width to two significant figures (a point value, one seed, keeps four significant figures); every row
says its hardware, its scale (paper-scale where a config names a hub model) and the metric's direction (↑ higher
is better, ↓ lower); CIs stay inside the metric's declared range (leaderboard.queries.summarize). Rows that tie
exactly with another of their table (same mean, std and n) are flagged. CSV and JSON keep full precision.

Rows are ranked only within their comparison group (the task instance's full config and the method-config fields
its family shares, such as a horizon T: leaderboard.queries.leaderboard_rows); `group` names the group's settings,
`rank` is shared by methods whose 95 % CIs overlap (`tied`), and `low_seeds` marks a setting with fewer than 3 seeds
or fewer than the largest setting of its task instance.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import asdict

from bench.errors import BenchError
from bench.registry import Registry
from bench.store import Store
from leaderboard.queries import BoardRow, leaderboard_rows

COLUMNS = ("task", "task_label", "method", "config_label", "hardware", "scale", "metric", "direction", "n", "mean",
           "std", "ci_low", "ci_high", "ci_method", "identical_to", "group", "rank", "tied", "low_seeds")
LATEX_PACKAGES = "booktabs"


def _rows(store: Store, registry: Registry, task: str | None, metrics: list[str] | None) -> list[BoardRow]:
    return [row for rows in leaderboard_rows(store, registry, task=task, metrics=metrics).values() for row in rows]


def direction(row: BoardRow) -> str:
    return "↑" if row.higher_is_better else "↓"


def decimals(row: BoardRow) -> int | None:
    """Decimals that show the CI's half-width to two significant figures; None for a point (one seed)."""
    half = max(row.mean - row.ci_low, row.ci_high - row.mean)
    if not (math.isfinite(half) and half > 0):
        return None
    return min(12, max(0, 1 - math.floor(math.log10(half))))


def numbers(row: BoardRow) -> tuple[str, str, str, str]:
    """(mean, std, ci_low, ci_high) as text, with one number of decimals for the row."""
    places = decimals(row)
    if places is None:
        text = f"{row.mean:.4g}"
        return text, f"{row.std:.2g}", text, text
    return tuple(f"{x:.{places}f}" for x in (row.mean, row.std, row.ci_low, row.ci_high))


def identical(rows: list[BoardRow]) -> dict[int, str]:
    """Row index -> the label of an earlier row of the same task instance and metric with exactly the same mean,
    std and n (two settings that give bit-identical results deserve a second look)."""
    seen: dict[tuple, str] = {}
    flags = {}
    for i, r in enumerate(rows):
        key = (r.task, r.task_label, r.metric, r.n, r.mean, r.std)
        label = r.method + (f" ({r.config_label})" if r.config_label else "")
        if key in seen and r.n > 0:
            flags[i] = seen[key]
        seen.setdefault(key, label)
    return flags


def _record(row: BoardRow, flag: str) -> dict:
    return {**{k: v for k, v in asdict(row).items() if k in COLUMNS}, "direction": direction(row), "identical_to": flag}


def place(row: BoardRow) -> str:
    """The rank as a reader sees it: "2", "=1" (tied: 95 % CIs overlap), "ref." or "—" (a single seed)."""
    if row.rank is None:
        return "ref." if row.reference else "—"
    return f"={row.rank}" if row.tied else str(row.rank)


def instance(row: BoardRow) -> str:
    """The task instance and comparison group: "performative (beta=0.5) · T=2000"."""
    return row.task + (f" ({row.task_label})" if row.task_label else "") + (f" · {row.group}" if row.group else "")


def seeds(row: BoardRow) -> str:
    """n, with the low-seed mark: "2 (low)"."""
    return f"{row.n} (low)" if row.low_seeds else str(row.n)


def to_csv(rows: list[BoardRow]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    flags = identical(rows)
    for i, row in enumerate(rows):
        writer.writerow(_record(row, flags.get(i, "")))
    return buffer.getvalue()


def to_json(rows: list[BoardRow]) -> str:
    flags = identical(rows)
    return json.dumps([_record(r, flags.get(i, "")) for i, r in enumerate(rows)], indent=2, ensure_ascii=False) + "\n"


def _label(row: BoardRow, flags: dict[int, str], i: int) -> str:
    method = row.method + (f" ({row.config_label})" if row.config_label else "")
    return method + (f" [= {flags[i]}]" if i in flags else "")


def to_markdown(rows: list[BoardRow]) -> str:
    lines = ["| task | rank | method | metric | n | mean | std | 95% CI | hardware | scale |",
             "|---|---|---|---|---:|---:|---:|---|---|---|"]
    flags = identical(rows)
    for i, r in enumerate(rows):
        mean, std, low, high = numbers(r)
        lines.append(f"| {instance(r)} | {place(r)} | {_label(r, flags, i)} | {r.metric} {direction(r)} | {seeds(r)} | "
                     f"{mean} | {std} | [{low}, {high}] | {r.hardware} | {r.scale} |")
    lines.append("")
    lines.append("95% CI over seeds (Student t; a percentile bootstrap for skewed values or an interval that would "
                 "leave the metric's range); ↑ higher is better, ↓ lower; [= X]: the same numbers as X. Ranked within "
                 "a task instance and group (· T=...) only; =k: tied (95% CIs overlap); (low): fewer than 3 seeds or "
                 "fewer than the instance's largest setting.")
    return "\n".join(lines) + "\n"


_TEX_ESCAPES = str.maketrans({"\\": r"\textbackslash{}", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#",
                               "$": r"\$", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}"})
_TEX_SYMBOLS = {"↑": r"$\uparrow$", "↓": r"$\downarrow$", "·": r"$\cdot$", "—": "---"}


def _tex(text: str) -> str:
    text = text.translate(_TEX_ESCAPES)
    for symbol, command in _TEX_SYMBOLS.items():
        text = text.replace(symbol, command)
    return text


def to_latex(rows: list[BoardRow]) -> str:
    """A table environment with caption and label (needs \\usepackage{booktabs}); pdflatex compiles it."""
    tasks = sorted({r.task for r in rows})
    lines = [f"% needs \\usepackage{{{LATEX_PACKAGES}}} in the preamble", r"\begin{table}[t]", r"\centering",
             r"\begin{tabular}{lllllrrrll}", r"\toprule",
             r"Task & Rank & Method & Metric & & $n$ & Mean & Std & 95\% CI & Hardware, scale \\", r"\midrule"]
    flags = identical(rows)
    for i, r in enumerate(rows):
        mean, std, low, high = numbers(r)
        lines.append(f"{_tex(instance(r))} & {_tex(place(r))} & {_tex(_label(r, flags, i))} & {_tex(r.metric)} & "
                     f"{_tex(direction(r))} & {_tex(seeds(r))} & {mean} & {std} & [{low}, {high}] & "
                     f"{_tex(r.hardware)}, {_tex(r.scale)} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}",
              r"\caption{" + _tex(f"Reproduced results on {', '.join(tasks) or 'no task'}: mean, standard "
                                  "deviation and 95% confidence interval over seeds (") + r"$\uparrow$"
              + _tex(" higher is better, ") + r"$\downarrow$" + _tex(" lower; [= X]: the same numbers as X; ranked "
                                                                   "within a task instance and group only; =k: tied, "
                                                                   "95% CIs overlap; (low): few seeds).") + "}",
              r"\label{tab:" + "-".join(t.replace("_", "-") for t in tasks[:3]) + "}", r"\end{table}"]
    return "\n".join(lines) + "\n"


RENDERERS = {"csv": to_csv, "json": to_json, "md": to_markdown, "latex": to_latex}


def render(store: Store, registry: Registry, fmt: str, task: str | None = None,
           metrics: list[str] | None = None) -> str:
    if fmt not in RENDERERS:
        raise BenchError(f"unknown export format {fmt!r}; allowed: {', '.join(RENDERERS)}")
    return RENDERERS[fmt](_rows(store, registry, task, metrics))
