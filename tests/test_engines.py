"""The loky backend: workers keep the models they load without warnings, and die with a killed build."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("joblib")
pytest.importorskip("psutil", reason="loky measures worker memory with psutil")

from perturb import engines  # noqa: E402

HERE = Path(__file__).resolve().parent


def test_a_worker_that_keeps_a_model_is_not_restarted_with_a_warning():
    import engine_tasks

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = sorted(engines.run(engine_tasks.keep_a_model, range(8), backend="loky", jobs=2))
    assert got == list(range(8))
    assert not [w for w in caught if "worker stopped" in str(w.message)]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see processes")
def test_loky_workers_exit_when_the_build_is_killed(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import engine_tasks
        from perturb import engines
        seen = set()
        for pid in engines.run(engine_tasks.slow_pid, range(200), backend="loky", jobs=2):
            if pid not in seen:
                seen.add(pid)
                print(pid, flush=True)
    """)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    build = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    workers = [int(build.stdout.readline()) for _ in range(2)]
    assert all(_alive(p) for p in workers)
    build.send_signal(signal.SIGKILL)
    build.wait()
    deadline = time.monotonic() + 20
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in workers if _alive(p)]
