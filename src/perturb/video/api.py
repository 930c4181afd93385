"""Public video API: ``draw`` / ``apply``, ``Perturbation`` objects and ``Compose``.

``draw(name, severity, T, seed=...)`` draws a perturbation's parameters for a T-frame clip
(a :class:`~perturb.video.render.Draw`); ``draw.render(src, frames)`` renders any output
frames from the input frames ``draw.source_indices(frames)`` (``draw.render_clip(clip, frames)``
from the whole clip). ``apply`` is both steps on a whole clip:
``apply(clip, name, s, seed=x) == draw(name, s, len(clip), seed=x).render_clip(clip)``.
(``draw``, not ``sample``: ``perturb.video.sample`` is the bundled sample clip's module.)
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..registry import REGISTRY, Spec, per_frame_selection
from ..rng import SeedLike, as_generator
from .clip import is_torch, to_numpy, torch_layout
from .render import Draw, check_n_frames, draw_for


def get(name: str | Spec, suite: str | None = None, *, per_frame: bool = False) -> Spec:
    """The registry entry of a visual perturbation (aliases accepted), under ``suite``'s
    parameter table when one is named (``"kinetics-c"``; the op must be a member), drawing a new
    layer every frame with ``per_frame=True`` (a ValueError for an op that does not take it)."""
    spec = REGISTRY.get(name, "video")
    return per_frame_selection([spec if suite is None else REGISTRY.bind(spec, suite)], per_frame)[0]


def draw(name: str | Spec, severity: int, n_frames: int, *, seed: SeedLike = None,
         suite: str | None = None, per_frame: bool = False) -> Draw:
    """Draw the parameters of ``name`` at ``severity`` for a clip of ``n_frames`` frames.

    Host-side and cheap; the result renders any output frames with its numpy or torch kernel
    (:meth:`Draw.render`) and is picklable. ``seed`` is an int, a ``numpy.random.Generator``
    (the clip's; drawn from) or None. ``suite`` takes that suite's parameter table (default:
    the op's own); ``name`` may also say it, as in ``"contrast:kinetics-c"``. ``per_frame=True``
    (weather ops) draws a new layer for every frame, as the image suite does.
    """
    spec = get(name, suite, per_frame=per_frame)
    params = spec.params(severity)
    n = check_n_frames(n_frames)
    return draw_for(spec, params, n, as_generator(seed), _level(spec, severity))


def _level(spec: Spec, severity: Any) -> int:
    """The validated severity as a plain int (numpy ints pass through)."""
    return int(spec.default_severity if severity is None else severity)


def _validated(clip: Any) -> tuple[Any, str | None]:
    """The clip checked against the clip model: (clip, torch layout or None for numpy)."""
    if is_torch(clip):
        return clip, torch_layout(clip)
    return to_numpy(clip)[0], None


def apply(clip: Any, name: str | Spec, severity: int = 3, *, seed: SeedLike = None,
          suite: str | None = None, per_frame: bool = False) -> Any:
    """Return a perturbed copy of ``clip`` (the input is never modified).

    ``clip`` is uint8 numpy (T, H, W, 3), or a torch uint8 (T, H, W, 3) / float (T, 3, H, W)
    tensor in [0, 1] on any device; the result has the same type, layout, dtype and device.
    ``severity`` is 1..5; ``seed`` is an int, a ``numpy.random.Generator`` or None; ``suite``
    takes that suite's parameter table (default: the op's own). ``per_frame=True`` (weather ops)
    draws a new layer for every frame, as the image suite does.
    """
    spec = get(name, suite, per_frame=per_frame)
    params = spec.params(severity)
    src, layout = _validated(clip)
    drawn = draw_for(spec, params, len(src), as_generator(seed), _level(spec, severity))
    return drawn.render_checked(src, layout)


class Perturbation:
    """A visual perturbation at a fixed severity, as a callable: ``Perturbation("jpeg", 3)(clip)``."""

    def __init__(self, name: str, severity: int = 3, *, seed: SeedLike = None,
                 suite: str | None = None, per_frame: bool = False) -> None:
        self.spec = get(name, suite, per_frame=per_frame)
        self.spec.params(severity)          # validated now, not at call time
        self.severity = severity
        self.seed = seed

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def per_frame(self) -> bool:
        return self.spec.per_frame

    def draw(self, n_frames: int, *, seed: SeedLike = None) -> Draw:
        """Its parameters drawn for a clip of ``n_frames`` frames (see :func:`draw`)."""
        return draw(self.spec, self.severity, n_frames, seed=self.seed if seed is None else seed)

    def __call__(self, clip: Any, *, seed: SeedLike = None) -> Any:
        return apply(clip, self.spec, self.severity, seed=self.seed if seed is None else seed)

    def __repr__(self) -> str:
        suite = f", suite={self.spec.table!r}" if self.spec.table else ""
        return f"Perturbation({self.spec.name!r}, severity={self.severity}{suite})"


class Compose:
    """Chain perturbations; one seed drives the whole chain, so the result is reproducible.

    ``perturbations`` is a sequence: a bare name is refused (``Compose(["jpeg"])`` chains one),
    as iterating a string would read each character as a name."""

    def __init__(self, perturbations: Sequence[Perturbation | tuple[str, int] | str], *,
                 seed: SeedLike = None) -> None:
        if isinstance(perturbations, (str, bytes)):
            raise TypeError(f"Compose expects a sequence of perturbations; got the string {perturbations!r} "
                            f"(write Compose([{perturbations!r}]) for a chain of one)")
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

    def __call__(self, clip: Any, *, seed: SeedLike = None) -> Any:
        if not self.perturbations:                      # a copy, as every perturbation returns
            src, layout = _validated(clip)
            return src.clone() if layout is not None else src.copy()
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
