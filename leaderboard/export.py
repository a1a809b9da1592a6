"""The leaderboard as CSV, JSON, Markdown or LaTeX (one row per task instance x method config)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict

from bench.errors import BenchError
from bench.registry import Registry
from bench.store import Store
from leaderboard.queries import BoardRow, leaderboard_rows

COLUMNS = ("task", "task_label", "method", "config_label", "hardware", "metric", "n", "mean", "std", "ci_low",
           "ci_high", "ci_method")


def _rows(store: Store, registry: Registry, task: str | None) -> list[BoardRow]:
    return [row for rows in leaderboard_rows(store, registry, task=task).values() for row in rows]


def to_csv(rows: list[BoardRow]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(asdict(row))
    return buffer.getvalue()


def to_json(rows: list[BoardRow]) -> str:
    return json.dumps([{k: v for k, v in asdict(r).items() if k in COLUMNS} for r in rows], indent=2) + "\n"


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def to_markdown(rows: list[BoardRow]) -> str:
    lines = ["| task | method | config | metric | n | mean | std | 95% CI |", "|---|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        task = r.task + (f" ({r.task_label})" if r.task_label else "")
        lines.append(f"| {task} | {r.method} | {r.config_label} | {r.metric} | {r.n} | {_fmt(r.mean)} | "
                     f"{_fmt(r.std)} | [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] |")
    return "\n".join(lines) + "\n"


_TEX_ESCAPES = str.maketrans({"\\": r"\textbackslash{}", "_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#",
                               "$": r"\$", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}"})


def _tex(text: str) -> str:
    return text.translate(_TEX_ESCAPES)


def to_latex(rows: list[BoardRow]) -> str:
    lines = [r"\begin{tabular}{lllrrrl}", r"\toprule",
             r"Task & Method & Metric & $n$ & Mean & Std & 95\% CI \\", r"\midrule"]
    for r in rows:
        task = r.task + (f" ({r.task_label})" if r.task_label else "")
        method = r.method + (f" ({r.config_label})" if r.config_label else "")
        lines.append(f"{_tex(task)} & {_tex(method)} & {_tex(r.metric)} & {r.n} & {_fmt(r.mean)} & {_fmt(r.std)} & "
                     f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


RENDERERS = {"csv": to_csv, "json": to_json, "md": to_markdown, "latex": to_latex}


def render(store: Store, registry: Registry, fmt: str, task: str | None = None) -> str:
    if fmt not in RENDERERS:
        raise BenchError(f"unknown export format {fmt!r}; allowed: {', '.join(RENDERERS)}")
    return RENDERERS[fmt](_rows(store, registry, task))
