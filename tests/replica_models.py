"""A ``callable:`` model for replica tests: it records every build (process, the device it was built
for, the CUDA_VISIBLE_DEVICES it saw) and never touches CUDA, so GPU placement runs on a CPU machine."""
from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path

from perturb.bench.adapters.toy import ToyEncoder

LOG_ENV = "REPLICA_TEST_LOG"        # folder the builds are recorded in
KILL_ENV = "REPLICA_TEST_KILL"      # marker file: the first replica to encode videos creates it and dies


class Recorder(ToyEncoder):
    """The toy encoder (same numbers everywhere), built for ``device`` and recording that it was."""

    def __init__(self, device: str = "unset") -> None:
        super().__init__(16)
        self.id = "recorder"
        self.device = device
        log = os.environ.get(LOG_ENV)
        if log:
            record = {"pid": os.getpid(), "device": device,
                      "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}
            (Path(log) / f"{os.getpid()}-{uuid.uuid4().hex}.json").write_text(json.dumps(record))

    def encode_videos(self, clips):
        marker = os.environ.get(KILL_ENV)
        if marker and not os.path.exists(marker):
            Path(marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)          # a replica dies in the middle of a shard
        return super().encode_videos(clips)


def builds(log: Path) -> list[dict]:
    """Every build recorded in ``log``."""
    return [json.loads(p.read_text()) for p in sorted(Path(log).glob("*.json"))]


def score(clips, texts):
    """A cross-encoder function: the clip's mean brightness plus the caption's length."""
    import numpy as np

    return np.array([float(np.asarray(c).mean()) / 255 + len(t) / 100 for c, t in zip(clips, texts)])
