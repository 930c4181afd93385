"""The peer side of the benchmarks: imagecorruptions in its own virtualenv, driven through a worker.

The peer lives in ``benchmarks/.peers/`` (created on first use, never in the project's
environment: it would pull a second OpenCV). A :class:`PeerWorker` starts this file as a script
inside that environment with the benchmark clip (.npy); the parent sends one JSON request per
line and gets one JSON reply per line, so peer and project calls can be timed alternately in
the same run. The worker times its own frame-by-frame loop, so the pipe is not counted.
:class:`PeerProcess` and :func:`serve` are that plumbing for any worker script in the peer
environment (``benchmarks/cbar_peer.py`` runs ImageNet-C-bar's reference code the same way).

This file is imported by the harness and also run by the peer interpreter: the worker part uses
only the standard library, numpy and imagecorruptions.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

HERE = Path(__file__).resolve().parent
PEERS_DIR = HERE / ".peers"
STAMP = PEERS_DIR / ".installed-imagecorruptions-1.1.2"
PEER_PACKAGE = "imagecorruptions==1.1.2"
# imagecorruptions declares opencv-python (clashes with headless) and imports pkg_resources.
PEER_DEPS = ("scipy", "scikit-image", "Pillow", "opencv-python-headless", "setuptools<81")


def peer_python() -> Path:
    """The interpreter of the peer virtualenv."""
    return PEERS_DIR / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_env(log=print) -> Path:
    """Create ``benchmarks/.peers`` with imagecorruptions if it is not there yet; its python."""
    py = peer_python()
    if STAMP.exists() and py.exists():
        return py
    import numpy

    base = getattr(sys, "_base_executable", sys.executable)
    log(f"setting up the peer environment in {PEERS_DIR} (one time, about a minute)")
    subprocess.run([base, "-m", "venv", str(PEERS_DIR)], check=True)
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    # Same numpy as the project, so array work costs the same on both sides.
    subprocess.run([*pip, f"numpy=={numpy.__version__}", *PEER_DEPS], check=True)
    subprocess.run([*pip, "--no-deps", PEER_PACKAGE], check=True)
    STAMP.write_text(PEER_PACKAGE + "\n")
    return py


class PeerProcess:
    """A worker script running in the peer interpreter: one JSON request per line in, one JSON
    reply per line out (a reply with ``error`` raises here); ``info`` is its first line."""

    def __init__(self, script: Path, args: Sequence[str] = (), python: Path | None = None) -> None:
        py = python or ensure_env()
        self.proc = subprocess.Popen([str(py), str(script), *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.info = self._reply()

    def _reply(self) -> dict[str, Any]:
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the peer worker stopped (exit code {self.proc.poll()})")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"peer worker: {reply['error']}")
        return reply

    def request(self, **req: Any) -> dict[str, Any]:
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)

    def __enter__(self) -> "PeerProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class PeerWorker(PeerProcess):
    """A running imagecorruptions worker holding one clip; ``run`` times one peer op over every frame."""

    def __init__(self, clip_path: Path, python: Path | None = None) -> None:
        super().__init__(Path(__file__).resolve(), ["--worker", str(clip_path)], python)

    def run(self, op: str, severity: int, seed: int = 0, out: Path | None = None) -> dict[str, Any]:
        """Time ``op`` on every frame; with ``out``, save the result there and report the angles drawn."""
        return self.request(op=op, severity=severity, seed=seed, out=None if out is None else str(out))


# ------------------------------------------------------------------ worker (peer interpreter)
def _accept_multichannel() -> None:
    """imagecorruptions 1.1.2 calls scikit-image's gaussian(..., multichannel=True) (gaussian_blur,
    glass_blur); scikit-image 0.19 renamed that argument channel_axis=-1 and later releases
    dropped the old name. Translate it, so the peer's own code runs unchanged otherwise."""
    import inspect

    from imagecorruptions import corruptions

    original = corruptions.gaussian
    if "multichannel" in inspect.signature(original).parameters:
        return

    def gaussian(image, *args, multichannel=None, **kwargs):
        if multichannel:
            kwargs.setdefault("channel_axis", -1)
        return original(image, *args, **kwargs)

    corruptions.gaussian = gaussian


def prepare_peer() -> None:
    """Make imagecorruptions 1.1.2 run unchanged on today's NumPy and scikit-image (in the peer)."""
    import numpy as np

    if "float_" not in np.__dict__:       # fog's plasma uses np.float_, gone in NumPy 2: restore the
        np.float_ = np.float64             # alias so the reference's own fog runs unchanged
    _accept_multichannel()


# A worker's answer to one request, and its setup: (answer, the ready line it sends first).
Answer = Callable[[dict[str, Any]], dict[str, Any]]
Setup = Callable[[], tuple[Answer, dict[str, Any]]]


def serve(setup: Setup) -> None:
    """Run a worker: ``setup()`` (imports, data) gives the answering function and the ready line;
    then one reply per request on stdin. The peer's own prints go to stderr so they cannot break
    the pipe; a failure (setup's too) is sent as ``{"error": ...}``, which the parent raises."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    sys.stdout = sys.stderr
    try:
        answer, ready = setup()
    except Exception as exc:
        channel.write(json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n")
        return
    channel.write(json.dumps(ready) + "\n")
    for line in sys.stdin:
        try:
            reply = answer(json.loads(line))
        except Exception as exc:  # reported to the parent, which raises
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        channel.write(json.dumps(reply) + "\n")


def _imagecorruptions(clip_path: str) -> tuple[Answer, dict[str, Any]]:
    """The imagecorruptions worker: each request times one op over every frame of the clip."""
    import numpy as np

    prepare_peer()
    import imagecorruptions
    from imagecorruptions import corrupt

    clip = np.load(clip_path)

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        np.random.seed(req["seed"])
        out = np.empty_like(clip) if req["out"] else None
        angles = []
        t0 = time.perf_counter()
        for i, frame in enumerate(clip):
            if out is None:
                corrupt(frame, severity=req["severity"], corruption_name=req["op"])
                continue
            if req["op"] == "motion_blur":          # the angle it is about to draw, for a matched run
                state = np.random.get_state()
                angles.append(float(np.random.uniform(-45, 45)))
                np.random.set_state(state)
            out[i] = corrupt(frame, severity=req["severity"], corruption_name=req["op"])
        seconds = time.perf_counter() - t0
        if out is not None:
            np.save(req["out"], out)
        return {"seconds": seconds, "angles": angles}

    return answer, {"ready": True, "version": getattr(imagecorruptions, "__version__", "1.1.2"),
                    "numpy": np.__version__}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        serve(lambda: _imagecorruptions(sys.argv[2]))
    else:
        print(ensure_env())
