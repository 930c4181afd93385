"""Public video API: ``apply``, ``Perturbation`` objects and ``Compose``."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..registry import REGISTRY, Spec
from ..rng import SeedLike, as_generator
from .clip import _is_torch, from_numpy, to_numpy


def get(name: str) -> Spec:
    """The registry entry of a visual perturbation (aliases accepted)."""
    return REGISTRY.get(name, "video")


def apply(clip: Any, name: str, severity: int = 3, seed: SeedLike = None) -> Any:
    """Return a perturbed copy of ``clip`` (the input is never modified).

    ``clip`` is uint8 numpy (T, H, W, 3) or any type accepted by :mod:`perturb.video.clip`; the
    result has the same type, layout, dtype and device. ``severity`` is 1..5; ``seed`` is an int,
    a ``numpy.random.Generator`` or None.
    """
    spec = get(name)
    params = spec.params(severity)
    rng = as_generator(seed)
    if _is_torch(clip):
        from .torch_ops import TORCH_KERNELS, run_torch

        if spec.name in TORCH_KERNELS:
            return run_torch(spec, clip, rng, params)
    arr, kind = to_numpy(clip)
    out = spec.fn(arr, rng, **params)
    return from_numpy(out, kind)


class Perturbation:
    """A visual perturbation at a fixed severity, as a callable: ``Perturbation("jpeg", 3)(clip)``."""

    def __init__(self, name: str, severity: int = 3, seed: SeedLike = None) -> None:
        self.spec = get(name)
        self.spec.params(severity)          # validates the severity now, not at call time
        self.severity = severity
        self.seed = seed

    @property
    def name(self) -> str:
        return self.spec.name

    def __call__(self, clip: Any, seed: SeedLike = None) -> Any:
        return apply(clip, self.spec.name, self.severity, self.seed if seed is None else seed)

    def __repr__(self) -> str:
        return f"Perturbation({self.spec.name!r}, severity={self.severity})"


class Compose:
    """Chain perturbations; one seed drives the whole chain, so the result is reproducible."""

    def __init__(self, perturbations: Sequence[Perturbation | tuple[str, int] | str],
                 seed: SeedLike = None) -> None:
        self.perturbations = [self._coerce(p) for p in perturbations]
        self.seed = seed

    @staticmethod
    def _coerce(p: Any) -> Perturbation:
        if isinstance(p, Perturbation):
            return p
        if isinstance(p, str):
            return Perturbation(p)
        if isinstance(p, tuple) and len(p) == 2:
            return Perturbation(*p)
        raise ValueError(f"Compose expects Perturbation objects, names or (name, severity) pairs; got {p!r}")

    def __call__(self, clip: Any, seed: SeedLike = None) -> Any:
        rng = as_generator(self.seed if seed is None else seed)
        for p in self.perturbations:
            clip = p(clip, seed=rng)
        return clip

    def __iter__(self) -> Iterable[Perturbation]:
        return iter(self.perturbations)

    def __len__(self) -> int:
        return len(self.perturbations)

    def __repr__(self) -> str:
        inner = ", ".join(repr(p) for p in self.perturbations)
        return f"Compose([{inner}])"
