"""The model kinds of ``--model KIND:TARGET``, one :class:`Kind` row each: how the spec is written,
how its target is checked before anything is loaded, and how it is loaded.

:func:`~.factory.parse_spec`, :func:`~.factory.load_model`, the ``--model`` help, the engine a
run picks, ``--rerank``'s check and ``--dry-run``'s plan all read :data:`KINDS`; adding a kind is
one row here plus its adapter module. Each loader imports its adapter when called, so reading the
table loads no model library.
"""
from __future__ import annotations

import functools
import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from .device import pick_device
from .model_options import ModelOptions
from .protocol import Model, ModelSpecError, required_params, wrap


def _no_check(kind: str, target: str) -> None:
    """Nothing to check before loading (the target is only known to be right once loaded)."""


def _built_decides(target: str, may_import: bool) -> str | None:
    """Neither dual nor cross before the model is built."""
    return None


@dataclass(frozen=True)
class Kind:
    """One model kind: its spec form (in errors and ``--model`` help), ``check(kind, target)``
    (ModelSpecError on a malformed target, nothing loaded), ``load(kind, target, options)`` ->
    :class:`Model`, ``available(kind, target)`` run before any work, whether it takes
    ``--frame-sampling``, whether its model goes on ``--device``, and what its spec says of
    its encoder."""

    form: str
    load: Callable[[str, str, ModelOptions], Model]
    check: Callable[[str, str], None] = _no_check
    available: Callable[[str, str], None] = _no_check
    frame_sampling: bool = False
    on_device: bool = False
    """Its model is built for ``--device``: where several GPUs are usable, a run with no
    ``--backend`` places one local replica per GPU (:func:`~perturb.bench.distributed.placement.default_engine`)."""
    encoder: Callable[[str, bool], str | None] = _built_decides
    """``encoder(target, may_import)``: ``"dual"`` or ``"cross"`` as the target says, None where only
    the built model tells; with ``may_import`` it may import the target's module (nothing is built).
    Read by ``--rerank``'s check and ``--dry-run``'s plan."""


def _dual(target: str, may_import: bool) -> str | None:
    """A dual encoder whatever its target."""
    return "dual"


def _load_hf(kind: str, target: str, o: ModelOptions) -> Model:
    from .hf import load_hf
    impl = load_hf(target, o, family="clip" if kind == "clip" else None)
    return Model(impl, impl.id)


def _check_hf(kind: str, target: str) -> None:
    from .hf.checkpoint import check_local, parse_spec
    check_local(parse_spec(target), kind)


def _available_hf(kind: str, target: str) -> None:
    from .hf.checkpoint import check_available, parse_spec
    check_available(parse_spec(target), kind)


def _encoder_hf(target: str, may_import: bool) -> str | None:
    """``#embed`` is a dual encoder, another ``#MODE`` (itm, logits, yesno) a cross-encoder; without
    one, the checkpoint's family decides once built."""
    if target.endswith("#embed"):
        return "dual"
    if target.endswith("#classify"):
        return "classifier"
    return "cross" if "#" in target else None


def _load_precomputed(kind: str, target: str, o: ModelOptions) -> Model:
    from .precomputed import precomputed
    return Model(precomputed(target), f"{kind}:{target}")


def _load_http(kind: str, target: str, o: ModelOptions) -> Model:
    from .http import HttpAdapter
    frames = o.frames or 8
    return Model(HttpAdapter(target, timeout=o.timeout, frames=frames), f"{kind}:{target}@{frames}f")


def _encoder_http(target: str, may_import: bool) -> str | None:
    """A server scores (caption, video) pairs when its URL ends in ``#cross``; else it embeds."""
    return "cross" if target.endswith("#cross") else "dual"


def _load_toy(kind: str, target: str, o: ModelOptions) -> Model:
    from .toy import ToyEncoder
    return Model(ToyEncoder(int(target)), f"{kind}:{target}")


def _check_toy(kind: str, target: str) -> None:
    if not (target.isdigit() and int(target) > 0):
        raise ModelSpecError(f"toy:DIM takes a positive whole dimension; got {f'{kind}:{target}'!r}")


def _load_callable(kind: str, target: str, o: ModelOptions) -> Model:
    return wrap(with_device(import_target(target), o.device), f"{kind}:{target}", o.labels)


def _check_callable(kind: str, target: str) -> None:
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ModelSpecError(f"expected callable:MODULE:ATTR (e.g. callable:mypkg.models:build); "
                             f"got {f'{kind}:{target}'!r}")


def _encoder_callable(target: str, may_import: bool) -> str | None:
    """What the imported object offers: ``classify`` or a function of (clips) (classifier);
    ``encode_videos`` (dual); ``score``, or a function of (clips, texts) (cross); None when it may not be imported, or for a class or factory that
    offers neither until built."""
    if not may_import:
        return None
    obj = import_target(target)
    if hasattr(obj, "classify") or (not inspect.isclass(obj) and callable(obj) and required_params(obj) == 1):
        return "classifier"
    if hasattr(obj, "encode_videos"):
        return "dual"
    if hasattr(obj, "score") or (not inspect.isclass(obj) and callable(obj) and required_params(obj) == 2):
        return "cross"
    return None


KINDS: dict[str, Kind] = {
    "hf": Kind("hf:NAME_OR_PATH[@REVISION][#MODE]", _load_hf, _check_hf, _available_hf, frame_sampling=True,
               on_device=True, encoder=_encoder_hf),
    "clip": Kind("clip:NAME_OR_PATH", _load_hf, _check_hf, _available_hf, frame_sampling=True,
                 on_device=True, encoder=_dual),
    "precomputed": Kind("precomputed:DIR", _load_precomputed, encoder=_dual),
    "callable": Kind("callable:MODULE:ATTR", _load_callable, _check_callable, on_device=True,
                     encoder=_encoder_callable),
    "http": Kind("http:URL", _load_http, encoder=_encoder_http),
    "toy": Kind("toy:DIM", _load_toy, _check_toy, encoder=_dual),
}


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


def import_target(target: str) -> Any:
    """The object named by ``MODULE:ATTR`` (ATTR may be dotted); ModelSpecError when the module or
    the attribute does not exist (an import error inside the module is left as it is)."""
    _check_callable("callable", target)
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
