"""Seed handling: every random choice in perturb flows from an explicit numpy Generator.

No global seeding anywhere. Per-item seeds are derived from (base seed, keys...) with
``numpy.random.SeedSequence`` so a result never depends on worker count or order.
"""
from __future__ import annotations

import hashlib
from typing import Union

import numpy as np

SeedLike = Union[None, int, np.integer, np.random.Generator, np.random.SeedSequence]


def _key_to_int(key: object) -> int:
    """A stable 64-bit integer for a key (str, int, float...), independent of PYTHONHASHSEED."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and key >= 0:
        return int(key)
    digest = hashlib.sha256(repr(key).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little")


def seed_sequence(base: int, *keys: object) -> np.random.SeedSequence:
    """The SeedSequence of one item: a base seed plus keys (item id, name, severity...)."""
    if isinstance(base, bool) or not isinstance(base, (int, np.integer)) or base < 0:
        raise ValueError(f"seed must be a non-negative int, got {base!r}")
    return np.random.SeedSequence(int(base), spawn_key=tuple(_key_to_int(k) for k in keys))


def derive_seed(base: int, *keys: object) -> int:
    """A 64-bit seed derived from a base seed and any number of keys (item id, name, severity)."""
    return int(seed_sequence(base, *keys).generate_state(1, dtype=np.uint64)[0])


def _check_int_seed(seed: object) -> int:
    """An int seed as a plain int, checked without building a Generator; anything else refused."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(
            f"seed must be None, a non-negative int or a numpy.random.Generator; got {seed!r}")
    return int(seed)


def as_generator(seed: SeedLike) -> np.random.Generator:
    """A Generator from an int, a SeedSequence, an existing Generator (returned as is) or None."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    return np.random.default_rng(_check_int_seed(seed))


def item_seed(base: int, item_id: str, perturbation: str, severity: int | None) -> int:
    """The seed of one perturbed output: the rule the builder and the runner share (DESIGN §3)."""
    return derive_seed(base, item_id, perturbation, severity)


def base_seed(seed: SeedLike) -> int | None:
    """None or an int as is; a Generator or SeedSequence gives one drawn base seed."""
    if seed is None:
        return None
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.generate_state(1, dtype=np.uint64)[0])
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63))
    return _check_int_seed(seed)


def derive_generator(seed: SeedLike, *keys: object) -> np.random.Generator:
    """A Generator for one item, seeded from (seed, keys) when seed is an int.

    A Generator passed in is used to draw a base seed, so results stay reproducible
    from that Generator's state; None gives fresh entropy. Built straight from the
    SeedSequence (no intermediate int), which is cheap enough to do per caption.
    """
    base = base_seed(seed)
    if base is None:
        return np.random.default_rng()
    return np.random.Generator(np.random.PCG64(seed_sequence(base, *keys)))
