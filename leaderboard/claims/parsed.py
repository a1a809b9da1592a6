"""YAML files (the claims files, the verdict locks) parsed once per content.

The leaderboard reads the same files again and again: the task page read all nineteen claims files twice (the
methods' fidelity, then the papers' values), and a running server reads every claims file and lock for each overview
it recomputes. Parsing is nearly all of that (libyaml builds the nodes, Python every object: some 10 ms a file);
reading the text is not. So the text is read every time and parsed again whenever it differs from the text last
parsed: keyed by the content, not the modification time, which the kernel stamps in ticks of a few milliseconds (a
file rewritten twice within one, at the same size, would look unchanged). Each caller gets its own copy (unpickled:
a twentieth of a parse), so nothing a caller changes reaches the cache.
"""

from __future__ import annotations

import pickle
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where installed: ten times faster
IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")

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
    data = yaml.load(text, Loader=LOADER)
    with _lock:
        _parsed[key] = (text, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return data
