"""Regenerate docs/screenshots/*.png: the app as a fresh checkout shows it, at 1280 and 400 px.

    .venv/bin/python benchmarks/screenshots.py [--out docs/screenshots]

In a temporary folder (the store `sqlite:///bench.db` relative to it, so no page shows a temporary path): every
paper shows its verdict lock's reference run, as on a fresh checkout, and the task page ranks a small grid of the
performative methods (5 seeds each, a few CPU-seconds), since a fresh checkout has no runs to rank. Then
`bench leaderboard` is served and Debian's chromium (never a browser of playwright's own) shoots the overview, a
paper's page and the task page at both widths. A page that shows the temporary folder's path is refused.

Without chromium or playwright it says so in one line and exits 2. The screenshots are only ever written from the
code that runs here, so they cannot go stale: rerun this after any change to the app.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # benchmarks._browser, when run as a script

from benchmarks._browser import chromium, chromium_installed, playwright_importable, serving, settled  # noqa: E402

PAPER = "clipped-sgd-performative"
# at a horizon no claim uses, so that every paper still shows its lock (a claim's own cells would be "insufficient
# seeds" here)
TASK_GRID = ["-m", "dicesgd", "-m", "pcsgd", "-m", "sgd", "-m", "pcsgd_optimal_step", "-t", "performative",
             "--seeds", "0-4", "--set", "T=20000"]
PAGES = (("overview", "view=overview", "div.bar"), ("paper", f"view=paper&paper={PAPER}", "div.card"),
         ("task", "view=task&task=performative", ".js-plotly-plot"))
WIDTHS = {1280: 1800, 400: 1600}  # viewport width -> height: Streamlit scrolls inside its own box, so a shot is
                                  # what a window this tall shows, the page's first screens


def unusable() -> str | None:
    """Why no screenshot can be taken here, or None."""
    if not chromium_installed():
        return "benchmarks/screenshots.py: Debian's chromium is not installed (apt-get install chromium)"
    if not playwright_importable():
        return "benchmarks/screenshots.py: playwright is not installed in this environment (pip install playwright)"
    return None


def shoot(out: Path) -> list[Path]:
    written = []
    with tempfile.TemporaryDirectory(prefix="bench-screenshots-") as tmp:
        env = {**os.environ, "BENCH_DB_URL": "sqlite:///bench.db"}
        subprocess.run([sys.executable, "-m", "bench", "grid", *TASK_GRID, "--workers", "2"], cwd=tmp, env=env,
                       check=True, capture_output=True, timeout=600)
        with serving(env, cwd=Path(tmp)) as base, chromium() as browser:
            for width, height in WIDTHS.items():
                page = browser.new_page(viewport={"width": width, "height": height})
                for name, query, ready in PAGES:
                    page.goto(f"{base}/?{query}")
                    page.locator(ready).first.wait_for(timeout=120_000)
                    settled(page)
                    if tmp in page.locator("body").text_content():
                        raise SystemExit(f"the {name} page shows the temporary folder {tmp}: not written")
                    path = out / f"{name}-{width}.png"
                    page.screenshot(path=str(path))
                    written.append(path)
                page.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="folder to write into")
    args = parser.parse_args()
    why = unusable()
    if why:
        print(why, file=sys.stderr)
        raise SystemExit(2)
    if not args.out.is_dir():
        print(f"benchmarks/screenshots.py: --out {args.out} is not a folder", file=sys.stderr)
        raise SystemExit(2)
    for path in shoot(args.out):
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


if __name__ == "__main__":
    main()
