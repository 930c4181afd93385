"""``load_model``: the adapter a ``kind:target`` spec names, wrapped as a checked :class:`Model`;
and the checking of those strings (:func:`parse_spec`, :func:`import_target`).

Kept apart from :mod:`.protocol` so the protocol imports no adapter family (the hf family imports
the protocol's errors).
"""
from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any

from .device import pick_device
from .frames import check_sampling
from .protocol import Model, ModelSpecError, wrap

SPEC_FORMS = {"hf": "hf:NAME_OR_PATH[@REVISION][#MODE]", "clip": "clip:NAME_OR_PATH",
              "precomputed": "precomputed:DIR", "callable": "callable:MODULE:ATTR", "http": "http:URL",
              "toy": "toy:DIM"}


def load_model(spec: str, *, device: str = "auto", batch_size: int = 32, frames: int | None = None,
               timeout: float = 60.0, dtype: str = "auto", precision: str = "auto",
               device_map: str | None = None, cache_key: str | None = None,
               frame_sampling: str | None = None) -> Model:
    """A model from ``hf:NAME_OR_PATH[@REV][#MODE]``, ``clip:NAME_OR_PATH`` (the hf CLIP family),
    ``precomputed:DIR``, ``callable:MODULE:ATTR``, ``http:URL``, ``toy:DIM``; a ModelSpecError (a
    ValueError) for a spec of an unknown kind or a malformed one.

    ``frames`` None means the model's own count (8 where the checkpoint does not fix one);
    ``cache_key`` pins the version the embedding cache keys the model by; ``frame_sampling``
    (centre, start, linspace, fps:N) overrides an hf family's own frame-sampling convention.
    """
    check_frame_sampling(spec, frame_sampling)
    model = _load(spec, device=device, batch_size=batch_size, frames=frames, timeout=timeout,
                  dtype=dtype, precision=precision, device_map=device_map, frame_sampling=frame_sampling)
    model.cache_key = cache_key
    return model


def check_frame_sampling(spec: str, frame_sampling: str | None) -> None:
    """A frame-sampling rule that exists, for a model kind that takes one; else ModelSpecError."""
    if frame_sampling is None:
        return
    try:
        check_sampling(frame_sampling)
    except ValueError as e:
        raise ModelSpecError(f"--frame-sampling: {e}") from None
    if parse_spec(spec)[0] not in ("hf", "clip"):
        raise ModelSpecError(f"--frame-sampling applies to hf: and clip: models; {spec!r} picks its own frames")


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
    return wrap(with_device(import_target(target), device), spec)


def with_device(factory: Any, device: str) -> Any:
    """A ``callable:`` factory that takes a ``device`` keyword, given the device its model goes on
    (in a replica: the replica's GPU, ``cuda:0`` in its worker); any other object as it is."""
    try:
        takes = "device" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return factory
    if not takes:
        return factory
    return functools.partial(factory, device=pick_device(device) if device == "auto" else device)


def parse_spec(spec: str) -> tuple[str, str]:
    """``"KIND:TARGET"`` → (kind, target), checked without loading anything (a bare URL is an
    http model); a ModelSpecError lists the valid kinds."""
    text = str(spec)
    if text.startswith(("http://", "https://")):
        text = f"http:{text}"
    kind, sep, target = text.partition(":")
    expected = f"expected one of {', '.join(SPEC_FORMS.values())}"
    if not sep or not kind:
        raise ModelSpecError(f"model {spec!r} names no kind; {expected}")
    if kind not in SPEC_FORMS:
        raise ModelSpecError(f"unknown model kind {kind!r} in {spec!r}; {expected}")
    if not target:
        raise ModelSpecError(f"model {spec!r} has no target; expected {SPEC_FORMS[kind]}")
    if kind == "toy" and not (target.isdigit() and int(target) > 0):
        raise ModelSpecError(f"toy:DIM takes a positive whole dimension; got {spec!r}")
    if kind in ("hf", "clip"):
        from .hf.checkpoint import check_local, parse_spec as parse_hf
        check_local(parse_hf(target), kind)
    if kind == "callable":
        module_name, sep, attr = target.partition(":")
        if not sep or not module_name or not attr:
            raise ModelSpecError(f"expected callable:MODULE:ATTR (e.g. callable:mypkg.models:build); "
                                 f"got {spec!r}")
    return kind, target


def check_available(spec: str) -> None:
    """Before any work, that an hf:/clip: model can be had: a local folder holds its tokenizer; a
    hub name is in the local cache or the hub is reachable (ModelSpecError saying what to do)."""
    kind, target = parse_spec(spec)
    if kind in ("hf", "clip"):
        from .hf.checkpoint import check_available as check_hf, parse_spec as parse_hf
        check_hf(parse_hf(target), kind)


def import_target(target: str) -> Any:
    """The object named by ``MODULE:ATTR`` (ATTR may be dotted); ModelSpecError when the module or
    the attribute does not exist (an import error inside the module is left as it is)."""
    _, target = parse_spec(f"callable:{target}")
    module_name, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is None or not (module_name == e.name or module_name.startswith(e.name + ".")):
            raise
        raise ModelSpecError(f"callable:{target}: no module named {e.name!r}") from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ModelSpecError(f"callable:{target}: {getattr(obj, '__name__', obj)!r} has no "
                                 f"attribute {part!r}")
        obj = getattr(obj, part)
    return obj
