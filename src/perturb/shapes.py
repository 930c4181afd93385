"""Shapes of JSON values, kept as data: a reader relies on a shape, and :meth:`Shape.problem` names
the first field that is off it (``flags[2]: missing key(s) 'kind'``), so a file is refused in one
line before any reader trips over it.

Imports nothing of the package: the results contract and any other file format can describe
themselves with it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


def _child(where: str, key: str) -> str:
    """The name of ``key`` inside ``where`` (a document's own keys are named bare: ``model.id``)."""
    return f"{where}.{key}" if where else key


def _at(where: str) -> str:
    return f"{where}: " if where else ""


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Shape:
    """What a value must be; ``expected`` says it in words ("an object with id")."""

    expected: str

    def problem(self, value: Any, where: str) -> str | None:
        """None when ``value`` has the shape, else one line naming ``where`` (the field's path, ""
        for a whole document) and what was expected."""
        raise NotImplementedError


@dataclass(frozen=True)
class Leaf(Shape):
    """A scalar that passes ``test`` (a string, a finite number, ...)."""

    expected: str
    test: Callable[[Any], bool]

    def problem(self, value: Any, where: str) -> str | None:
        return None if self.test(value) else f"{where} must be {self.expected}; got {_short(value)}"


@dataclass(frozen=True)
class Nullable(Shape):
    """``shape`` or null."""

    shape: Shape

    @property
    def expected(self) -> str:
        return f"{self.shape.expected} or null"

    def problem(self, value: Any, where: str) -> str | None:
        return None if value is None else self.shape.problem(value, where)


@dataclass(frozen=True)
class Obj(Shape):
    """An object with the ``required`` keys and, when present, the ``optional`` ones in their shapes;
    other keys are free (later minor versions add keys)."""

    required: Mapping[str, Shape] = field(default_factory=dict)
    optional: Mapping[str, Shape] = field(default_factory=dict)

    @property
    def expected(self) -> str:
        return "an object" + (f" with {', '.join(self.required)}" if self.required else "")

    def problem(self, value: Any, where: str) -> str | None:
        if not isinstance(value, Mapping):
            return f"{_at(where)}expected {self.expected}; got {type(value).__name__}"
        missing = [k for k in self.required if k not in value]
        if missing:
            return f"{_at(where)}missing key(s) {', '.join(map(repr, missing))}"
        for key, shape in {**self.required, **self.optional}.items():
            if key in value and (found := shape.problem(value[key], _child(where, key))):
                return found
        return None


@dataclass(frozen=True)
class ListOf(Shape):
    """A list whose every entry has the ``item`` shape."""

    item: Shape

    @property
    def expected(self) -> str:
        return f"a list (each {self.item.expected})"

    def problem(self, value: Any, where: str) -> str | None:
        if not isinstance(value, list):
            return f"{where}: expected {self.expected}; got {type(value).__name__}"
        return next((p for i, v in enumerate(value) if (p := self.item.problem(v, f"{where}[{i}]"))), None)


@dataclass(frozen=True)
class MapOf(Shape):
    """An object whose every value has the ``item`` shape (name → entry)."""

    item: Shape

    @property
    def expected(self) -> str:
        return f"an object (each value {self.item.expected})"

    def problem(self, value: Any, where: str) -> str | None:
        if not isinstance(value, Mapping):
            return f"{where}: expected {self.expected}; got {type(value).__name__}"
        return next((p for k, v in value.items() if (p := self.item.problem(v, _child(where, str(k))))), None)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


TEXT = Leaf("a string", lambda v: isinstance(v, str))
NUMBER = Nullable(Leaf("a finite number", _is_number))
COUNT = Leaf("an integer >= 0", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0)
INTEGER = Leaf("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
INTERVAL = Nullable(Leaf("a list [lo, hi] of numbers or nulls",
                         lambda v: isinstance(v, list) and len(v) == 2
                         and all(b is None or _is_number(b) for b in v)))
ANY_OBJECT = Obj()
