"""The benchmark runner: clean first, then every (modality, perturbation, severity) configuration.

Three modules, one job each: :mod:`.plan` (which configurations), :mod:`.encoder` (embeddings and
rankings of one configuration, through the cache) and :mod:`.shards` (spreading them over
workers). Every name stays importable from here.
"""
from __future__ import annotations

from .encoder import (Encoder, Ranked, Settings, _bar, _host, _normalise, _video_desc,  # noqa: F401
                      recipe)
from .plan import Job, plan  # noqa: F401
from .shards import (RemoteTask, VideoShard, WorkerContext, _shards, _uses_cuda, _video_configs,  # noqa: F401
                     _worker_model, run_jobs, run_remote, run_video_shard, shard_videos, skip_record)
from .sources import CLEAN  # noqa: F401
