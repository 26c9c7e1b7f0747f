"""One converter for settings as users write them: a name (camelCase, snake_case or kebab-case) to a
``Settings`` field, and a value (TOML, JSON, an environment string) to that field's type, with every
number finite and in its field's range. The rules live in each field's metadata (``number``, ``choice``,
``url``); the type dispatch is cattrs'."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import Field, dataclass, fields
from functools import cache
from typing import TYPE_CHECKING, Any, get_type_hints

if TYPE_CHECKING:
    from cattrs import Converter

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


class BadValue(ValueError):
    """What is wrong with a value, worded to follow "setting 'x' ..."."""


@dataclass(frozen=True)
class Range:
    low: float
    high: float
    unit: str = ""  # "seconds", "tokens"...


def number(low: float, high: float, unit: str = "") -> dict[str, Any]:
    """Field metadata: a number from ``low`` to ``high`` (inclusive)."""
    return {"range": Range(low, high, unit)}


def choice(*options: str) -> dict[str, Any]:
    return {"choices": options}


def switch() -> dict[str, Any]:
    """Field metadata: "off" or "on"; true and false are taken for them."""
    return {"choices": ("off", "on"), "booleans": ("off", "on")}


URL = {"url": True}


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def show(value: Any) -> str:
    """A value as an error message quotes it: never huge."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10 ** 18:
        return f"a {int(abs(value).bit_length() * 0.30103) + 1}-digit number"  # str() refuses over 4,300 digits
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- the value hooks, by type

def _bool(value: Any, _: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
        return value.strip().lower() in TRUE
    raise BadValue("must be true or false")


def _int(value: Any, _: Any) -> int:
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            try:
                value = float(value)  # "1e3"
            except ValueError:
                raise BadValue("must be a whole number") from None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadValue("must be a whole number")
    return value


def _float(value: Any, _: Any) -> float:
    if isinstance(value, bool):
        raise BadValue("must be a number")
    try:
        out = float(value.strip()) if isinstance(value, str) else float(value) if isinstance(value, int | float) \
            else None
    except ValueError:
        raise BadValue("must be a number") from None
    except OverflowError:
        raise BadValue("must be a finite number") from None
    if out is None:
        raise BadValue("must be a number")
    if not math.isfinite(out):
        raise BadValue("must be a finite number")
    return out


def _str(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise BadValue("must be a string")
    return value


def _names(value: Any, _: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise BadValue("must be a list of model names")
    return tuple(i.strip() for i in items if i.strip())


@cache
def converter() -> Converter:
    """Built on first use (cattrs takes ~30 ms to import)."""
    from cattrs import Converter

    out = Converter()
    for kind, hook in ((bool, _bool), (int, _int), (float, _float), (str, _str)):
        out.register_structure_hook(kind, hook)
    out.register_structure_hook_func(lambda kind: kind == tuple[str, ...], _names)
    return out


# ---------------------------------------------------------------- the fields of a settings class

class Fields:
    """The user-settable fields of a settings dataclass, their names as users write them, and their rules."""

    def __init__(self, cls: type, exclude: Iterable[str] = ()) -> None:
        skip = set(exclude)
        self.fields: dict[str, Field[Any]] = {f.name: f for f in fields(cls) if f.name not in skip}
        hints = get_type_hints(cls)
        self.types: dict[str, Any] = {name: hints[name] for name in self.fields}
        self.aliases = {camel(name): name for name in self.fields}

    def name(self, key: str) -> str | None:
        """The field a user's key names (``maxIterations``, ``max_iterations``, ``max-iterations``), or None."""
        name = self.aliases.get(key) or key.replace("-", "_")
        return name if name in self.fields else None

    def suggest(self, key: str) -> str:
        """" (did you mean 'maxTokens'?)" for a near miss, else ""."""
        close = difflib.get_close_matches(key, [*self.aliases, *self.fields], n=1, cutoff=0.75)
        return f" (did you mean {close[0]!r}?)" if close else ""

    def default(self, name: str) -> Any:
        return self.fields[name].default

    def convert(self, name: str, value: Any) -> Any:
        """``value`` as field ``name`` holds it, or ``BadValue`` saying what it must be and what the default is."""
        meta: Mapping[str, Any] = self.fields[name].metadata
        if isinstance(value, bool) and "booleans" in meta:
            value = meta["booleans"][value]
        try:
            out = converter().structure(value, self.types[name])
            if out is not None:
                _check(out, meta)
        except BadValue as exc:
            raise BadValue(f"{exc}{_rule(meta)}, not {show(value)} (default: {describe(self.default(name))})") from None
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # whatever else the conversion met
            raise BadValue(f"has a bad value {show(value)}: {exc} (default: {describe(self.default(name))})") \
                from None
        return out


def _check(value: Any, meta: Mapping[str, Any]) -> None:
    bounds: Range | None = meta.get("range")
    if bounds is not None and not bounds.low <= value <= bounds.high:
        raise BadValue("must be a whole number" if isinstance(value, int) else "must be a number")
    if "choices" in meta and value not in meta["choices"]:
        raise BadValue("must be one of " + ", ".join(meta["choices"]))
    if meta.get("url") and not value.startswith(("http://", "https://")):
        raise BadValue("must be an http(s) URL")


def _rule(meta: Mapping[str, Any]) -> str:
    bounds: Range | None = meta.get("range")
    if bounds is None:
        return ""
    unit = f" {bounds.unit}" if bounds.unit else ""
    return f" from {_num(bounds.low)} to {_num(bounds.high)}{unit}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def describe(value: Any) -> str:
    """A setting's value as a message names it."""
    if value is None:
        return "not set"
    if isinstance(value, tuple):
        return ", ".join(value) or "none"
    return str(value).lower() if isinstance(value, bool) else str(value)
