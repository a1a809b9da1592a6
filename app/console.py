"""Where the commands print: `out` (stdout: tables and results, for files and pipes) and `err` (stderr: progress,
notes and the one-line errors)."""

import os
import sys

from rich.console import Console

PIPED_WIDTH = 320  # columns of stdout piped to a file or a program: a claims table keeps a line or two per claim


def _stdout_width() -> int | None:
    """None (the terminal's own width, or COLUMNS) on a terminal; piped, PIPED_WIDTH instead of rich's 80 columns,
    which folded a six-claim table into 400 lines."""
    return None if sys.stdout.isatty() or os.environ.get("COLUMNS") else PIPED_WIDTH


out = Console(width=_stdout_width())
err = Console(stderr=True)
