"""Typed configs: build a method's or task's frozen `Config` from plain values, with checks.

`--set key=value` on the CLI and the configs in grid YAML files both come through `coerce`,
so a wrong type or an unknown key is the same one-line error everywhere.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
import types
import typing
from typing import Any, Iterable, Mapping

import yaml

from bench.errors import BenchError


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


def coerce(tp: Any, value: Any) -> Any:
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
    """A command-line word as int, float, bool, None, or YAML (lists); text otherwise."""
    word = text.strip()
    for convert in (int, float):
        try:
            return convert(word)
        except ValueError:
            pass
    lowered = word.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null", "~"):
        return None
    return yaml.safe_load(word)


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
    try:
        return config_cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise BenchError(f"invalid config for {owner}: {exc}") from None


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
        if key.startswith("task."):
            task[key[len("task."):]] = text
        else:
            method[key.removeprefix("method.")] = text
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
