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
import threading
from pathlib import Path
from typing import Any

import yaml

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where installed: ten times faster

_parsed: dict[str, tuple[str, bytes]] = {}  # path -> (the text last parsed, its data pickled)
_lock = threading.Lock()  # the app's sessions run in threads


def read_yaml(path: Path, encoding: str | None = None) -> Any:
    """yaml.load of the file's text (read with `encoding`, the locale's by default) with the safe loader, parsed
    again only when the text changed (the data is a function of the text alone, whatever decoded it); a YAMLError
    or OSError propagates, and nothing is kept of it."""
    text = path.read_text(encoding=encoding)
    key = str(path)
    with _lock:
        kept = _parsed.get(key)
    if kept is not None and kept[0] == text:
        return pickle.loads(kept[1])
    data = yaml.load(text, Loader=LOADER)
    with _lock:
        _parsed[key] = (text, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    return data
