"""perturb bench against a faulty http model server on 127.0.0.1: rows of the wrong width are
never cached, a failed GET /info is retried then an error (never "no version"), and a run
reports the retries it made. A run after the server is fixed equals a clean run."""
from __future__ import annotations

import json
import shlex

import pytest

from bench_fixtures import write_tiny_dataset
from http_model import Handler, server  # noqa: F401  (server: the fixture)
from perturb.cli import main


@pytest.fixture()
def sleeps(monkeypatch):
    """Record the adapter's backoff waits instead of sleeping."""
    import perturb.bench.adapters.http as http_mod
    waited: list = []
    monkeypatch.setattr(http_mod.time, "sleep", waited.append)
    return waited


@pytest.fixture()
def bench(server, tmp_path, capsys):
    """``bench(out, *extra)``: perturb bench on 4 tiny videos (8 captions, batches of 4) against the
    server; returns (exit status, stderr lines, results.json or None)."""
    captions = write_tiny_dataset(tmp_path / "ds", n=4)

    def run(out: str, *extra: str):
        capsys.readouterr()
        argv = ["bench", "--model", f"http:{server}", "--dataset", str(captions), "--out", str(tmp_path / out),
                "--video-perturbations", "translate", "--severities", "1", "--text-perturbations", "Typos",
                "--bootstrap", "0", "--no-progress", "--batch-size", "4", "--frames", "2", *extra]
        code = main(argv)
        err = capsys.readouterr().err.strip().splitlines()
        results = tmp_path / out / "results.json"
        return code, err, json.loads(results.read_text()) if code == 0 else None
    return run


def _parts(root):
    return sorted(root.rglob("part-*.npz"))


def _error(err: list[str]) -> str:
    assert len(err) == 1 and err[0].startswith("perturb bench: error: "), err
    return err[0]


# --- item 14: rows are checked before they are cached ------------------------------------------

def test_a_wrong_first_batch_caches_nothing_and_the_fixed_server_resumes(bench, tmp_path):
    Handler.version, Handler.width, Handler.first_width = "v1", 32, 31      # no width declared
    code, err, _ = bench("run")
    assert code == 1
    line = _error(err)
    assert ("texts clean [4 rows, item02#0 to item03#1] returned width 32, but texts clean "
            "[4 rows, item00#0 to item01#1] returned width 31 and no other batch agrees with either; "
            "nothing of either batch is cached") in line
    assert "0 rows newly cached" in line and "re-run the same command to resume" in line
    assert _parts(tmp_path / "run") == []                                  # no part of width 31
    Handler.first_width, Handler.items = None, []                          # the server is fixed
    code, _, resumed = bench("run")
    assert code == 0
    assert resumed == bench("clean")[2]


def test_a_batch_against_the_declared_width_is_named_and_not_cached(bench, tmp_path):
    Handler.version, Handler.width, Handler.info_width, Handler.first_width = "v1", 32, 32, 31
    code, err, _ = bench("run")
    line = _error(err)
    assert code == 1 and (f"model http:{Handler.url}@2f: texts clean [4 rows, item00#0 to item01#1] returned width "
                          f"31; expected 32, the width the model declares; nothing of this batch is cached") in line
    assert "perturb cache rm" not in line and _parts(tmp_path / "run") == []
    Handler.first_width = None
    code, _, resumed = bench("run")
    assert code == 0 and resumed == bench("clean")[2]


def test_cached_rows_of_the_declared_width_are_kept_and_others_recomputed(bench, tmp_path):
    Handler.version, Handler.width = "v1", 31                              # an undeclared 31 is cached
    assert bench("run")[0] == 0
    Handler.width, Handler.info_width, Handler.items = 32, 32, []          # the server now declares 32
    with pytest.warns(UserWarning, match=r"inconsistent \(width 31, expected 32\)"):
        code, _, resumed = bench("run")
    assert code == 0 and Handler.items                                     # recomputed, no manual step
    assert resumed == bench("clean")[2]


def test_text_and_video_widths_that_differ_are_one_error_naming_both(bench, tmp_path):
    Handler.version, Handler.width, Handler.video_width = "v1", 32, 31
    code, err, _ = bench("run")
    line = _error(err)
    assert code == 1 and ("text and video widths differ: texts clean [4 rows, item00#0 to item01#1] width 32, "
                          "videos clean [4 rows, item00 to item03] width 31; a dual encoder must embed both "
                          "at one width for retrieval; nothing of this batch is cached") in line
    assert {p.relative_to(tmp_path / "run" / "cache").parts[3] for p in _parts(tmp_path / "run")} == {"text"}
    Handler.video_width = None
    code, _, resumed = bench("run")
    assert code == 0 and resumed == bench("clean")[2]


def test_cached_rows_that_a_changed_server_contradicts_are_cleared_by_the_printed_command(bench, tmp_path,
                                                                                           capsys):
    Handler.version, Handler.width = "v1", 31          # one model, then another behind the same version
    assert bench("run")[0] == 0
    Handler.width, Handler.items = 32, []
    code, err, _ = bench("run", "--severities", "1,2")                     # new work: translate at 2
    line = _error(err)
    cache = tmp_path / "run" / "cache"
    command = f"perturb cache rm {cache} --model http:{Handler.url}@2f"
    assert code == 1 and ("videos translate 2 [4 rows, item00 to item03] returned width 32; expected 31, the "
                          "width of the rows cached for texts clean; nothing of this batch is cached; if the rows "
                          f"of width 31 are the wrong ones, clear the cached rows with `{command}` and re-run") in line
    assert main(shlex.split(command)[1:]) == 0                             # the one step printed
    code, _, resumed = bench("run", "--severities", "1,2")
    assert code == 0 and resumed == bench("clean", "--severities", "1,2")[2]


# --- item 15: a failed version probe is retried, then an error --------------------------------

def test_a_failed_info_is_retried_and_keeps_the_versioned_key(bench, sleeps):
    Handler.version, Handler.info_failures = "v1", 2                       # two 500s, then the version
    code, err, first = bench("run")
    assert code == 0 and Handler.info_hits == 3 and sleeps[:2] == [0.5, 1.0]
    assert not any("reports no version" in e for e in err)
    Handler.items = []
    code, _, again = bench("run")
    assert code == 0 and Handler.items == [] and again == first            # the same key: nothing redone


def test_an_info_that_keeps_failing_is_an_error_not_no_version(bench, sleeps):
    Handler.version, Handler.info_failures = "v1", 100
    code, err, _ = bench("run")
    line = _error(err)
    assert code == 1 and line.startswith(f"perturb bench: error: {Handler.url}/info failed after 4 attempts "
                                         f"(timeout 60.0s per request): HTTP 500")
    assert Handler.hits == [] and Handler.info_hits == 4                   # no model work was done


@pytest.mark.parametrize("info", ["404", "no version"])
def test_a_server_answering_info_without_a_version_is_versionless(bench, info):
    Handler.info_width = 3 if info == "no version" else None               # 200 {"width": 3}, or 404
    code, err, _ = bench("run")
    assert code == 0 and any("reports no version" in e for e in err)


# --- item 16: a run reports its retries ------------------------------------------------------

def test_a_run_reports_its_retries_by_cause(bench, sleeps):
    Handler.version, Handler.faults = "v1", ["503", "slow", "cut", "ok", "503", "ok", "429"]
    Handler.info_failures = 1                                              # GET /info's retry counts too
    code, err, _ = bench("run", "--timeout", "0.3")
    assert code == 0, err
    assert err[-1] == ("perturb bench: note: http model: 6 retries (2× HTTP 503, 1× HTTP 500, 1× timeout, "
                       "1× cut body, 1× HTTP 429)")
    Handler.faults = []
    code, err, _ = bench("again")
    assert code == 0 and not any("retr" in e for e in err)
