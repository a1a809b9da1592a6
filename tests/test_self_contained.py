"""The repository stands alone: code and claims files cite the papers and docs/papers/, not notes outside it.

Docstrings, comments and claims YAML under bench/, methods/, tasks/, runners/ and leaderboard/ must not point at
reading notes that are not part of the repository ("spec §6.1", "shared/papers/<slug>.md", "../shared/..."). A
statement about a paper's method cites the paper's own section, equation, table or figure; a statement about our
CPU-scale world or an assertion threshold cites our report docs/papers/<slug>.md.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIRS = ("bench", "methods", "tasks", "runners", "leaderboard")
SUFFIXES = {".py", ".yaml", ".md"}
PATTERNS = ("spec §", "shared/papers", "../shared", "spec shared")


def _hits() -> list[str]:
    hits = []
    for top in DIRS:
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or path.suffix not in SUFFIXES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                found = [p for p in PATTERNS if p in line]
                if found:
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {', '.join(found)}: {line.strip()[:100]}")
    return hits


def test_no_references_to_notes_outside_the_repository():
    hits = _hits()
    assert not hits, "references to notes outside the repository:\n" + "\n".join(hits)
