"""The fenced code blocks of README.md and docs/, and how tests run them (tests/test_docs.py,
tests/test_adding_a_paper.py).

A fence's info string is its language, then optional words:

* `file=PATH`: the block is a file, written to PATH in the document's working tree before the blocks after it run;
  `append=PATH`: appended to that file;
* `skip-test: WHY` (the rest of the line): the block is not run, and WHY says why (a GPU, a cluster, data that is not
  in the repository); its `bench` commands are still parsed against the CLI, and the scripts it names must exist.

Languages: `bash` (commands, one per logical line; `a && b` runs a, then b), `python` (a script, or a file), `yaml`
and `markdown` (files only). A document runs top to bottom in a working tree, a temporary copy of the repository's
packages (`copy_tree`), so that its files (a method, a claims file) are discovered there as they would be here;
`bench` is `python -m bench` in that tree, on a temporary SQLite store, and `.venv/bin/python` this interpreter.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = ("bash", "python", "yaml", "markdown")
FILE_ONLY = ("yaml", "markdown")  # not code to run: each such block is a file another block uses
BENCH = ("bench", ".venv/bin/bench")
# the programs a runnable bash block may run, and how: argv prefixes (this interpreter stands for the project's)
PROGRAMS = {"bench": [sys.executable, "-m", "bench"], ".venv/bin/bench": [sys.executable, "-m", "bench"],
            ".venv/bin/python": [sys.executable], "mkdir": ["mkdir"], "touch": ["touch"]}
PACKAGES = ("bench", "methods", "tasks", "runners", "leaderboard", "app")  # what `python -m bench` imports
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>[^`]*)$")
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int                # the opening fence's line, 1-based
    language: str
    text: str
    file: str | None = None  # file=PATH or append=PATH
    append: bool = False     # append=PATH
    skip: str | None = None  # skip-test: the reason it is not run
    unknown: tuple[str, ...] = ()  # words of the info string this module does not know

    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def docs() -> list[Path]:
    """README.md and every markdown file under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _fenced(lines: list[str]) -> list[tuple[int, int, str]]:
    """(opening line, closing line, info string) of each fenced block, 0-based; a block closes at its own fence."""
    out, i = [], 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence = opening.group("fence")
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence), len(lines))
        out.append((i, end, opening.group("info")))
        i = end + 1
    return out


def blocks(doc: Path) -> list[Block]:
    """The fenced code blocks of a markdown file, in order."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    return [_block(doc, start + 1, info, "\n".join(lines[start + 1:end]) + "\n") for start, end, info in _fenced(lines)]


def prose(doc: Path) -> str:
    """A markdown file without its fenced blocks."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    inside = {i for start, end, _ in _fenced(lines) for i in range(start, end + 1)}
    return "\n".join(line for i, line in enumerate(lines) if i not in inside)


def _block(doc: Path, line: int, info: str, text: str) -> Block:
    head, marker, reason = info.partition("skip-test:")
    words = head.split()
    language = words[0] if words else ""
    targets = [w.partition("=") for w in words[1:] if w.startswith(("file=", "append="))]
    unknown = tuple(w for w in words[1:] if not w.startswith(("file=", "append=")))
    file = targets[0][2] if targets else None
    append = bool(targets) and targets[0][0] == "append"
    return Block(doc, line, language, text, file, append, reason.strip() if marker else None, unknown)


# ---- commands --------------------------------------------------------------------------------------------------

def logical_lines(text: str) -> list[str]:
    """A bash block's commands: continuation lines joined, comments and blank lines dropped."""
    joined = text.replace("\\\n", " ")
    return [line for line in joined.splitlines() if shlex.split(line, comments=True)]


def segments(line: str) -> list[list[str]]:
    """The commands of one line, split at `&&`."""
    out: list[list[str]] = [[]]
    for word in shlex.split(line, comments=True):
        if word == "&&":
            out.append([])
        else:
            out[-1].append(word)
    return [s for s in out if s]


def split_env(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """Leading `NAME=value` words (an environment for the command) and the command itself."""
    env = {}
    while words and _ENV.match(words[0]):
        name, _, value = words[0].partition("=")
        env[name], words = value, words[1:]
    return env, words


def is_bench(words: list[str]) -> bool:
    return bool(words) and words[0] in BENCH


@cache
def _cli():
    """The `bench` console script's click command (typer's), found through the installed entry point."""
    import importlib
    from importlib.metadata import entry_points

    import typer

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "bench"]
    module = importlib.import_module(script.module)
    apps = [typer.main.get_command(v) for v in vars(module).values() if isinstance(v, typer.Typer)]
    return next(app for app in apps if "run" in getattr(app, "commands", {}))


def parse_bench(args: list[str]) -> None:
    """Parse `bench ARGS` as the CLI would, running nothing; AssertionError naming what does not parse. A submitted
    command (`bench submit ... -- grid ...`) is parsed as well."""
    command, rest, name = _cli(), list(args), "bench"
    while hasattr(command, "commands"):
        assert rest, f"`bench {shlex.join(args)}`: no command after {name!r}"
        name = rest.pop(0)
        assert name in command.commands, f"`bench {shlex.join(args)}`: no command {name!r}"
        command = command.commands[name]
    try:
        context = command.make_context(name, rest)
    except Exception as exc:  # the CLI's own usage errors (typer vendors click: its exception types are private)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        raise AssertionError(f"`bench {shlex.join(args)}` does not parse: {message}") from None
    if name == "submit" and context.args:
        parse_bench(list(context.args))


# ---- running a document ------------------------------------------------------------------------------------------

def copy_tree(dest: Path, extra: tuple[str, ...] = ()) -> Path:
    """A copy of the repository's packages (and `extra` paths) as they are on disk, without byte code."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in (*PACKAGES, *extra):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=ignore)
        else:
            shutil.copy2(source, dest / name)
    return dest


def environment(tree: Path, store: Path) -> dict[str, str]:
    """The environment a document's commands run in: its tree first on the path, a store and a cache beside the
    store's (a temporary folder)."""
    env = {k: v for k, v in os.environ.items() if k not in ("BENCH_DB_URL", "PYTHONPATH")}
    env.update({"BENCH_DB_URL": f"sqlite:///{store}", "BENCH_CACHE_DIR": str(store.parent / "cache"),
                "PYTHONPATH": str(tree), "COLUMNS": "200"})
    return env


@dataclass(frozen=True)
class Ran:
    block: Block
    command: str
    result: subprocess.CompletedProcess


def run_document(doc_blocks: list[Block], tree: Path, env: dict[str, str], setup: dict[str, str],
                 timeout: float = 600) -> list[Ran]:
    """Run the blocks in order in `tree`: files written, python scripts and the `bench` commands of bash blocks run
    (each must exit 0), every other command looked up in `setup` (the reason it is not run here)."""
    ran = []
    for block in doc_blocks:
        if block.skip is not None:
            continue
        if block.file is not None:
            path = tree / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a" if block.append else "w", encoding="utf-8") as out:
                out.write(block.text)
        elif block.language == "python":
            ran.append(_run(block, "python", [sys.executable, "-c", block.text], tree, env, timeout))
        elif block.language == "bash":
            ran += [_run(block, shlex.join(words), [*PROGRAMS[words[0]], *words[1:]], tree, {**env, **extra}, timeout)
                    for extra, words in commands(block, setup)]
    return ran


def commands(block: Block, setup: dict[str, str]) -> list[tuple[dict[str, str], list[str]]]:
    """(environment, words) of each command of a bash block that runs: one of PROGRAMS, unless `setup` names it (the
    reason it is not run); AssertionError on any other command."""
    out = []
    for line in logical_lines(block.text):
        for words in segments(line):
            extra, command = split_env(words)
            if shlex.join(words) in setup:
                continue
            assert command and command[0] in PROGRAMS, (
                f"{block.where()}: `{shlex.join(words)}` is neither a command this test runs ({', '.join(PROGRAMS)}) "
                "nor a known set-up step (tests/test_docs.py SETUP, with why it is not run)")
            out.append((extra, command))
    return out


def _run(block: Block, label: str, argv: list[str], tree: Path, env: dict[str, str], timeout: float) -> Ran:
    result = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, (f"{block.where()}: `{label}` exited {result.returncode}\n"
                                    f"{result.stdout[-2000:]}\n{result.stderr[-3000:]}")
    return Ran(block, label, result)


# `bench` commands run one after another in one process, through the console script's entry point, as its `main`
# runs them: for many cheap read-only commands (a report's `bench claims`), one interpreter's start-up instead of many
_ONE_PROCESS = """
import contextlib, io, json, sys
from importlib.metadata import entry_points

(script,) = [e for e in entry_points(group="console_scripts") if e.name == "bench"]
main, results = script.load(), []
for argv in json.loads(sys.stdin.read()):
    sys.argv, out, code = ["bench", *argv], io.StringIO(), 0
    with contextlib.redirect_stdout(out):
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    results.append({"argv": argv, "code": code, "stdout": out.getvalue()})
sys.stdout.write(json.dumps(results))
"""


def run_in_one_process(commands: list[list[str]], cwd: Path, env: dict[str, str], timeout: float = 600) -> list[dict]:
    """`bench ARGS` for each ARGS, in one process: [{argv, code, stdout}] in order."""
    result = subprocess.run([sys.executable, "-c", _ONE_PROCESS], input=json.dumps(commands), cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)
