"""Per-sample draws of the training transforms: (seed, epoch, key) -> (op, severity, seed).

A sample's draw is a pure function of the transform's settings, its seed, the epoch and the
sample's key, through :func:`perturb.rng.derive_generator` (a ``numpy.random.SeedSequence``,
counter-based: nothing carries over from one sample to the next), so it does not depend on the
batch, the position in it, the worker that loads it, the layout or the device. No global RNG
is read or advanced.
"""
from __future__ import annotations

import hashlib
import numbers
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import check_unicode
from ..registry import REGISTRY, Spec
from ..rng import derive_generator
from ..selection import SEVERITY_LEVELS

KEY_TYPES = "an int or a str (a sample id, a path)"
TAG = 0x7065727475726274        # b"perturbt": the transforms' own branch of every seed tree
SEED_BOUND = 2 ** 63             # recorded seeds are ints in [0, 2**63)


KEYS_FORMS = "a list, tuple or range, or a 1-D numpy array or torch tensor"


def check_key(key: Any) -> int | str:
    """A sample key as a plain int or str of valid Unicode; anything else (bool, float, bytes,
    None, a str with a lone surrogate...) refused."""
    if isinstance(key, (bool, np.bool_)) or not isinstance(key, (numbers.Integral, str)):
        raise ValueError(f"a sample key must be {KEY_TYPES}; got {type(key).__name__} {key!r}")
    return check_unicode(key, "a sample key") if isinstance(key, str) else int(key)


def check_keys(keys: Any, n: int | None = None) -> list[int | str]:
    """Keys as a list of int / str, one per sample, in the samples' order: a sequence, a 1-D numpy
    array or torch tensor. Sets (no order), mappings and one-shot iterators (a generator) are
    refused: the i-th key must be the i-th sample's, and a draw must be repeatable."""
    if isinstance(keys, (str, bytes)):
        raise ValueError(f"keys must be a sequence with one key per sample; got the single "
                         f"{type(keys).__name__} {keys!r} (write [{keys!r}])")
    if hasattr(keys, "tolist") and hasattr(keys, "shape"):          # numpy array, torch tensor
        if len(keys.shape) != 1:
            raise ValueError(f"keys must be 1-D, one key per sample; got shape {tuple(keys.shape)}")
        keys = keys.tolist()
    if not isinstance(keys, Sequence):
        raise ValueError(f"keys must be {KEYS_FORMS}, one key per sample in order, each {KEY_TYPES}; "
                         f"got {type(keys).__name__}")
    items = list(keys)
    if n is not None and len(items) != n:
        raise ValueError(f"expected {n} keys, one per sample in the batch; got {len(items)}")
    return [check_key(k) for k in items]


def key_words(key: int | str) -> tuple[int, int]:
    """Stable words of a key for a SeedSequence (no PYTHONHASHSEED): kind, then value.
    Ints keep their value (negative ones under their own kind); a str is its UTF-8 BLAKE2b."""
    if isinstance(key, str):
        return 1, int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=16).digest(), "little")
    return (0, key) if key >= 0 else (2, -key)


def check_count(name: str, value: Any) -> int:
    """A non-negative int (seed, epoch); bools refused."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative int; got {value!r}")
    return int(value)


def check_p(p: Any) -> float:
    """The probability of applying an op to a sample, in [0, 1]."""
    ok = isinstance(p, numbers.Real) and not isinstance(p, (bool, np.bool_)) and 0.0 <= float(p) <= 1.0
    if not ok:
        raise ValueError(f"p must be a number in [0, 1] (the chance a sample is perturbed); got {p!r}")
    return float(p)


def _weight(value: Any) -> float:
    """A weight as a float: NaN for what is not a real number (a bool, a str, a list), inf for an
    int too large for a float."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return np.nan
    try:
        return float(value)
    except OverflowError:
        return np.inf


def probabilities(weights: Iterable[Any], what: str) -> np.ndarray:
    """Weights as probabilities: each a finite real number >= 0 (bools refused), their sum finite
    and > 0 (a sum that overflows would make every probability 0, and the last entry always drawn)."""
    given = [v.tolist() if isinstance(v, (np.ndarray, np.generic)) else v for v in weights]
    w = np.array([_weight(v) for v in given], dtype=np.float64)
    each = bool(np.all(np.isfinite(w)) and np.all(w >= 0))
    with np.errstate(over="ignore"):
        total = float(w.sum()) if each else np.nan
    if not (np.isfinite(total) and total > 0):
        sum_of = "" if not each else f", whose sum is {total:g}"
        raise ValueError(f"{what} must be finite numbers >= 0 (not bools) whose sum is finite and > 0; "
                         f"got {given!r}{sum_of}")
    return w / total


def severity_weights(severity: Any) -> tuple[tuple[int, ...], np.ndarray] | None:
    """Levels and their probabilities from an int, a (low, high) pair (inclusive, uniform), or
    weights per level (5 numbers for levels 1..5, or {level: weight}); None stays None."""
    lo, hi = SEVERITY_LEVELS[0], SEVERITY_LEVELS[-1]
    expected = (f"severity must be an int in {lo}..{hi}, a (low, high) pair, or weights per level "
                f"({len(SEVERITY_LEVELS)} numbers or {{level: weight}})")
    if severity is None:
        return None
    if isinstance(severity, numbers.Integral) and not isinstance(severity, (bool, np.bool_)):
        if int(severity) not in SEVERITY_LEVELS:
            raise ValueError(f"{expected}; got {severity!r}")
        return (int(severity),), np.ones(1)
    if isinstance(severity, Mapping):
        bad = [k for k in severity if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral)
               or k not in SEVERITY_LEVELS]
        if bad or not severity:
            raise ValueError(f"{expected}; got levels {sorted(map(repr, severity))}")
        levels = tuple(sorted(int(k) for k in severity))
        return levels, probabilities([severity[k] for k in levels], "severity weights")
    if isinstance(severity, (Sequence, np.ndarray)) and not isinstance(severity, str):
        if len(severity) == 2:
            ints = all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in severity)
            if not ints or not lo <= severity[0] <= severity[1] <= hi:
                raise ValueError(f"a severity range must be (low, high) with {lo} <= low <= high <= {hi}; "
                                 f"got {tuple(severity)!r}")
            levels = tuple(range(int(severity[0]), int(severity[1]) + 1))
            return levels, np.full(len(levels), 1.0 / len(levels))
        if len(severity) == len(SEVERITY_LEVELS):
            return SEVERITY_LEVELS, probabilities(severity, "severity weights")
    raise ValueError(f"{expected}; got {severity!r}")


def resolve_ops(ops: str | Sequence[str], modality: str) -> list[Spec]:
    """The specs a selection names, as bench reads it (``suite:NAME``, categories, names, commas),
    in the order written (a suite or category in listing order), so weights can follow it."""
    if not isinstance(ops, str) and not (isinstance(ops, Sequence) and all(isinstance(o, str) for o in ops)):
        raise ValueError(f"ops must be a selection string (e.g. 'suite:imagenet-c' or 'jpeg,rotate') "
                         f"or a list of names; got {ops!r}")
    items = [i for i in (ops.split(",") if isinstance(ops, str) else ops) if i.strip()]
    specs = list({s.ref: s for item in items for s in REGISTRY.resolve([item], modality)}.values())
    if not specs:
        raise ValueError(f"ops {ops!r} select no {modality} perturbation")
    return specs


def op_probabilities(specs: Sequence[Spec], weights: Any) -> np.ndarray:
    """One probability per op from None (uniform), a sequence in the ops' order or {name: weight}."""
    refs = [s.ref for s in specs]
    if weights is None:
        return np.full(len(specs), 1.0 / len(specs))
    if isinstance(weights, Mapping):
        named = {k if k in refs else REGISTRY.get(k, specs[0].modality).ref: v for k, v in weights.items()}
        missing, unknown = [r for r in refs if r not in named], [k for k in named if k not in refs]
        if missing or unknown:
            raise ValueError(f"weights must name every selected op once; missing {missing}, "
                             f"not selected {unknown}")
        weights = [named[r] for r in refs]
    if isinstance(weights, (str, bytes)) or not isinstance(weights, (Sequence, np.ndarray)):
        raise ValueError(f"weights must be a sequence (one per op) or a mapping {{op: weight}}; got {weights!r}")
    if len(weights) != len(specs):
        shown = ", ".join(refs[:6]) + (", ..." if len(refs) > 6 else "")
        raise ValueError(f"weights must give one weight per op: {len(specs)} ops ({shown}); got {len(weights)}")
    return probabilities(weights, "op weights")


def group_params(params: Sequence[Mapping[str, Any] | None]) -> dict[tuple[str, Any], list[int]]:
    """Sample positions by the (op, severity) they drew, in order; skipped samples (None) left out."""
    groups: dict[tuple[str, Any], list[int]] = defaultdict(list)
    for i, prm in enumerate(params):
        if prm is not None:
            groups[(prm["op"], prm["severity"])].append(i)
    return groups


def _pick(cdf: np.ndarray, u: float) -> int:
    """Inverse CDF: the index whose interval holds u (zero-weight entries are never picked)."""
    return min(int(np.searchsorted(cdf, u, side="right")), len(cdf) - 1)


def check_n(n: Any, op_p: np.ndarray, refs: Sequence[str]) -> tuple[int, int]:
    """How many ops a sample gets, as an inclusive (low, high) pair from an int or a pair; at
    most the number of ops that can be drawn (weight > 0), since a sample's ops are different."""
    expected = "n must be an int >= 1 or a (low, high) pair of ints with 1 <= low <= high (ops per sample)"
    pair = (n, n) if isinstance(n, numbers.Integral) else n
    ok = isinstance(pair, (tuple, list)) and len(pair) == 2 and all(
        isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in pair)
    if not ok or not 1 <= pair[0] <= pair[1]:
        raise ValueError(f"{expected}; got {n!r}")
    lo, hi = int(pair[0]), int(pair[1])
    drawable = [r for r, w in zip(refs, op_p) if w > 0]
    if hi > len(drawable):
        shown = ", ".join(drawable[:6]) + (", ..." if len(drawable) > 6 else "")
        raise ValueError(f"n={n!r} asks for up to {hi} different ops per sample, but the selection has "
                         f"{len(drawable)} op{'' if len(drawable) == 1 else 's'} with weight > 0 ({shown})")
    return lo, hi


def _pick_among(weights: np.ndarray, u: float) -> int:
    """Inverse CDF over the entries of weight > 0 only (so an op already taken is never drawn again)."""
    live = np.flatnonzero(weights > 0)
    cdf = np.cumsum(weights[live])
    return int(live[_pick(cdf, u * cdf[-1])])


@dataclass(frozen=True, eq=False)
class Sampler:
    """What a transform draws from: ops and their probabilities, severity levels and theirs
    (None: each op's default), the chance ``p``, the base seed and how many ops a sample gets
    (``n``, inclusive; (1, 1): one op, recorded as one step). Picklable, numpy only."""

    ops: tuple[str, ...]             # refs: "jpeg", "contrast:kinetics-c"
    defaults: tuple[int | None, ...]   # each op's default severity; None: it has no levels
    op_p: np.ndarray
    levels: tuple[int, ...] | None
    level_p: np.ndarray | None
    p: float
    seed: int
    n: tuple[int, int] = (1, 1)

    @classmethod
    def build(cls, ops: Any, modality: str, severity: Any, weights: Any, p: Any, seed: Any,
              n: Any = 1) -> "Sampler":
        specs = resolve_ops(ops, modality)
        sev = severity_weights(severity)
        levels, level_p = sev if sev is not None else (None, None)
        for spec in specs:                   # every level that can be drawn exists for every op
            if spec.has_severity:
                for level in levels or (None,):
                    spec.params(level)
        defaults = tuple(s.default_severity if s.has_severity else None for s in specs)
        op_p = op_probabilities(specs, weights)
        refs = tuple(s.ref for s in specs)
        return cls(refs, defaults, op_p, levels, level_p, check_p(p), check_count("seed", seed),
                   check_n(n, op_p, refs))

    @property
    def composed(self) -> bool:
        """Whether a sample may get several ops: its draw is then a list of steps."""
        return self.n[1] > 1

    def draw(self, epoch: int, key: int | str) -> Any:
        """One sample's draw, or None when ``p`` skips it: ``{"op", "severity", "seed"}``, or
        with ``n`` above 1 the list of such steps in the order they apply. The first step is the
        one-op draw and further steps follow in the same stream, so the same numbers are drawn
        whatever ``p`` is (raising ``p`` only adds samples) and ``n=1`` draws as it always has."""
        rng = derive_generator(self.seed, TAG, epoch, *key_words(key))
        gate, u_op, u_level = rng.random(3)
        seed = int(rng.integers(0, SEED_BOUND))
        if gate >= self.p:
            return None
        i = _pick(self._op_cdf, u_op)
        first = self._step(i, u_level, seed)
        if not self.composed:
            return first
        lo, hi = self.n
        count = lo + min(int(rng.random() * (hi - lo + 1)), hi - lo)
        left = self.op_p.copy()
        steps = [first]
        for _ in range(count - 1):           # the next op among those not taken yet, in draw order
            left[i] = 0.0
            u_op, u_level = rng.random(2)
            i = _pick_among(left, u_op)
            steps.append(self._step(i, u_level, int(rng.integers(0, SEED_BOUND))))
        return steps

    def _step(self, i: int, u_level: float, seed: int) -> dict[str, Any]:
        """Op ``i`` at the level ``u_level`` picks (its default when no levels are set) with ``seed``."""
        level = self.defaults[i]
        if level is not None and self.levels is not None:
            level = self.levels[_pick(self._level_cdf, u_level)]
        return {"op": self.ops[i], "severity": level, "seed": seed}

    @cached_property
    def _op_cdf(self) -> np.ndarray:
        return np.cumsum(self.op_p)

    @cached_property
    def _level_cdf(self) -> np.ndarray:
        return np.cumsum(self.level_p)

    def describe(self) -> str:
        """The settings in a line, for reprs."""
        sev = "default" if self.levels is None else (
            str(self.levels[0]) if len(self.levels) == 1 else
            "{" + ", ".join(f"{lv}: {w:.3g}" for lv, w in zip(self.levels, self.level_p)) + "}")
        lo, hi = self.n
        count = "" if not self.composed else f", n={lo}" if lo == hi else f", n=({lo}, {hi})"
        return (f"{len(self.ops)} op{'' if len(self.ops) == 1 else 's'}{count}, severity={sev}, "
                f"p={self.p:g}, seed={self.seed}")
