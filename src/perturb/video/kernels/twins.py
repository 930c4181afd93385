"""Every op's kernels, registered where they are defined: the numpy kernel and its torch twin.

A kernel module registers each kernel beside its definition (``@numpy_kernel("defocus_blur")``,
``@torch_kernel("defocus_blur")``), keyed by the op it renders; an op's renderer finds them
through :func:`kernels_of`. The torch modules (``torch_*.py``, which import torch) are imported
on the first torch lookup, so registering an op and rendering numpy clips never imports torch.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any, Callable, Iterator, Mapping

import numpy as np

Kernel = Callable[[Any, np.ndarray, Mapping[str, Any], Mapping[str, Any]], Any]   # (frames, ids, drawn, params)
Drawer = Callable[[np.random.Generator, int, Mapping[str, Any]], dict[str, Any]]   # (rng, n_frames, params)
LIBRARIES = ("numpy", "torch")           # the array libraries a kernel is written for

_KERNELS: dict[str, dict[str, Kernel]] = {library: {} for library in LIBRARIES}
_torch_modules_loaded = False


def register_kernel(op: str, library: str, kernel: Callable[..., Any], key: str | None = None) -> Kernel:
    """Register ``kernel`` as op ``op``'s ``library`` kernel. ``key`` names the one draw the
    kernel takes in place of the whole ``drawn`` mapping (the noise kernels take their clip's key)."""
    if library not in LIBRARIES:
        raise ValueError(f"a kernel's library must be one of {LIBRARIES}; got {library!r}")
    table = _KERNELS[library]
    if op in table:
        raise ValueError(f"{op} already has a {library} kernel: {table[op].__qualname__}")
    if key is not None:
        inner = kernel

        @functools.wraps(inner)
        def kernel(frames: Any, ids: np.ndarray, drawn: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
            return inner(frames, ids, drawn[key], params)
    table[op] = kernel
    return kernel


def kernel_for(library: str, *ops: str) -> Callable[[Kernel], Kernel]:
    """Decorator: the function is the ``library`` kernel of each of ``ops``."""
    def register(fn: Kernel) -> Kernel:
        for op in ops:
            register_kernel(op, library, fn)
        return fn
    return register


numpy_kernel = functools.partial(kernel_for, "numpy")     # @numpy_kernel("defocus_blur")
torch_kernel = functools.partial(kernel_for, "torch")     # @torch_kernel("defocus_blur"): its torch twin


def _load_torch_modules() -> None:
    """Import every ``torch_*`` kernel module once (each registers its torch twins); nothing
    when torch is not installed."""
    global _torch_modules_loaded
    if _torch_modules_loaded:
        return
    try:
        for module in pkgutil.iter_modules(importlib.import_module(__package__).__path__):
            if module.name.startswith("torch_"):
                importlib.import_module(f"{__package__}.{module.name}")
    except ModuleNotFoundError as err:
        if err.name != "torch":
            raise
    _torch_modules_loaded = True


def registered(library: str) -> Mapping[str, Kernel]:
    """Op name -> ``library`` kernel, for every op that registered one."""
    if library == "torch":
        _load_torch_modules()
    return _KERNELS[library]


class OpKernels(Mapping[str, Kernel]):
    """The kernels registered for one op, by array library ("numpy", "torch"): looked up at use,
    so a torch twin is imported only when a torch clip asks for it."""

    def __init__(self, op: str) -> None:
        self.op = op

    def __getitem__(self, library: str) -> Kernel:
        if library not in LIBRARIES or self.op not in registered(library):
            raise KeyError(library)
        return registered(library)[self.op]

    def __iter__(self) -> Iterator[str]:
        return (library for library in LIBRARIES if self.op in registered(library))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return OpKernels, (self.op,)

    def __repr__(self) -> str:
        return f"kernels_of({self.op!r})"


def kernels_of(op: str) -> OpKernels:
    """Op ``op``'s registered kernels (its numpy kernel must be registered by now: its module is
    imported before the op is)."""
    if op not in _KERNELS["numpy"]:
        raise ValueError(f"{op} has no numpy kernel registered; register one with @numpy_kernel({op!r}) "
                         "where it is defined")
    return OpKernels(op)
