"""``load_model``: the adapter a ``kind:target`` spec names, wrapped as a checked :class:`Model`.

Kept apart from :mod:`.protocol` so the protocol imports no adapter family (the hf family imports
the protocol's errors).
"""
from __future__ import annotations

from .frames import check_sampling
from .protocol import Model, ModelSpecError, import_target, parse_spec, wrap


def load_model(spec: str, *, device: str = "auto", batch_size: int = 32, frames: int | None = None,
               timeout: float = 60.0, dtype: str = "auto", precision: str = "auto",
               device_map: str | None = None, cache_key: str | None = None,
               frame_sampling: str | None = None) -> Model:
    """A model from ``hf:NAME_OR_PATH[@REV][#MODE]``, ``clip:NAME_OR_PATH`` (the hf CLIP family),
    ``precomputed:DIR``, ``callable:MODULE:ATTR``, ``http:URL``, ``toy:DIM``; a ModelSpecError (a
    ValueError) for a spec of an unknown kind or a malformed one.

    ``frames`` None means the model's own count (8 where the checkpoint does not fix one);
    ``cache_key`` pins the version the embedding cache keys the model by; ``frame_sampling``
    (centre, start, linspace) overrides an hf family's own frame-sampling convention.
    """
    if frame_sampling is not None:
        try:
            check_sampling(frame_sampling)
        except ValueError as e:
            raise ModelSpecError(f"--frame-sampling: {e}") from None
        if parse_spec(spec)[0] not in ("hf", "clip"):
            raise ModelSpecError(f"--frame-sampling applies to hf: and clip: models; {spec!r} picks its own frames")
    model = _load(spec, device=device, batch_size=batch_size, frames=frames, timeout=timeout,
                  dtype=dtype, precision=precision, device_map=device_map, frame_sampling=frame_sampling)
    model.cache_key = cache_key
    return model


def _load(spec: str, *, device: str, batch_size: int, frames: int | None, timeout: float,
          dtype: str, precision: str, device_map: str | None, frame_sampling: str | None) -> Model:
    kind, target = parse_spec(spec)
    spec = f"{kind}:{target}"
    if kind in ("hf", "clip"):
        from .hf import load_hf
        impl = load_hf(target, family="clip" if kind == "clip" else None, device=device, batch_size=batch_size,
                       frames=frames, dtype=dtype, precision=precision, device_map=device_map,
                       frame_sampling=frame_sampling)
        return Model(impl, impl.id)
    if kind == "precomputed":
        from .precomputed import PrecomputedAdapter
        return Model(PrecomputedAdapter(target), spec)
    if kind == "http":
        from .http import HttpAdapter
        frames = frames or 8
        return Model(HttpAdapter(target, timeout=timeout, frames=frames), f"http:{target}@{frames}f")
    if kind == "toy":
        from .toy import ToyEncoder
        return Model(ToyEncoder(int(target)), spec)
    return wrap(import_target(target), spec)
