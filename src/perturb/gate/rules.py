"""Rules for ``perturb check``: ``--min noise@5:gamma_r=0.6`` on the command line, or a YAML/TOML policy."""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from ..errors import GateInputError
from ..selection import SEVERITY_LEVELS as SEVERITIES

BOUNDS = {"min": ">=", "max": "<="}
POLICY_KEYS = ("min", "max", "compare")
COMPARE_KEYS = ("max_drop", "significance", "metrics")
SYNTAX = "[SCOPE[@SEVERITY]:]METRIC=THRESHOLD or PART.METRIC=THRESHOLD, e.g. 'gamma_r=0.8', " \
         "'noise:gamma_r=0.6', 'gaussian_noise@5:gamma_a=0.7', 'clean.t2v.R@5=0.4', 'held_out.gamma_r=0.8'"


@dataclass(frozen=True)
class Rule:
    """A bound on a metric over a scope; names are checked later, against a results file."""

    metric: str
    threshold: float
    bound: str = "min"            # "min": value >= threshold; "max": value <= threshold
    scope: str | None = None      # None: every perturbation (or the clean metric)
    severity: int | None = None

    @property
    def text(self) -> str:
        where = (self.scope or "") + (f"@{self.severity}" if self.severity is not None else "")
        return f"{where + ':' if where else ''}{self.metric} {BOUNDS[self.bound]} {self.threshold:g}"

    def holds(self, value: float) -> bool:
        return value >= self.threshold if self.bound == "min" else value <= self.threshold


@dataclass(frozen=True)
class Policy:
    """Rules plus the defaults of ``perturb compare`` (max_drop, significance, metrics)."""

    rules: tuple[Rule, ...] = ()
    compare: Mapping[str, Any] = field(default_factory=dict)


def _threshold(value: Any, spec: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise GateInputError(f"threshold of {spec!r} must be a number; got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(number):
        raise GateInputError(f"threshold of {spec!r} must be a finite number; got {value!r}")
    return number


def _severity(text: str, spec: str) -> int:
    if not text.isdigit() or int(text) not in SEVERITIES:
        raise GateInputError(f"severity in {spec!r} must be one of {', '.join(map(str, SEVERITIES))}; "
                             f"got {text!r}")
    return int(text)


def parse_target(target: str, threshold: Any, bound: str = "min") -> Rule:
    """``'noise@5:gamma_r'`` and a threshold → Rule."""
    if bound not in BOUNDS:
        raise GateInputError(f"bound must be one of {', '.join(BOUNDS)}; got {bound!r}")
    spec = f"{target}={threshold}"
    target = str(target).strip()
    scope, _, metric = target.rpartition(":")
    if not metric or ":" in scope:
        raise GateInputError(f"cannot parse rule {spec!r}; expected {SYNTAX}")
    severity = None
    if "@" in scope:
        scope, _, sev = scope.rpartition("@")
        severity = _severity(sev.strip(), spec)
    return Rule(metric.strip(), _threshold(threshold, spec), bound, scope.strip() or None, severity)


def parse_rule(spec: str, bound: str = "min") -> Rule:
    """``'noise:gamma_r=0.6'`` → Rule (syntax only)."""
    target, sep, threshold = str(spec).rpartition("=")
    if not sep or not target.strip() or not threshold.strip():
        raise GateInputError(f"cannot parse rule {spec!r}; expected {SYNTAX}")
    return parse_target(target, threshold.strip(), bound)


def _read_mapping(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GateInputError(f"cannot read policy file {str(path)!r}: {e}") from e
    try:
        return tomllib.loads(text) if path.suffix.lower() == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as e:
        raise GateInputError(f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'YAML'}: {e}") \
            from e


def _check_keys(mapping: Any, valid: tuple[str, ...], where: str) -> Mapping[str, Any]:
    if mapping is None:
        return {}
    if not isinstance(mapping, Mapping):
        raise GateInputError(f"{where}: expected a mapping; got {type(mapping).__name__}")
    extra = [k for k in mapping if k not in valid]
    if extra:
        raise GateInputError(f"{where}: unknown key(s) {', '.join(map(repr, extra))}; "
                             f"expected {', '.join(valid)}")
    return mapping


def load_policy(path: str | Path) -> Policy:
    """A YAML (.yaml/.yml) or TOML (.toml) policy: ``min:``/``max:`` maps of rules, ``compare:``."""
    p = Path(path)
    data = _check_keys(_read_mapping(p), POLICY_KEYS, str(p))
    rules = []
    for bound in BOUNDS:
        section = data.get(bound) or {}
        if not isinstance(section, Mapping):
            raise GateInputError(f"{p}: '{bound}' must map rule targets to thresholds, "
                                 f"e.g. {{'noise:gamma_r': 0.6}}")
        rules += [parse_target(str(target), value, bound) for target, value in section.items()]
    compare = _check_keys(data.get("compare"), COMPARE_KEYS, f"{p}: compare")
    return Policy(tuple(rules), dict(compare))
