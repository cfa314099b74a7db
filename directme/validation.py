"""Strict checks of data read from files and dicts (agent configs, annotation files), done once at load time
so that a wrong type, a value out of range or a hostile file is refused there, naming the key path, instead
of surfacing later as a traceback (or a hang) at observe, ask or save time.

- ``parse_dataclass(cls, data, path)``: a frozen config dataclass from a mapping, strictly (pydantic v2 strict
  mode over the dataclass's fields): booleans only from booleans (``'false'``, ``'no'`` and ``0`` are refused),
  integers only from integers (not ``2.5``, not ``True``, within +-2**31), floats from numbers (not strings,
  finite), strings from strings; unknown keys are refused; then the dataclass's own range checks
  (``__post_init__``) run. Errors read ``memory.relocalisation.enabled: expected a boolean (true or false),
  got 'false'``.
- ``parse_options(cls, options, kind, path)``: a backend's ``options`` mapping (an answerer's, a perception
  backend's) as its config dataclass, through ``parse_dataclass``; an unknown key is named with the known ones
  (``unknown policy answerer options ['x'] in answerer.options; known: [...]``).
- ``check_section(section, path, positive=..., ...)``: the type and range checks a config dataclass runs in its
  ``__post_init__`` (so a section built in code is checked like one read from a file): each field of its declared
  type (bool, int, float: finite), then > 0, integers >= 1, fractions in [0, 1], >= 0; ``memory.map.voxel_m must
  be > 0, got -1``.
- ``check_plain_data``: free-form mappings (``perception.options``, ``answerer.options``) hold plain JSON data
  (string keys; None, booleans, integers, finite floats, strings, lists, mappings) of bounded size and depth,
  so a config that loads can always be saved and compared.
- ``load_yaml`` / ``load_json``: text to data. YAML aliases (``*name``, merge keys ``<<: *name``) are refused
  in config files: a few lines of anchors and aliases expand to billions of nodes when traversed (a "billion
  laughs" document loads instantly and then hangs ``Agent.save`` or any copy). Documents nested deeper than
  ``MAX_DEPTH`` are refused before any recursive parser sees them, and files over their size limit are
  refused unread.

pydantic and yaml are imported on first use, so ``import directme`` stays numpy-only.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import numbers
import re
import typing
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from .errors import InvalidInputError
from .types import describe

MAX_DEPTH = 64  # nesting of a JSON/YAML document (an annotation file needs about 6)
MAX_CONFIG_BYTES = 1 << 20  # a config file is a few kB
MAX_DATA_NODES = 100_000  # values in one free-form options mapping, aliases/shared references counted each time
MAX_STRING_CHARS = 1 << 20
INT_LIMIT = 2 ** 31  # integer settings lie in [-2**31, 2**31)
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_EXPECTED = {"bool_type": "expected a boolean (true or false)", "int_type": "expected an integer",
             "float_type": "expected a number", "string_type": "expected a string",
             "finite_number": "expected a finite number", "tuple_type": "expected a list",
             "dict_type": "expected a mapping", "extra_forbidden": "unknown key", "missing": "missing value",
             "list_type": "expected a list", "mapping_type": "expected a mapping"}


# ---------------------------------------------------------------- config dataclasses


def _plain_scalar(value: Any) -> Any:
    """numpy scalars as the Python scalars they are (np.int64 -> int); anything else unchanged."""
    kind = type(value).__module__
    if kind == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


@functools.lru_cache(maxsize=None)
def _model(cls: type):
    """A strict pydantic model with ``cls``'s fields (all optional: only the keys given are validated)."""
    from typing import Annotated

    from pydantic import ConfigDict, Field, create_model

    hints = typing.get_type_hints(cls)
    spec = {}
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if hint is int:
            hint = Annotated[int, Field(ge=-INT_LIMIT, lt=INT_LIMIT)]
        spec[f.name] = (hint, None)
    config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False, arbitrary_types_allowed=True)
    return create_model(f"{cls.__name__}Fields", __config__=config, **spec)


def _is_tuple_hint(hint: Any) -> bool:
    if typing.get_origin(hint) is tuple:
        return True
    return any(typing.get_origin(a) is tuple for a in typing.get_args(hint))  # Optional[tuple[...]]


def _is_mapping_hint(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    return origin is not None and isinstance(origin, type) and issubclass(origin, Mapping)


def validation_message(exc: Any, path: str, limit: int = 3) -> str:
    """One line per pydantic error (at most ``limit``): ``path.key: expected ..., got ...``."""
    lines = []
    for err in exc.errors()[:limit]:
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"] if p != "[key]")
        where = (path + loc if path else loc.lstrip(".")) or "value"
        expected = _EXPECTED.get(err["type"]) or err["msg"].replace("Input should be", "expected")
        if err["type"] == "value_error":
            expected = err["msg"].removeprefix("Value error, ")
        got = describe(err.get("input"))
        if err["type"] == "missing" or got in expected:
            lines.append(f"{where}: {expected}")
        else:
            lines.append(f"{where}: {expected}, got {got}")
    more = exc.error_count() - len(lines)
    return "; ".join(lines) + (f" (and {more} more)" if more > 0 else "")


def parse_dataclass(cls: type, data: Any, path: str, kind: str = "keys") -> Any:
    """``cls(**data)`` with every given value type-checked strictly first (see the module docstring);
    ``path`` (``"memory.map"``) prefixes every message; ``kind`` names the keys in the unknown-key message."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"{path}: expected a mapping of its fields, got {describe(data)}")
    known = [f.name for f in dataclasses.fields(cls)]
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise InvalidInputError(f"{path}: keys must be strings, got {describe(bad_keys[0])}")
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InvalidInputError(f"unknown {kind} {unknown} in {path}; known: {sorted(known)}")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for key, value in data.items():
        value = _plain_scalar(value)
        if dataclasses.is_dataclass(hints[key]) and isinstance(value, Mapping):  # a nested section
            value = parse_dataclass(hints[key], value, f"{path}.{key}")
        if _is_tuple_hint(hints[key]) and isinstance(value, list):
            value = tuple(_plain_scalar(v) for v in value)
        if _is_mapping_hint(hints[key]) and isinstance(value, Mapping):
            check_plain_data(value, f"{path}.{key}")
        values[key] = value
    from pydantic import ValidationError

    try:
        checked = _model(cls).model_validate(values)
    except ValidationError as exc:
        raise InvalidInputError(validation_message(exc, path)) from None
    try:
        return cls(**{k: getattr(checked, k) for k in values})
    except InvalidInputError as exc:
        raise InvalidInputError(_under(path, str(exc))) from None


def _under(path: str, msg: str) -> str:
    """``msg`` placed under the key path ``path``: a message that starts with the path, or with its tail
    (``counting.min_obs ...`` under ``answerer.options.counting``), is completed; any other is prefixed."""
    parts = path.split(".")
    for i in range(len(parts)):
        tail = ".".join(parts[i:])
        if msg.startswith(tail + ".") or msg.startswith(tail + ":") or msg.startswith(tail + " "):
            return ".".join(parts[:i] + [msg]) if i else msg
    return f"{path}: {msg}"


def parse_options(cls: type, options: Any, kind: str, path: str) -> Any:
    """A backend's ``options`` mapping as its config dataclass ``cls`` (``parse_dataclass``: strict types, unknown
    keys named with the known ones, then ``cls``'s own range checks); an instance of ``cls`` is taken as is.
    ``kind`` names the options in messages ("policy answerer options"), ``path`` is where they sit in the
    agent config ("answerer.options")."""
    if isinstance(options, cls):
        return options
    if not isinstance(options, Mapping):
        raise InvalidInputError(f"{path}: {kind} must be a mapping, got {type(options).__name__}")
    return parse_dataclass(cls, options, path, kind)


_KIND_WORDS = {"bool": "a boolean (true or false)", "int": "an integer", "float": "a finite number"}


def number_or_nan(v: Any) -> float:
    """``v`` as a float (NaN for a value of the wrong type: every range check then fails, naming it)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return math.nan
    try:
        return float(v)
    except OverflowError:
        return math.inf


def check_section(section: Any, path: str, positive: tuple[str, ...] = (), at_least_one: tuple[str, ...] = (),
                  unit: tuple[str, ...] = (), non_negative: tuple[str, ...] = ()) -> None:
    """The type and range checks of a config dataclass (see the module docstring); ``path`` is the section's
    key path (``memory.map``; "" for a root), and every message names ``path.field``."""
    def where(name: str) -> str:
        return f"{path}.{name}" if path else name

    for fd in dataclasses.fields(section):
        declared = fd.type if isinstance(fd.type, str) else getattr(fd.type, "__name__", "")
        v = getattr(section, fd.name)
        ok = (isinstance(v, bool) if declared == "bool" else
              isinstance(v, numbers.Integral) and not isinstance(v, bool) if declared == "int" else
              isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) if declared == "float"
              else True)
        if not ok:
            raise InvalidInputError(f"{where(fd.name)}: expected {_KIND_WORDS[declared]}, got {describe(v)}")
    for names, test, words in ((positive, lambda x: x > 0, "> 0"), (at_least_one, lambda x: x >= 1, ">= 1"),
                               (unit, lambda x: 0 <= x <= 1, "in [0, 1]"), (non_negative, lambda x: x >= 0, ">= 0")):
        for name in names:
            if not test(number_or_nan(getattr(section, name))):
                raise InvalidInputError(f"{where(name)} must be {words}, got {getattr(section, name)!r}")


# ---------------------------------------------------------------- free-form data


def check_plain_data(value: Any, path: str, *, max_nodes: int = MAX_DATA_NODES, max_depth: int = MAX_DEPTH) -> None:
    """Refuse anything but plain JSON data (see the module docstring) of at most ``max_nodes`` values (shared
    references counted each time they occur, as a save would write them) nested at most ``max_depth`` deep."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    nodes = 0
    while stack:
        v, where, depth = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise InvalidInputError(f"{path}: more than {max_nodes} values (counting repeated references, as a "
                                    "save writes them): options must be small plain data")
        if depth > max_depth:
            raise InvalidInputError(f"{where}: nested deeper than {max_depth} levels")
        v = _plain_scalar(v)
        if v is None or isinstance(v, bool):
            continue
        if isinstance(v, int):
            if abs(v) >= 2 ** 63:
                raise InvalidInputError(f"{where}: integer out of range (|x| < 2**63), got {describe(v)}")
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise InvalidInputError(f"{where}: expected a finite number, got {v!r}")
        elif isinstance(v, str):
            if len(v) > MAX_STRING_CHARS:
                raise InvalidInputError(f"{where}: string of {len(v)} characters (at most {MAX_STRING_CHARS})")
        elif isinstance(v, Mapping):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise InvalidInputError(f"{where}: keys must be strings, got {describe(k)}")
                stack.append((item, f"{where}.{k}", depth + 1))
        elif isinstance(v, (list, tuple)):
            stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(v))
        else:
            raise InvalidInputError(f"{where}: expected plain data (null, boolean, number, string, list or "
                                    f"mapping), got {type(v).__name__} {describe(v)}")


# ---------------------------------------------------------------- text formats


def check_json_depth(text: str, source: str, max_depth: int = MAX_DEPTH) -> None:
    """Refuse JSON nested deeper than ``max_depth`` before a recursive parser sees it (strings skipped)."""
    if text.count("[") + text.count("{") <= max_depth:
        return
    depth = 0
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > max_depth:
                line = text.count("\n", 0, m.start()) + 1
                raise InvalidInputError(f"{source}: line {line}: nested deeper than {max_depth} levels; "
                                        "this is not an annotation/config file (or it is corrupt)")
        elif c in "]}":
            depth -= 1


def load_json(text: str, source: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` with the depth check first; numbers too large for a float are refused, and so are
    NaN/Infinity (not JSON)."""
    check_json_depth(text, source, max_depth)

    def bad_constant(name: str) -> Any:
        raise InvalidInputError(f"{source}: {name} is not a JSON number; write a finite number or null")

    try:
        return json.loads(text, parse_constant=bad_constant, parse_float=_finite_float(source))
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{source}: line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg}); "
                                "the file may be truncated or partial") from None
    except (ValueError, RecursionError) as exc:  # int() digit limit; RecursionError cannot happen after the check
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"{source}: not valid JSON ({exc})") from None


def _finite_float(source: str):
    def parse(text: str) -> float:
        v = float(text)
        if not math.isfinite(v):
            raise InvalidInputError(f"{source}: number {describe(text)} is too large for a float")
        return v
    return parse


def read_text(path: Union[str, Path], what: str, max_bytes: Optional[int] = None) -> str:
    """A file's text as UTF-8 (a BOM is skipped), or InvalidInputError naming the file: missing, too large,
    or another encoding (UTF-16 files are recognised by their BOM or NUL bytes and named)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"{what} {p} not found")
    if max_bytes is not None and p.stat().st_size > max_bytes:
        raise InvalidInputError(f"{what} {p} is {p.stat().st_size} bytes, more than the {max_bytes} a {what} may be")
    raw = p.read_bytes()
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) >= 2 and b"\x00" in raw[:64]):
        raise InvalidInputError(f"{what} {p} is UTF-16 (or binary), not UTF-8; re-save it as UTF-8")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(f"{what} {p}: line {line}: not UTF-8 text (byte {raw[exc.start]:#04x} at offset "
                                f"{exc.start}); re-save it as UTF-8") from None


def load_yaml(text: str, source: str, max_depth: int = MAX_DEPTH) -> Any:
    """One YAML document with the safe loader, refusing aliases and nesting deeper than ``max_depth``."""
    import yaml

    class Loader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                ev = self.peek_event()
                raise InvalidInputError(
                    f"{source}: line {ev.start_mark.line + 1}: YAML alias *{ev.anchor}: config files may not use "
                    "anchors and aliases (&name / *name / <<: *name); write the values out")
            self.depth += 1
            if self.depth > max_depth:
                raise InvalidInputError(f"{source}: nested deeper than {max_depth} levels")
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    try:
        return yaml.load(text, Loader=Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"{source}: not valid YAML ({describe(str(exc), 300)})") from None
    except (ValueError, OverflowError) as exc:  # e.g. a timestamp out of range
        if isinstance(exc, InvalidInputError):
            raise
        raise InvalidInputError(f"{source}: not valid YAML ({describe(str(exc), 300)})") from None
