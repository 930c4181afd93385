"""The benchmark runner: clean first, then every (modality, perturbation, severity) configuration.

Modules with one job each: :mod:`.plan` (which configurations), :mod:`.encoder` (embeddings and
rankings of one configuration, through the cache), :mod:`.shards` (running them here or on
replicas), :mod:`.replicas` and :mod:`.placement` (where replicas run) and
:mod:`.replica_tasks` (what a replica runs). Every name stays importable from here.
"""
from __future__ import annotations

from .encoder import (Encoder, Ranked, Settings, _bar, _host, _normalise, _video_desc,  # noqa: F401
                      recipe)
from .plan import Job, plan  # noqa: F401
from .placement import shards as _shards  # noqa: F401
from .shards import Sharded, _video_configs, run_jobs  # noqa: F401
from .sources import CLEAN  # noqa: F401
from .replica_tasks import (RemoteTask, TextTask, VideoShard, WorkerContext, _worker_model,  # noqa: F401
                            run_task, skip_record)
