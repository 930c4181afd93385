"""The lmms-eval task folder's manifest: exact JSON written, read back equal, one-line errors."""
from __future__ import annotations

import json

import pytest

from perturb.errors import UsageError
from perturb.lmms.manifest import (Manifest, TaskEntry, Variant, read_manifest, tag_name, variant_name,
                                   write_manifest)

MANIFEST = Manifest("0.2.0", 7, (TaskEntry(
    task="videomme", yaml="/t/videomme.yaml", yaml_sha256="ab" * 32, tag="videomme_perturb",
    clean="videomme_perturb_clean", videos="/data/videos",
    variants=(Variant("videomme_perturb_shot_noise-imagenet-c_3", "shot_noise:imagenet-c", 3, "/copy", "cd" * 32),)),))


def test_names_follow_the_contract():
    assert variant_name("videomme") == "videomme_perturb_clean"
    assert variant_name("videomme", "shot_noise:imagenet-c", 3) == "videomme_perturb_shot_noise-imagenet-c_3"
    assert tag_name("videomme") == "videomme_perturb"


def test_written_json_is_exact_and_reads_back(tmp_path):
    write_manifest(tmp_path, MANIFEST)
    body = json.loads((tmp_path / "perturb-lmms.json").read_text())
    assert body == {"format": "perturb-lmms/1", "perturb_version": "0.2.0", "seed": 7, "tasks": [{
        "task": "videomme", "yaml": "/t/videomme.yaml", "yaml_sha256": "ab" * 32, "tag": "videomme_perturb",
        "metric": None, "clean": "videomme_perturb_clean", "videos": "/data/videos",
        "variants": [{"task": "videomme_perturb_shot_noise-imagenet-c_3", "op": "shot_noise:imagenet-c",
                      "severity": 3, "copy": "/copy", "copy_sha256": "cd" * 32}]}]}
    assert read_manifest(tmp_path) == MANIFEST
    assert read_manifest(tmp_path / "perturb-lmms.json").task("videomme").clean == "videomme_perturb_clean"


@pytest.mark.parametrize("text, message", [
    (None, "no perturb-lmms.json (expected a folder written by perturb lmms-tasks)"),
    ("{", "not a readable JSON manifest"),
    ('{"format": "other"}', "format must be 'perturb-lmms/1', got 'other'"),
    ('{"format": "perturb-lmms/1", "perturb_version": "0.2.0", "seed": "0", "tasks": []}',
     "'seed' must be an integer, got '0'"),
    ('{"format": "perturb-lmms/1", "perturb_version": "0.2.0", "seed": 0, "tasks": [{"task": "t"}]}',
     "task 0 has no 'yaml'"),
])
def test_a_bad_manifest_is_one_line(tmp_path, text, message):
    if text is not None:
        (tmp_path / "perturb-lmms.json").write_text(text)
    with pytest.raises(UsageError) as err:
        read_manifest(tmp_path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_unknown_task_names_the_ones_there():
    with pytest.raises(UsageError, match="'x' is not a task of this manifest \\(it has videomme\\)"):
        MANIFEST.task("x")
