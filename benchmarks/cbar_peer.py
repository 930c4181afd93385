"""ImageNet-C-bar's reference code (facebookresearch/augmentation-corruption, ``imagenet_c_bar/``)
in the peer environment, driven through a worker.

:class:`ReferenceWorker` starts this file as a script in the peer interpreter with the reference's
folder on ``sys.path`` (``import corrupt``; a class is found by its ``name``, which is our op's
name). Requests: ``transform`` renders frames at given keyword arguments and times its own loop;
``sample`` calls ``sample_parameters()`` n times after seeding the global ``np.random`` it draws
from. Arguments travel as JSON with their types kept (:func:`to_wire` / :func:`from_wire`:
arrays, tuples and lists stay what they were), so the reference sees what its own sampler gives.

This file is imported by the benchmark and also run by the peer interpreter: that side uses only
the standard library, numpy and the reference's own imports (scipy, scikit-image, Pillow).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Sequence

if __package__:
    from .peers import Answer, PeerProcess, serve
else:                                   # run as a script by the peer interpreter
    from peers import Answer, PeerProcess, serve

CLONE = "git clone https://github.com/facebookresearch/augmentation-corruption"


def reference_folder(root: str | Path) -> Path:
    """The folder holding the reference's ``corrupt.py``: ``root`` itself or its ``imagenet_c_bar/``."""
    root = Path(root)
    for folder in (root, root / "imagenet_c_bar"):
        if (folder / "corrupt.py").is_file():
            return folder
    raise FileNotFoundError(f"no ImageNet-C-bar reference code at {root} (expected corrupt.py there or in "
                            f"its imagenet_c_bar/): run `{CLONE} DIR` and pass --reference DIR")


def to_wire(value: Any) -> Any:
    """``value`` as JSON data that :func:`from_wire` turns back into the same types."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist(), "dtype": value.dtype.str}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [to_wire(v) for v in value]}
    if isinstance(value, list):
        return [to_wire(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: to_wire(v) for k, v in value.items()}}
    return value


def from_wire(value: Any) -> Any:
    """The value :func:`to_wire` wrote."""
    import numpy as np

    if isinstance(value, list):
        return [from_wire(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "ndarray" in value:
        return np.asarray(value["ndarray"], dtype=np.dtype(value["dtype"]))
    if "tuple" in value:
        return tuple(from_wire(v) for v in value["tuple"])
    return {k: from_wire(v) for k, v in value["dict"].items()}


class ReferenceWorker(PeerProcess):
    """A running worker holding the reference's ``corrupt`` module; ``info`` names its versions."""

    def __init__(self, reference: Path, python: Path | None = None) -> None:
        super().__init__(Path(__file__).resolve(), ["--worker", str(reference_folder(reference))], python)

    def transform(self, op: str, level: float, clip: Path, kwargs: Sequence[dict[str, Any]], out: Path) -> float:
        """Render frame i of the .npy ``clip`` with ``transform(frame, **kwargs[i])`` at the
        reference's ``level`` and im_size = the frame's side; saved to ``out``; seconds taken."""
        reply = self.request(cmd="transform", op=op, level=level, clip=str(clip), out=str(out),
                             kwargs=[to_wire(k) for k in kwargs])
        return float(reply["seconds"])

    def sample(self, op: str, level: float, side: int, n: int, seed: int) -> list[dict[str, Any]]:
        """``n`` calls of ``sample_parameters()`` at ``level`` and im_size ``side``, after
        ``np.random.seed(seed)``."""
        reply = self.request(cmd="sample", op=op, level=level, side=side, n=n, seed=seed)
        return [from_wire(s) for s in reply["samples"]]


# ------------------------------------------------------------------ worker (peer interpreter)
def _reference(folder: str) -> tuple[Answer, dict[str, Any]]:
    """The worker: the reference's classes by name, answering ``transform`` and ``sample``."""
    import numpy as np

    sys.path.insert(0, folder)
    import corrupt
    from base import Transform

    classes = {c.name: c for c in vars(corrupt).values()
               if isinstance(c, type) and issubclass(c, Transform) and c is not Transform}

    def instance(req: dict[str, Any], side: int) -> Any:
        if req["op"] not in classes:
            raise KeyError(f"the reference has no transform named {req['op']}")
        return classes[req["op"]](req["level"], side)

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        if req["cmd"] == "sample":
            reference = instance(req, req["side"])
            np.random.seed(req["seed"])
            return {"samples": [to_wire(reference.sample_parameters()) for _ in range(req["n"])]}
        clip = np.load(req["clip"])
        reference = instance(req, clip.shape[1])
        out = np.empty_like(clip)
        t0 = time.perf_counter()
        for i, frame in enumerate(clip):
            out[i] = reference.transform(frame, **from_wire(req["kwargs"][i]))
        seconds = time.perf_counter() - t0
        np.save(req["out"], out)
        return {"seconds": seconds}

    import PIL
    import scipy
    import skimage
    return answer, {"ready": True, "ops": sorted(classes), "numpy": np.__version__, "scipy": scipy.__version__,
                    "scikit-image": skimage.__version__, "Pillow": PIL.__version__}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        serve(lambda: _reference(sys.argv[2]))
