"""YAML files (the claims files, the verdict locks) parsed once per content.

The leaderboard reads the same files again and again: the task page read all nineteen claims files twice (the
methods' fidelity, then the papers' values), and a running server reads every claims file and lock for each overview
it recomputes. Parsing is nearly all of that (libyaml builds the nodes, Python every object: some 10 ms a file);
reading the text is not. So the text is read every time and parsed again whenever it differs from the text last
parsed: keyed by the content, not the modification time, which the kernel stamps in ticks of a few milliseconds (a
file rewritten twice within one, at the same size, would look unchanged). Each caller gets its own copy (unpickled:
a twentieth of a parse), so nothing a caller changes reaches the cache.

Across processes the parse is kept on disk too, under this machine's cache root (bench.context: $BENCH_CACHE_DIR,
~/.cache/icml2025-bench by default), one pickle per text named by the SHA-256 of the text and of the parser's version:
`bench claims` reads nineteen claims files and nineteen locks each time it runs, and parsing them was a third of its
second. Like Python's own bytecode cache it is correct by construction (a different text has another name) and
optional: a missing, unreadable or corrupt entry is parsed again, and one that cannot be written is not kept.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from bench.context import default_cache_root

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where installed: ten times faster
IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
# what reading back a missing, truncated or foreign cache entry raises: it is parsed again
_UNREADABLE = (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError,
               IndexError, KeyError)

_parsed: dict[str, tuple[str, bytes]] = {}  # path -> (the text last parsed, its data pickled)
_lock = threading.Lock()  # the app's sessions run in threads


def read_yaml(path: Path, encoding: str | None = None) -> Any:
    """yaml.load of the file's text (read with `encoding`, the locale's by default) with the safe loader, parsed
    again only when the text changed (the data is a function of the text alone, whatever decoded it); a YAMLError
    or OSError propagates, and nothing is kept of it."""
    return _parsed_text(path, path.read_text(encoding=encoding))


def read_yaml_naming(path: Path, names: Iterable[str], encoding: str | None = None) -> Any | None:
    """read_yaml, or None, unparsed, where no string in the file can equal one of `names` (nor str() of a key or
    value): the task page looks for one task's and a few methods' names in nineteen claims files, most of which
    never mention them."""
    text = path.read_text(encoding=encoding)
    return _parsed_text(path, text) if _could_spell(text, names) else None


def _could_spell(text: str, names: Iterable[str]) -> bool:
    """Whether YAML `text` could hold a string equal to one of `names`, or a scalar whose str() is one. A string is
    spelled out in the text (folding a line only adds a space) unless a double-quoted scalar's escapes make it (a
    backslash: then it could); str() of a number, date, boolean or null ('1000', '2025-01-01', 'True', 'None') is
    never a lowercase identifier but for 'inf' and 'nan'. So the answer is "no" only for such names, none of them
    in a text without a backslash."""
    names = list(names)
    if "\\" in text or not all(IDENTIFIER.fullmatch(n) and n not in ("inf", "nan") for n in names):
        return True
    return any(name in text for name in names)


def _parsed_text(path: Path, text: str) -> Any:
    key = str(path)
    with _lock:
        kept = _parsed.get(key)
    if kept is not None and kept[0] == text:
        return pickle.loads(kept[1])
    kept_on_disk = _disk_entry(text)
    read = _read_entry(kept_on_disk)
    if read is not None:
        data, pickled = read
    else:
        data = yaml.load(text, Loader=LOADER)
        pickled = pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
        _write_entry(kept_on_disk, pickled)
    with _lock:
        _parsed[key] = (text, pickled)
    return data


def _disk_entry(text: str) -> Path:
    digest = hashlib.sha256(f"{yaml.__version__} {LOADER.__name__}\n{text}".encode()).hexdigest()
    return default_cache_root() / "parsed-yaml" / f"{digest}.pickle"


def _read_entry(entry: Path) -> tuple[Any, bytes] | None:
    """(the data, its pickle) where the entry is there and loads, else None."""
    try:
        pickled = entry.read_bytes()
        return pickle.loads(pickled), pickled
    except _UNREADABLE:
        return None


def _write_entry(entry: Path, pickled: bytes) -> None:
    """Written whole or not at all (a temporary file renamed over it: a reader never sees half an entry)."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=entry.parent, suffix=".tmp", delete=False) as tmp:
            tmp.write(pickled)
        os.replace(tmp.name, entry)
    except OSError:
        pass  # a read-only or full cache root: the text was parsed, and is parsed again next time
