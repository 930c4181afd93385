"""Command-line option checks shared by every subcommand, run before any work starts.

Argument types (``type=`` of argparse) for numbers with bounds, and the output-path check that
keeps a command from writing over its own input (through a symlink or ``./`` too). Each check
names the option and what it expects in one line; the CLI turns it into exit status 2. Also the
one check of a library call's options object (:func:`options_object`).
"""
from __future__ import annotations

import argparse
import math
import os
from typing import Any, Callable, Iterable, TypeVar

from .errors import OptionsTypeError, UsageError

T = TypeVar("T")


def options_object(value: Any, cls: type[T], where: str) -> T:
    """``value`` when it is a ``cls`` (None: ``cls()``, every default); else an OptionsTypeError (a
    TypeError and a ValueError) in one line naming the class expected. An options object is built
    with keywords: ``cls(name=value, ...)``."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    hint = f"; build it as {cls.__name__}(**mapping)" if isinstance(value, dict) else ""
    raise OptionsTypeError(f"{where} takes its options as a {cls.__module__}.{cls.__name__}; "
                    f"got {type(value).__name__}{hint}")


def int_at_least(minimum: int) -> Callable[[str], int]:
    """argparse type: an integer >= ``minimum`` (``--limit -1`` is refused, not taken as a slice)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}; got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}; got {value}")
        return value

    parse.__name__ = f"int_at_least_{minimum}"
    return parse


def positive_number(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0; got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0; got {text}")
    return value


def _same(a: str, b: str) -> bool:
    """Whether two paths name one file or folder (symlinks, ``./`` and hard links resolved)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def written_input(folder: str | os.PathLike, names: Iterable[str],
                  inputs: Iterable[str | os.PathLike | None]) -> tuple[str, str] | None:
    """(path written, input) when a file or folder a command writes in ``folder`` under one of
    ``names`` is one of ``inputs`` or holds one (``build d/dataset.json --out d``); else None."""
    for name in names:
        target = os.path.join(os.fspath(folder), name)
        real = os.path.realpath(target)
        for given in inputs:
            if given is not None and (_same(target, os.fspath(given))
                                      or os.path.realpath(given).startswith(real + os.sep)):
                return target, os.fspath(given)
    return None


def check_output(output: str | os.PathLike, inputs: Iterable[str | os.PathLike | None], option: str,
                 kind: str = "file", writes: Iterable[str] = ()) -> None:
    """``output`` may be written: not one of ``inputs`` and not inside an existing file; a file
    output is not an existing folder, a folder output not an existing file, nor one whose files
    named ``writes`` are inputs. UsageError otherwise."""
    out = os.fspath(output)
    inputs = list(inputs)
    for given in inputs:
        if given is not None and _same(out, os.fspath(given)):
            raise UsageError(f"{option} {out} is the input {os.fspath(given)}; expected a new path "
                             "(writing there would destroy the input)")
    clash = written_input(out, writes, inputs)
    if clash:
        raise UsageError(f"{option} {out}: the command writes {clash[0]}, which is or holds the input "
                         f"{clash[1]}; expected an output folder apart from the input")
    if os.path.isdir(out) and kind == "file":
        raise UsageError(f"{option} {out} is a directory; expected a file path")
    if os.path.exists(out) and not os.path.isdir(out) and kind == "dir":
        raise UsageError(f"{option} {out} is a file; expected a directory")
    parent = os.path.dirname(os.path.abspath(out))
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent) if os.path.dirname(parent) != parent else ""
    if parent and not os.path.isdir(parent):
        raise UsageError(f"{option} {out} is under {parent}, which is a file; expected a path in a folder")


def check_distinct_outputs(outputs: Iterable[tuple[str, str | os.PathLike | None]]) -> None:
    """Two options of one command do not name one output file (the second write would replace
    the first): UsageError naming both."""
    seen: list[tuple[str, str]] = []
    for option, path in outputs:
        if path is None:
            continue
        for other, earlier in seen:
            if _same(os.fspath(path), earlier):
                raise UsageError(f"{option} {os.fspath(path)} is the {other} file {earlier}; "
                                 "expected a path of its own")
        seen.append((option, os.fspath(path)))
