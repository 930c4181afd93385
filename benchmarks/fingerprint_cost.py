"""What the content fingerprints cost: ``python -m benchmarks.fingerprint_cost``.

Times ``checkpoint_fingerprint`` on a one-file safetensors checkpoint and ``file_identity`` on
video-sized files, each of several sizes, read from the page cache (the warm re-run a cache
serves); prints a table and writes ``results/<date>-<machine>-fingerprint.json``.
"""
from __future__ import annotations

import statistics
import struct
import tempfile
import time
from pathlib import Path

import numpy as np

from perturb import fingerprint

from .harness import Settings, table, write_results

CHECKPOINT_MIB = (16, 256, 1024)
VIDEO_MIB = (1, 8, 64)


def _fill(path: Path, mib: int, header: bytes = b"") -> None:
    block = np.random.default_rng(0).integers(0, 256, 1 << 20, dtype=np.uint8).tobytes()
    with open(path, "wb") as f:
        f.write(header)
        for _ in range(mib):
            f.write(block)


def _median_ms(fn, repeats: int) -> float:
    fn()                                                     # warm-up: the file in the page cache
    times = []
    for _ in range(repeats):
        fingerprint._FILE_MEMO.clear()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(1000 * statistics.median(times), 2)


def main(repeats: int = 5) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mib in CHECKPOINT_MIB:
            folder = Path(tmp) / f"ckpt{mib}"
            folder.mkdir()
            (folder / "config.json").write_text("{}")
            _fill(folder / "model.safetensors", mib, struct.pack("<Q", 2) + b"{}")
            rows.append(["checkpoint_fingerprint", mib, _median_ms(lambda: fingerprint.checkpoint_fingerprint(folder), repeats)])
            (folder / "model.safetensors").unlink()
        for mib in VIDEO_MIB:
            video = Path(tmp) / f"v{mib}.mp4"
            _fill(video, mib)
            rows.append(["file_identity", mib, _median_ms(lambda: fingerprint.file_identity(video), repeats)])
            video.unlink()
    print(table(["function", "file MiB", "median ms"], rows))
    path = write_results({"fingerprint": [dict(zip(("function", "mib", "ms"), r)) for r in rows]},
                         Settings(repeats=repeats), suffix="-fingerprint")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
