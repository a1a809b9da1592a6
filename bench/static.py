"""Read what the registry needs from a module's source text, without importing the module.

The leaderboard needs each method's and task's Config defaults, each method's hardware and each
family's METRICS, but the modules that declare them import torch, transformers or diffusers:
importing them all costs seconds. This module computes those values from the syntax tree instead,
with a small evaluator that follows the module's own top-level names and its imports of other
modules of the repository (or of the registered plugins' packages).

It computes: literals; names bound once at a module's top level (assignments, classes, functions,
`from x import y`, `import x`); arithmetic, comparisons, f-strings, comprehensions, subscripts;
calls of a few pure builtins (len, range, sorted, ...), of pure methods of str, dict, tuple and
list values, of `Metric` and `Resources` (bench.spec), and of module-level functions whose body only
assigns local names, calls methods and returns; the fields of a `@dataclass` class, its bases
included, with their types and defaults.

Anything else raises `NotStatic`: a default made by `field(default_factory=...)` or by a call into
numpy, a name bound inside an `if` or `try`, a global rebound or mutated after its assignment
(`METRICS.update(...)` at top level), a star import. The registry then imports the module, which is
slower but always right. A module's top-level code that changes another module's globals, or a
function that rebinds a global through `global`, is not detected; tests/bench/test_registry.py
compares the static values with the imported ones for every registered method, task and family.
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.spec import Metric, Resources


class NotStatic(Exception):
    """The value cannot be computed from the source alone; the message says what stopped it."""


# names of bench.spec used as they are (light, and the values the registry hands out)
REAL = {("bench.spec", "Metric"): Metric, ("bench.spec", "Resources"): Resources}
FUNCTIONS: dict[str, Any] = {f.__name__: f for f in (len, range, sorted, tuple, list, dict, set, frozenset, zip,
                                                      enumerate, str, int, float, bool, min, max, sum, abs, round,
                                                      reversed, any, all, repr)}
CALLABLE = {id(f) for f in (*FUNCTIONS.values(), *REAL.values())}
PURE_METHODS = {
    str: {"replace", "lower", "upper", "title", "capitalize", "strip", "lstrip", "rstrip", "split", "join",
          "format", "startswith", "endswith", "removeprefix", "removesuffix", "zfill", "ljust", "rjust"},
    dict: {"items", "keys", "values", "get", "copy", "update"},  # update: on a function's own local dict
    tuple: {"index", "count"},
    list: {"index", "count", "copy", "append", "extend"},
}
TYPES = {"int": int, "float": float, "bool": bool, "str": str, "None": None, "tuple": tuple, "list": list, "dict": dict}
BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
          ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}
COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
           ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
           ast.Is: operator.is_, ast.IsNot: operator.is_not}
_MAX_DEPTH = 50  # nested function calls and name lookups


@dataclass(frozen=True)
class ModuleRef:
    name: str


@dataclass(frozen=True, eq=False)
class ClassRef:
    source: Source
    node: ast.ClassDef


@dataclass(frozen=True, eq=False)
class FunctionRef:
    source: Source
    node: ast.FunctionDef


@dataclass(frozen=True)
class _Bound:
    """A pure method of a plain value (`"a_b".replace`), called later."""

    value: Any
    name: str


@dataclass(frozen=True)
class Field:
    """One dataclass field: its type (as typing.get_type_hints gives it) and its default."""

    type: Any
    default: Any


def _stored_names(node: ast.AST) -> set[str]:
    """Every name a statement may bind or mutate (targets, imports, definitions, receivers of method calls)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            names.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in sub.names)
        elif isinstance(sub, ast.Call):  # X.update(...), register(X): X may change
            if isinstance(sub.func, ast.Attribute) and isinstance(sub.func.value, ast.Name):
                names.add(sub.func.value.id)
            names.update(a.id for a in (*sub.args, *(k.value for k in sub.keywords)) if isinstance(a, ast.Name))
        elif isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            base = sub.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                names.add(base.id)
    return names


_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]")
_OPEN, _CLOSE = re.compile(r"[([{]"), re.compile(r"[)\]}]")


def _without_bodies(text: str) -> str:
    """The source with every function body replaced by `...`: nothing read here lives in a body, and parsing
    the rest is three times faster. A body ends at the first non-blank line indented no deeper than its
    `def`; a string that spans lines at a lower indent misleads the cut, which then fails to parse."""
    lines = text.splitlines(keepends=True)
    out, i = [], 0
    while i < len(lines):
        match = _DEF.match(lines[i])
        if match is None:
            out.append(lines[i])
            i += 1
            continue
        depth = 0
        while i < len(lines):  # the signature, up to the line where its brackets close
            line = lines[i]
            out.append(line)
            i += 1
            code = line.split("#", 1)[0]
            depth += len(_OPEN.findall(code)) - len(_CLOSE.findall(code))
            if depth <= 0:
                break
        if not code.rstrip().endswith(":"):
            continue  # a one-line def (`def f(): return 1`): kept as it is
        indent = len(match.group(1))
        out.append(match.group(1) + "    ...\n")
        while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")
                                  or len(lines[i]) - len(lines[i].lstrip()) > indent):
            i += 1
    return "".join(out)


class Source:
    """One module's top-level bindings, read from its syntax tree; values computed on demand."""

    def __init__(self, reader: Reader, name: str, path: Path):
        self.reader, self.name, self.path = reader, name, path
        self.package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        self.text = path.read_text(encoding="utf-8")
        try:
            self.tree, self.cut = ast.parse(_without_bodies(self.text), filename=str(path)), True
        except SyntaxError:  # a body the cut got wrong (a string spanning lines at a lower indent): all of it
            self.tree, self.cut = ast.parse(self.text, filename=str(path)), False
        self.bindings: dict[str, tuple] = {}
        self.unsure: set[str] = set()  # bound more than once, conditionally, or mutated at import time
        self.star = False
        for stmt in self.tree.body:
            self._bind(stmt)
        self._values: dict[str, Any] = {}

    def _set(self, name: str, binding: tuple) -> None:
        if name in self.bindings:
            self.unsure.add(name)
        self.bindings[name] = binding

    def _bind(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self._set(stmt.targets[0].id, ("value", stmt.value))
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if stmt.value is not None:
                self._set(stmt.target.id, ("value", stmt.value))
        elif isinstance(stmt, (ast.ClassDef, ast.FunctionDef)):
            self._set(stmt.name, ("class" if isinstance(stmt, ast.ClassDef) else "function", stmt))
        elif isinstance(stmt, ast.ImportFrom):
            module = self._absolute(stmt.module, stmt.level)
            for alias in stmt.names:
                if alias.name == "*":
                    self.star = True
                else:
                    self._set(alias.asname or alias.name, ("from", module, alias.name))
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    self._set(alias.asname, ("module", alias.name))
                else:
                    top = alias.name.split(".")[0]
                    self._set(top, ("module", top))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            pass  # a docstring
        else:
            self.unsure.update(_stored_names(stmt))

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        base = self.package.split(".")
        base = base[:len(base) - (level - 1)] if level > 1 else base
        return ".".join([*base, *([module] if module else [])])

    def _with_body(self, node: ast.FunctionDef) -> ast.FunctionDef:
        """A top-level function as written (the tree read first has its body cut away)."""
        if not self.cut:
            return node
        full = ast.parse(self.text, filename=str(self.path))
        return next(n for n in full.body if isinstance(n, ast.FunctionDef) and n.name == node.name)

    def has(self, name: str) -> bool | None:
        """True when bound at top level, False when surely not, None when it cannot be told."""
        if name in self.unsure or (self.star and name not in self.bindings):
            return None
        return name in self.bindings

    def lookup(self, name: str, depth: int = 0) -> Any:
        if name in self._values:
            value = self._values[name]
            if value is _PENDING:
                raise NotStatic(f"{self.name}.{name} refers to itself")
            return copy.deepcopy(value) if isinstance(value, (dict, list, set)) else value
        if depth > _MAX_DEPTH:
            raise NotStatic(f"{self.name}.{name}: too deep")
        if name in self.unsure:
            raise NotStatic(f"{self.name}.{name} is bound conditionally, twice, or changed at import time")
        binding = self.bindings.get(name)
        if binding is None:
            if name in FUNCTIONS and not self.star:
                return FUNCTIONS[name]
            raise NotStatic(f"{self.name}: {name!r} is not a top-level name")
        self._values[name] = _PENDING
        try:
            kind = binding[0]
            if kind == "value":
                value = Evaluator(self, depth + 1).eval(binding[1])
            elif kind == "class":
                value = ClassRef(self, binding[1])
            elif kind == "function":
                value = FunctionRef(self, self._with_body(binding[1]))
            elif kind == "module":
                value = ModuleRef(binding[1])
            else:
                value = self.reader.attribute(binding[1], binding[2], depth + 1)
        except BaseException:
            del self._values[name]
            raise
        self._values[name] = value
        return copy.deepcopy(value) if isinstance(value, (dict, list, set)) else value


_PENDING = object()


class Evaluator:
    """Computes an expression of one module (with the local names of a comprehension or a function)."""

    def __init__(self, source: Source, depth: int, local: dict[str, Any] | None = None):
        self.source, self.depth, self.local = source, depth, dict(local or {})

    def eval(self, node: ast.expr) -> Any:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise NotStatic(f"{self.source.name}: {type(node).__name__} at line {getattr(node, 'lineno', '?')}")
        return method(node)

    def _Constant(self, node):
        return node.value

    def _Name(self, node):
        if node.id in self.local:
            return self.local[node.id]
        return self.source.lookup(node.id, self.depth)

    def _items(self, nodes) -> list:
        out = []
        for node in nodes:
            if isinstance(node, ast.Starred):
                out.extend(self.eval(node.value))
            else:
                out.append(self.eval(node))
        return out

    def _Tuple(self, node):
        return tuple(self._items(node.elts))

    def _List(self, node):
        return self._items(node.elts)

    def _Set(self, node):
        return set(self._items(node.elts))

    def _Dict(self, node):
        out = {}
        for key, value in zip(node.keys, node.values, strict=False):
            if key is None:
                out.update(self.eval(value))
            else:
                out[self.eval(key)] = self.eval(value)
        return out

    def _JoinedStr(self, node):
        return "".join(str(self.eval(v)) if not isinstance(v, ast.FormattedValue) else self._FormattedValue(v)
                       for v in node.values)

    def _FormattedValue(self, node):
        value = self.eval(node.value)
        value = {-1: value, ord("s"): str(value), ord("r"): repr(value), ord("a"): ascii(value)}[node.conversion]
        return format(value, self.eval(node.format_spec) if node.format_spec is not None else "")

    def _UnaryOp(self, node):
        return UNARY[type(node.op)](self.eval(node.operand))

    def _BinOp(self, node):
        return BINARY[type(node.op)](self.eval(node.left), self.eval(node.right))

    def _BoolOp(self, node):
        value = None
        for operand in node.values:
            value = self.eval(operand)
            if isinstance(node.op, ast.And) != bool(value):
                return value
        return value

    def _Compare(self, node):
        left = self.eval(node.left)
        for op, right_node in zip(node.ops, node.comparators, strict=False):
            right = self.eval(right_node)
            if not COMPARE[type(op)](left, right):
                return False
            left = right
        return True

    def _IfExp(self, node):
        return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)

    def _Subscript(self, node):
        return self.eval(node.value)[self.eval(node.slice)]

    def _Slice(self, node):
        return slice(*(self.eval(n) if n is not None else None for n in (node.lower, node.upper, node.step)))

    def _Attribute(self, node):
        base, attr = self.eval(node.value), node.attr
        if isinstance(base, ModuleRef):
            return self.source.reader.attribute(base.name, attr, self.depth + 1)
        if attr.startswith("_"):
            raise NotStatic(f"{self.source.name}: private attribute {attr}")
        if isinstance(base, (Metric, Resources)):
            return getattr(base, attr)
        if attr in PURE_METHODS.get(type(base), ()):
            return _Bound(base, attr)
        raise NotStatic(f"{self.source.name}: attribute {attr} of {type(base).__name__} at line {node.lineno}")

    def _Call(self, node):
        func = self.eval(node.func)
        args = self._items(node.args)
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                kwargs.update(self.eval(keyword.value))
            else:
                kwargs[keyword.arg] = self.eval(keyword.value)
        if isinstance(func, _Bound):
            return getattr(func.value, func.name)(*args, **kwargs)
        if isinstance(func, FunctionRef):
            return call_function(func, args, kwargs, self.depth + 1)
        if id(func) in CALLABLE:
            return func(*args, **kwargs)
        raise NotStatic(f"{self.source.name}: a call of {ast.unparse(node.func)} at line {node.lineno}")

    def _comprehension(self, generators, produce) -> None:
        def loop(index: int, local: dict) -> None:
            if index == len(generators):
                produce(Evaluator(self.source, self.depth, local))
                return
            gen = generators[index]
            if gen.is_async:
                raise NotStatic(f"{self.source.name}: async comprehension")
            for item in Evaluator(self.source, self.depth, local).eval(gen.iter):
                inner = dict(local)
                _assign(gen.target, item, inner, self.source)
                scope = Evaluator(self.source, self.depth, inner)
                if all(scope.eval(cond) for cond in gen.ifs):
                    loop(index + 1, inner)

        loop(0, self.local)

    def _ListComp(self, node):
        out = []
        self._comprehension(node.generators, lambda scope: out.append(scope.eval(node.elt)))
        return out

    def _SetComp(self, node):
        return set(self._ListComp(node))

    def _GeneratorExp(self, node):
        return iter(self._ListComp(node))

    def _DictComp(self, node):
        out = {}

        def produce(scope):
            out[scope.eval(node.key)] = scope.eval(node.value)

        self._comprehension(node.generators, produce)
        return out


def _assign(target: ast.expr, value: Any, local: dict, source: Source) -> None:
    if isinstance(target, ast.Name):
        local[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(t, ast.Starred) for t in target.elts):
        values = list(value)
        if len(values) != len(target.elts):
            raise NotStatic(f"{source.name}: cannot unpack {len(values)} values into {len(target.elts)}")
        for t, v in zip(target.elts, values, strict=False):
            _assign(t, v, local, source)
    else:
        raise NotStatic(f"{source.name}: assignment to {type(target).__name__}")


def call_function(func: FunctionRef, args: list, kwargs: dict, depth: int) -> Any:
    """Run a module-level function whose body only assigns local names, calls methods and returns."""
    node, source = func.node, func.source
    spec = node.args
    if depth > _MAX_DEPTH or node.decorator_list or spec.vararg or spec.kwarg or spec.posonlyargs or spec.kwonlyargs:
        raise NotStatic(f"{source.name}.{node.name}: only plain functions are read")
    names = [a.arg for a in spec.args]
    defaults = dict(zip(names[len(names) - len(spec.defaults):], spec.defaults, strict=False))
    if len(args) > len(names) or set(kwargs) - set(names):
        raise NotStatic(f"{source.name}.{node.name}: arguments do not match")
    local = dict(zip(names, args, strict=False))
    for name in names[len(args):]:
        if name in kwargs:
            local[name] = kwargs[name]
        elif name in defaults:
            local[name] = Evaluator(source, depth).eval(defaults[name])
        else:
            raise NotStatic(f"{source.name}.{node.name}: argument {name} missing")
    for stmt in node.body:
        scope = Evaluator(source, depth, local)
        if isinstance(stmt, ast.Return):
            return scope.eval(stmt.value) if stmt.value is not None else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            _assign(stmt.targets[0], scope.eval(stmt.value), local, source)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            local[stmt.target.id] = scope.eval(stmt.value)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Call, ast.Constant)):
            scope.eval(stmt.value)  # a method call on a local value (out.update(...))
        else:
            raise NotStatic(f"{source.name}.{node.name}: a {type(stmt).__name__} statement at line {stmt.lineno}")
    return None


def _annotation(node: ast.expr, source: Source) -> Any:
    """An annotation as a type: builtins, `X | None`, `tuple[X, ...]`, Optional/Union/Tuple from typing."""
    import typing

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _annotation(ast.parse(node.value, mode="eval").body, source)
    if isinstance(node, ast.Constant) and node.value in (None, Ellipsis):
        return node.value
    if isinstance(node, ast.Name) and node.id in TYPES:
        return TYPES[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _annotation(node.left, source), _annotation(node.right, source)
        return (type(None) if left is None else left) | (type(None) if right is None else right)
    if isinstance(node, ast.Subscript):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        args = tuple(_annotation(item, source) for item in items)
        name = node.value.id if isinstance(node.value, ast.Name) else ""
        generic = {"tuple": tuple, "list": list, "dict": dict}.get(name)
        if generic is None and source.bindings.get(name, ())[1:] in (("typing", "Optional"), ("typing", "Union"),
                                                                      ("typing", "Tuple")):
            generic = getattr(typing, source.bindings[name][2])
        if generic is None:
            raise NotStatic(f"{source.name}: annotation {ast.unparse(node)}")
        return generic[args if len(args) > 1 else args[0]]
    raise NotStatic(f"{source.name}: annotation {ast.unparse(node)}")


def _is_dataclass_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return (isinstance(target, ast.Name) and target.id == "dataclass") or (
        isinstance(target, ast.Attribute) and target.attr == "dataclass")


def dataclass_fields(ref: ClassRef, depth: int = 0) -> dict[str, Field]:
    """Fields of a `@dataclass` class in dataclass order (bases first), with types and defaults."""
    node, source = ref.node, ref.source
    if depth > _MAX_DEPTH or not any(_is_dataclass_decorator(d) for d in node.decorator_list):
        raise NotStatic(f"{source.name}.{node.name} is not a plain @dataclass")
    if len(node.bases) > 1 or node.keywords:
        raise NotStatic(f"{source.name}.{node.name}: several bases or a metaclass")
    fields: dict[str, Field] = {}
    for base in node.bases:
        base_ref = Evaluator(source, depth + 1).eval(base)
        if not isinstance(base_ref, ClassRef):
            raise NotStatic(f"{source.name}.{node.name}: base {ast.unparse(base)} is not a class of the repository")
        fields.update(dataclass_fields(base_ref, depth + 1))
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        text = ast.unparse(stmt.annotation)
        if "ClassVar" in text:
            continue
        if "InitVar" in text or stmt.value is None:
            raise NotStatic(f"{source.name}.{node.name}.{stmt.target.id}: an InitVar or a field without default")
        value = stmt.value
        if isinstance(value, ast.Call) and ast.unparse(value.func) in ("field", "dataclasses.field"):
            keywords = {k.arg: k.value for k in value.keywords}
            if "default" not in keywords:
                raise NotStatic(f"{source.name}.{node.name}.{stmt.target.id}: field() without a plain default")
            value = keywords["default"]
        fields[stmt.target.id] = Field(_annotation(stmt.annotation, source), Evaluator(source, depth + 1).eval(value))
    return fields


class Reader:
    """Parsed modules by dotted name; `locate` maps a name to its file (None: not readable)."""

    def __init__(self, locate: Callable[[str], Path | None]):
        self.locate = locate
        self._sources: dict[str, Source | None] = {}

    def source(self, module: str) -> Source:
        if module not in self._sources:
            path = self.locate(module)
            self._sources[module] = Source(self, module, path) if path is not None else None
        source = self._sources[module]
        if source is None:
            raise NotStatic(f"module {module} is not read statically")
        return source

    def attribute(self, module: str, name: str, depth: int = 0) -> Any:
        """What `from module import name` binds."""
        if (module, name) in REAL:
            return REAL[(module, name)]
        source = self.source(module)
        known = source.has(name)
        if known is False and self.locate(f"{module}.{name}") is not None:
            return ModuleRef(f"{module}.{name}")
        return source.lookup(name, depth)

    def registered(self, module: str, kind: str) -> dict[str, Any]:
        """The keyword arguments of the module's `@method(...)` / `@task(...)` decorator, computed."""
        source = self.source(module)
        found = [d for stmt in source.tree.body if isinstance(stmt, ast.FunctionDef) for d in stmt.decorator_list
                 if isinstance(d, ast.Call) and ast.unparse(d.func).split(".")[-1] == kind]
        if len(found) != 1:
            raise NotStatic(f"{module}: {len(found)} @{kind}(...) functions")
        if found[0].args:
            raise NotStatic(f"{module}: positional arguments to @{kind}")
        return {k.arg: _Lazy(source, k.value) for k in found[0].keywords}


@dataclass(frozen=True, eq=False)
class _Lazy:
    """A decorator argument, computed only when asked for (a `skip=` function is never needed)."""

    source: Source
    node: ast.expr

    def value(self) -> Any:
        return Evaluator(self.source, 0).eval(self.node)


def locate_in(root: Path, packages: set[str]) -> Callable[[str], Path | None]:
    """Files under `root` by dotted name; outside it, modules of `packages` found on sys.path (plugins)."""

    def locate(module: str) -> Path | None:
        parts = module.split(".")
        for path in (root.joinpath(*parts).with_suffix(".py"), root.joinpath(*parts, "__init__.py")):
            if path.is_file():
                return path
        if parts[0] not in packages:
            return None
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
        return Path(origin) if origin and origin.endswith(".py") else None

    return locate
