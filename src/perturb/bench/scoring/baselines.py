"""A baseline model's errors per corruption and severity, the denominator of ImageNet-C's CE, read
from a JSON file, a mapping, or a built-in name (``alexnet``, ``alexnet-robustbench``).

The JSON object maps each operation (name or alias, one entry per operation) to its errors in
[0, 1]: 5 at severities 1..5 (a list, or an object keyed 1..5, not all 0), or one number, the mean
error over severities 1..5 (such a baseline scores an operation only when all five ran). Three
keys are not operations: ``clean`` (the baseline's clean error, which relative mCE needs),
``source`` (where the numbers come from) and ``mce_over`` (the operations mCE averages; the
published 15 for ImageNet-C, whose 4 extra corruptions get a CE but stay out of mCE).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ...registry import REGISTRY
from ...selection import SEVERITY_LEVELS

BUILTIN_DIR = Path(__file__).resolve().parents[2] / "assets" / "baselines"
NOT_OPERATIONS = ("clean", "source", "mce_over")


def builtin_baselines() -> list[str]:
    """The names of the baselines perturb ships (``assets/baselines/<name>.json``)."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.json"))


def baseline_help() -> str:
    """``--baseline-errors``' help, the same for ``perturb bench`` and ``perturb report``."""
    return (f"a baseline model's errors per ImageNet-C corruption and severity: {' or '.join(builtin_baselines())} "
            f"(shipped, with their sources), or a JSON file ({{\"fog\": [e1, ..., e5], ...}}); the report adds "
            f"CE, mCE and relative mCE (docs/suites.md)")


@dataclass(frozen=True)
class Baseline:
    """A baseline model's errors: ``errors[op][severity]``, or ``means[op]`` where only the mean over
    severities 1..5 is known; ``clean`` its clean error; ``mce_over`` the operations mCE averages
    (None: every operation with a CE); ``name`` the file or built-in name it was read from."""

    errors: Mapping[str, Mapping[int, float]]
    means: Mapping[str, float] = field(default_factory=dict)
    clean: float | None = None
    mce_over: tuple[str, ...] | None = None
    name: str = "baseline errors"
    source: str | None = None

    def __contains__(self, op: str) -> bool:
        return op in self.errors or op in self.means


class _Pairs(list):
    """A JSON object read as its (key, value) pairs, so that a repeated key is seen."""


def _resolve(source: str | os.PathLike) -> tuple[Path, str]:
    """A built-in name's file, or the path given; an unknown bare name is a one-line error."""
    text = os.fspath(source)
    if text in builtin_baselines():
        return BUILTIN_DIR / f"{text}.json", text
    if not os.path.exists(text) and os.sep not in text and not text.endswith(".json"):
        raise ValueError(f"baseline errors {text!r}: no such file or built-in baseline; expected a JSON "
                         f"file or one of {', '.join(builtin_baselines())}")
    return Path(text), text


def _read_pairs(path: Path, where: str) -> list[tuple[str, Any]]:
    """The (key, value) pairs of a baseline-errors JSON object, repeated keys kept."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_Pairs)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read {where}: {e}") from e
    if not isinstance(raw, _Pairs):
        raise ValueError(f"{where}: expected a JSON object of operation -> 5 errors; got {type(raw).__name__}")
    return [(k, dict(v) if isinstance(v, _Pairs) else v) for k, v in raw]


def _is_error(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1


def _errors_by_severity(errors: Any) -> dict[int, Any] | None:
    """[e1, ..., e5] or {"1": e1, ..., "5": e5} -> {1: e1, ..., 5: e5}; None for any other shape."""
    if isinstance(errors, list) and len(errors) == len(SEVERITY_LEVELS):
        return dict(zip(SEVERITY_LEVELS, errors))
    if isinstance(errors, dict) and sorted(map(str, errors)) == [str(k) for k in SEVERITY_LEVELS]:
        return {int(k): v for k, v in errors.items()}
    return None


def _extras(found: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The keys that are not operations, checked: clean error, source, mce_over."""
    clean, source, over = found.get("clean"), found.get("source"), found.get("mce_over")
    if clean is not None and not _is_error(clean):
        raise ValueError(f"{where}: 'clean' must be the baseline's clean error in [0, 1]; got {clean!r}")
    if source is not None and not isinstance(source, str):
        raise ValueError(f"{where}: 'source' must be a string; got {source!r}")
    if over is not None and not (isinstance(over, list) and over and all(isinstance(n, str) for n in over)):
        raise ValueError(f"{where}: 'mce_over' must be a list of operation names; got {over!r}")
    return {"clean": None if clean is None else float(clean), "source": source,
            "mce_over": None if over is None else tuple(dict.fromkeys(REGISTRY.get(n, "video").name for n in over))}


def load_baseline(source: str | os.PathLike | Mapping[str, Any] | Baseline) -> Baseline:
    """A :class:`Baseline` from a built-in name, a JSON file or a mapping (module doc), checked: one
    entry per operation (aliases and case count as one), 5 errors in [0, 1] not all 0 (CE divides by
    their sum) or their mean above 0. A ValueError in one line otherwise."""
    if isinstance(source, Baseline):
        return source
    if isinstance(source, Mapping):
        pairs, name, where = list(source.items()), "given", "baseline errors"
    else:
        path, name = _resolve(source)
        where = f"baseline errors {name}"
        pairs = _read_pairs(path, where)
    extras = {k: v for k, v in pairs if k in NOT_OPERATIONS}
    errors: dict[str, dict[int, float]] = {}
    means: dict[str, float] = {}
    given: dict[str, str] = {}
    for key, value in ((k, v) for k, v in pairs if k not in NOT_OPERATIONS):
        spec = REGISTRY.get(key, "video")
        if spec.name in given:
            raise ValueError(f"{where}: {given[spec.name]!r} and {key!r} both name {spec.name}; "
                             "expected one entry per operation")
        given[spec.name] = key
        if _is_error(value):
            if not value:
                raise ValueError(f"{where}: {key!r} has mean error 0; CE divides by it, so expected a "
                                 "baseline model's error (above 0)")
            means[spec.name] = float(value)
            continue
        by_sev = _errors_by_severity(value)
        if by_sev is None or not all(_is_error(v) for v in by_sev.values()):
            raise ValueError(f"{where}: {key!r} must map to 5 errors in [0, 1], at severities 1..5 "
                             f"(a list of 5 or an object keyed 1..5), or to their mean; got {value!r}")
        if not any(by_sev.values()):
            raise ValueError(f"{where}: {key!r} has every error 0; CE divides by their sum, so expected "
                             "a baseline model's errors (some above 0)")
        errors[spec.name] = {int(k): float(v) for k, v in by_sev.items()}
    if not given:
        raise ValueError(f"{where}: no operation; expected e.g. {{\"fog\": [e1, e2, e3, e4, e5]}}")
    return Baseline(errors, means, name=name, **_extras(extras, where))
