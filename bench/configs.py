"""Typed configs: build a method's or task's frozen `Config` from plain values, with checks.

`--set key=value` on the CLI and the configs in grid YAML files both come through `coerce`,
so a wrong type or an unknown key is the same one-line error everywhere.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shlex
import types
import typing
from typing import Any, Iterable, Mapping

import yaml

from bench.errors import BenchError

INT_LIMIT = 2**31 - 1  # the default bound of an integer field: |value| <= this (a Config field may state its own)
_ASCII_INT = re.compile(r"[+-]?[0-9]+")
_ASCII_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?"
                          r"|[0-9]+[eE][+-]?[0-9]+)")
_NOT_A_NUMBER = ("inf", "infinity", "nan")  # read as floats, so that they are refused as not finite
_YAML_INT = "tag:yaml.org,2002:int"
_YAML_FLOAT = "tag:yaml.org,2002:float"


class DuplicateKey(yaml.YAMLError):
    """A mapping that gives one key twice (YAML keeps the last silently)."""


def _strict_resolvers() -> dict:
    """YAML 1.1's implicit resolvers with numbers narrowed to ASCII decimal (no 0x10, 0o17, 1_000, 1:30, 010 as 8)."""
    kept = {first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_YAML_INT, _YAML_FLOAT)]
            for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    number = re.compile(rf"^(?:{_ASCII_INT.pattern}|{_ASCII_FLOAT.pattern})$")
    special = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
    for first in "+-0123456789.":
        kept.setdefault(first, [])
        kept[first].insert(0, (_YAML_FLOAT, special))
        kept[first].insert(0, (_YAML_FLOAT, number))  # ints too: the constructor below tells them apart
    return kept


class StrictLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML for configs and grid files: numbers are ASCII decimal only, and a key given twice is an error."""

    yaml_implicit_resolvers = _strict_resolvers()

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: SafeConstructor reports it
                continue
            if first is not key_node:
                raise DuplicateKey(f"key {key!r} is given twice (lines {first.start_mark.line + 1} and "
                                   f"{key_node.start_mark.line + 1}): give each key once")
        return super().construct_mapping(node, deep=deep)


def _construct_number(loader, node):
    text = loader.construct_scalar(node)
    if _ASCII_INT.fullmatch(text):
        return _int(text)
    if text.lower().lstrip("+-") in (".inf", ".nan"):
        return yaml.SafeLoader.construct_yaml_float(loader, node)
    return float(text)


def _int(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:  # more digits than Python converts (4,300): far past any bound, refused as such
        return math.inf if not text.startswith("-") else -math.inf


StrictLoader.add_constructor(_YAML_FLOAT, _construct_number)


def load_yaml(text: str) -> Any:
    """YAML text read with StrictLoader (ASCII decimal numbers, no key twice)."""
    return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a SafeLoader subclass


def field_types(config_cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(config_cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(config_cls)}


def type_name(tp: Any) -> str:
    if tp is type(None):
        return "none"
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"tuple[{type_name(typing.get_args(tp)[0])}, ...]"
    return getattr(tp, "__name__", str(tp))


def coerce(tp: Any, value: Any) -> Any:  # noqa: C901 - one branch per config type, a table read top to bottom
    """Return `value` as type `tp`, or raise TypeError. Ints widen to floats; nothing else converts."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(tp):
            try:
                return coerce(option, value)
            except TypeError:
                continue
        raise TypeError(f"expected {type_name(tp)}, got {value!r}")
    if origin is tuple:
        item_type = typing.get_args(tp)[0]
        if not isinstance(value, (list, tuple)):
            value = [value]
        return tuple(coerce(item_type, v) for v in value)
    if tp is type(None):
        if value is None:
            return None
    elif tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # an integer beyond any float
                number = math.inf
            if not math.isfinite(number):  # a cell's canonical JSON (its run_key) has no inf or nan
                shown = value if isinstance(value, float) else f"an integer of {len(str(value))} digits"
                raise TypeError(f"expected a finite float, got {shown!r} "
                                "(inf and nan cannot be stored in a run's config)")
            return number
    elif tp is str:
        if isinstance(value, str):
            return value
    else:
        raise TypeError(f"unsupported config field type {tp!r}")
    raise TypeError(f"expected {type_name(tp)}, got {value!r}")


def _scalar(text: str) -> Any:
    """A command-line word as int, float (ASCII decimal only: not 0x10, 1_000 or non-ASCII digits), bool, None, or
    YAML (lists); text otherwise."""
    word = text.strip()
    if _ASCII_INT.fullmatch(word):
        return _int(word)
    if _ASCII_FLOAT.fullmatch(word) or word.lower().lstrip("+-") in _NOT_A_NUMBER:
        return float(word)
    lowered = word.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null", "~"):
        return None
    return load_yaml(word)


def parse_text(tp: Any, text: str) -> Any:
    """Parse a command-line value for a field of type `tp` ("1e-3", "true", "0.1,0.2", "none")."""
    if tp is str:
        return text
    if typing.get_origin(tp) is tuple and typing.get_args(tp)[0] is str:
        # words stay words: "7,sieben" or "[7, sieben]" is ("7", "sieben") (YAML would read 7 as a number)
        inner = text.strip().removeprefix("[").removesuffix("]") if text.strip().startswith("[") else text
        return tuple(part.strip().strip("'\"") for part in inner.split(",") if part.strip())
    if typing.get_origin(tp) is tuple and "," in text and not text.strip().startswith("["):
        parsed: Any = [_scalar(part) for part in text.split(",")]
    else:
        parsed = _scalar(text)
    return coerce(tp, parsed)


def describe_fields(config_cls: type) -> str:
    return ", ".join(f"{name}: {type_name(tp)}" for name, tp in field_types(config_cls).items())


def build_config(config_cls: type, values: Mapping[str, Any], owner: str) -> Any:
    """Instantiate `config_cls` from `values`; unknown keys and wrong types are BenchErrors."""
    types_ = field_types(config_cls)
    kwargs = {}
    for key, value in values.items():
        if key not in types_:
            raise BenchError(f"unknown config key {key!r} for {owner}; valid keys: {describe_fields(config_cls)}")
        try:
            kwargs[key] = coerce(types_[key], value)
        except TypeError as exc:
            raise BenchError(f"{owner}.{key}: {exc}") from None
        check_bounds(config_cls, key, kwargs[key], owner)
    try:
        return config_cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise BenchError(f"invalid config for {owner}: {exc}") from None


def bounds(config_cls: type, key: str) -> tuple[int, int]:
    """(min, max) of an integer field: its own, stated as `field(metadata={"max": ..., "min": ...})`, else
    -INT_LIMIT..INT_LIMIT."""
    meta = next((f.metadata for f in dataclasses.fields(config_cls) if f.name == key), {})
    return int(meta.get("min", -INT_LIMIT)), int(meta.get("max", INT_LIMIT))


def check_bounds(config_cls: type, key: str, value: Any, owner: str) -> None:
    """An integer (or a tuple's integers) within the field's bounds, else a BenchError naming them."""
    low, high = bounds(config_cls, key)
    for item in value if isinstance(value, tuple) else (value,):
        if isinstance(item, int) and not isinstance(item, bool) and not low <= item <= high:
            shown = item if len(str(item)) <= 24 else f"an integer of {len(str(abs(item)))} digits"
            raise BenchError(f"{owner}.{key}={shown}: out of bounds; give an integer in {low}..{high}")


def config_dict(config: Any) -> dict[str, Any]:
    """The full config as plain JSON-able values (tuples become lists)."""
    out = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def split_overrides(pairs: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split `--set` pairs into (method overrides, task overrides) as raw text.

    `task.dim=20` goes to the task, `method.c=1` or a bare `c=1` to the method (always: a bare key the method lacks is
    refused by parse_overrides, with a pointer to the task's key when the task has it, never routed to the task).
    """
    method: dict[str, str] = {}
    task: dict[str, str] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise BenchError(f"bad override {pair!r}: expected key=value, e.g. --set c=0.5 or --set task.beta=0.05")
        target, name = (task, key[len("task."):]) if key.startswith("task.") else (method, key.removeprefix("method."))
        if name in target:
            raise BenchError(f"--set {key} is given twice ({target[name]!r} and {text!r}): give each key once")
        target[name] = text
    return method, task


def unknown_key(config_cls: type, key: str, owner: str, elsewhere: Mapping[str, Iterable[str]] | None = None,
                text: str = "...") -> str:
    """The one-line error for a key `config_cls` lacks: its valid keys, and when the command's task(s) have that key
    (`elsewhere`: task name -> its config's field names), the `--set task.<key>=<text>` that sets it there."""
    message = f"unknown config key {key!r} for {owner}; valid keys: {describe_fields(config_cls)}"
    holders = [name for name, fields in (elsewhere or {}).items() if key in set(fields)]
    if holders:
        which = f"the task {holders[0]} has" if len(holders) == 1 else f"the tasks {', '.join(holders)} have"
        message += f"; {which} it: --set {shlex.quote(f'task.{key}={text}')}"
    return message


def parse_overrides(config_cls: type, raw: Mapping[str, str], owner: str,
                    elsewhere: Mapping[str, Iterable[str]] | None = None) -> dict[str, Any]:
    """Typed values for raw command-line overrides of `config_cls`.

    `elsewhere`, for a method's overrides: each task of the command and its config's field names, so that a bare key
    the method lacks but a task has is refused with a pointer to `--set task.<key>=...` (unknown_key)."""
    types_ = field_types(config_cls)
    out = {}
    for key, text in raw.items():
        if key not in types_:
            raise BenchError(unknown_key(config_cls, key, owner, elsewhere, text))
        try:
            out[key] = parse_text(types_[key], text)
        except (TypeError, yaml.YAMLError) as exc:
            raise BenchError(f"{owner}.{key}={text!r}: {exc}") from None
    return out
