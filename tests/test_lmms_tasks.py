"""``perturb lmms-tasks``: lmms-eval task variants over a perturb-built copy (no lmms-eval needed):
exact YAMLs, rewritten data files that point at the corrupted clips, a generated doc_to_visual for a
Video-MME-style task, and bad input refused in one line before any file is written."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from lmms_fixtures import LOCAL_CLIPS, LOCAL_TASK, VMME_TASK, build_copy, lmms_tasks_argv, scene
from perturb.cli import main
from perturb.dataset.manifest import read_rows
from perturb.fileio import sha256_file
from perturb.lmms.manifest import read_manifest
from perturb.lmms.yamls import FunctionRef, find_task, load_config

VARIANTS = ("contrast_1", "contrast_5", "reverse_sampling_1", "reverse_sampling_5")


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return scene(tmp_path_factory.mktemp("lmms"))


@pytest.fixture(scope="module")
def written(paths, tmp_path_factory):
    out = tmp_path_factory.mktemp("written") / "variants"
    assert main(lmms_tasks_argv(paths, out)) == 0
    return out


def run(capsys, argv):
    code = main(argv)
    return code, capsys.readouterr().err


def test_the_folder_holds_a_yaml_per_variant_the_data_the_module_and_the_manifest(written):
    names = [f"{t}_perturb_{v}" for t in (LOCAL_TASK, VMME_TASK) for v in ("clean", *VARIANTS)]
    assert sorted(str(p.relative_to(written)) for p in written.rglob("*") if p.is_file()) == sorted(
        [f"{n}.yaml" for n in names] + [f"data/{LOCAL_TASK}_perturb_{v}/0_data.json" for v in VARIANTS]
        + ["perturb-lmms.json", "perturb_visual.json", "perturb_visual.py"])


def test_the_yamls_include_the_original_and_override_only_the_visuals(written, paths):
    original = paths["tasks"] / LOCAL_TASK / f"{LOCAL_TASK}.yaml"
    assert (written / "colour_mc_perturb_clean.yaml").read_text() == (
        "# perturb lmms-tasks 0.2.0: colour_mc with its own videos (clean) (seed 0)\n"
        f'include: "{original}"\ntask: colour_mc_perturb_clean\ntag: [colour_mc_perturb]\n')
    assert (written / "colour_mc_perturb_contrast_5.yaml").read_text() == (
        "# perturb lmms-tasks 0.2.0: colour_mc with its videos under contrast at severity 5 (seed 0)\n"
        f'include: "{original}"\ntask: colour_mc_perturb_contrast_5\ntag: [colour_mc_perturb]\n'
        f"dataset_kwargs:\n  data_files:\n    test: {written}/data/colour_mc_perturb_contrast_5/0_data.json\n")
    vmme = paths["tasks"] / VMME_TASK / f"{VMME_TASK}.yaml"
    assert (written / "vmme_mini_perturb_reverse_sampling_1.yaml").read_text() == (
        "# perturb lmms-tasks 0.2.0: vmme_mini with its videos under reverse_sampling at severity 1 (seed 0)\n"
        f'include: "{vmme}"\ntask: vmme_mini_perturb_reverse_sampling_1\ntag: [vmme_mini_perturb]\n'
        "doc_to_visual: !function perturb_visual.vmme_mini_perturb_reverse_sampling_1\n")


def test_a_variant_config_is_the_original_with_its_name_tag_and_data(written, paths):
    original = load_config(paths["tasks"] / LOCAL_TASK / f"{LOCAL_TASK}.yaml")
    variant = load_config(written / "colour_mc_perturb_reverse_sampling_1.yaml")
    data = str(written / "data/colour_mc_perturb_reverse_sampling_1/0_data.json")
    assert variant == {**original, "task": "colour_mc_perturb_reverse_sampling_1", "tag": ["colour_mc_perturb"],
                       "dataset_kwargs": {"data_files": {"test": data}}}
    assert variant["doc_to_visual"] == FunctionRef("utils.colour_doc_to_visual", str(paths["tasks"] / LOCAL_TASK))


@pytest.mark.parametrize("variant", VARIANTS)
def test_rewritten_data_points_at_the_copys_clips_and_keeps_every_other_field(written, paths, variant):
    op, severity = variant.rsplit("_", 1)
    original = json.loads((paths["tasks"] / LOCAL_TASK / "data.json").read_text())
    rewritten = json.loads((written / f"data/{LOCAL_TASK}_perturb_{variant}/0_data.json").read_text())
    expected = [str(paths["copy"] / "videos" / op / severity / f"{clip}.mkv") for clip in LOCAL_CLIPS]
    assert [d["video"] for d in rewritten] == expected
    assert all(Path(p).is_file() for p in expected)
    assert [{**d, "video": None} for d in rewritten] == [{**d, "video": None} for d in original]


def test_the_manifest_records_hashes_seed_version_and_the_video_folder(written, paths):
    manifest = read_manifest(written)
    assert (manifest.format, manifest.perturb_version, manifest.seed) == ("perturb-lmms/1", "0.2.0", 0)
    local, vmme = manifest.tasks
    assert (local.task, local.tag, local.clean, local.videos, local.metric) == (
        LOCAL_TASK, "colour_mc_perturb", "colour_mc_perturb_clean", None, None)
    assert local.yaml_sha256 == sha256_file(paths["tasks"] / LOCAL_TASK / f"{LOCAL_TASK}.yaml")
    assert vmme.videos == str(paths["videos"])
    rows = {(r["perturbation"], r["severity"], r["item_id"]): r for r in read_rows(paths["copy"] / "manifest.jsonl")}
    for variant in local.variants:
        lines = sorted(f"{rows[(variant.op, variant.severity, c)]['path']} {rows[(variant.op, variant.severity, c)]['sha256']}\n"
                       for c in LOCAL_CLIPS)
        assert variant.copy_sha256 == hashlib.sha256("".join(lines).encode()).hexdigest()
        assert variant.copy == str(paths["copy"])
    assert [(v.task, v.op, v.severity) for v in vmme.variants] == [
        ("vmme_mini_perturb_contrast_1", "contrast", 1), ("vmme_mini_perturb_contrast_5", "contrast", 5),
        ("vmme_mini_perturb_reverse_sampling_1", "reverse_sampling", 1),
        ("vmme_mini_perturb_reverse_sampling_5", "reverse_sampling", 5)]


def load_generated(folder: Path):
    spec = importlib.util.spec_from_file_location("perturb_visual", folder / "perturb_visual.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_doc_to_visual_swaps_the_video_folder_for_the_copys(written, paths, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(paths["hf_home"]))
    visual = load_generated(written)
    copy = paths["copy"] / "videos"
    assert visual.vmme_mini_perturb_contrast_5({"videoID": "vid001"}) == [str(copy / "contrast/5/vid001.mkv")]
    assert visual.vmme_mini_perturb_reverse_sampling_1({"videoID": "vid002"}, {"pre_prompt": ""}) == [
        str(copy / "reverse_sampling/1/vid002.mkv")]          # the original found vid002.MP4
    assert visual.vmme_mini_perturb_contrast_1({"videoID": "vid003"}) == [str(copy / "contrast/1/vid003.mkv")]
    assert visual.original("vmme_mini_perturb_contrast_1")({"videoID": "vid002"}) == [
        str(paths["videos"] / "vid002.MP4")]


def test_the_generated_doc_to_visual_refuses_a_video_the_copy_lacks(written, paths, tmp_path, monkeypatch):
    shutil.copytree(paths["hf_home"], tmp_path / "hf")
    shutil.copy(tmp_path / "hf/vmme_mini/data/vid001.mp4", tmp_path / "hf/vmme_mini/data/vid009.mp4")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    visual = load_generated(written)
    visual.VARIANTS["vmme_mini_perturb_contrast_1"]["videos"] = str(tmp_path / "hf/vmme_mini/data")
    with pytest.raises(FileNotFoundError, match="vid009.mp4: not in the corrupted copy of vmme_mini_perturb_contrast_1"):
        visual.vmme_mini_perturb_contrast_1({"videoID": "vid009"})


def test_the_generated_module_imports_only_the_standard_library(written):
    import ast
    tree = ast.parse((written / "perturb_visual.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported == {"importlib.util", "inspect", "json", "os"}
    assert set(imported) <= set(sys.stdlib_module_names) | {"importlib.util"}


def test_include_chains_resolve_relative_to_each_yaml(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "base/_template_yaml").write_text("dataset_path: json\ndataset_kwargs:\n  data_files: d.json\n"
                                                   "doc_to_visual: !function utils.fn\nmetric_list: [{metric: acc}]\n")
    (tmp_path / "base/d.json").write_text("[]")
    (tmp_path / "base/task.yaml").write_text("include: _template_yaml\ntask: t1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/v.yaml").write_text("include: ../base/task.yaml\ntask: t2\n")
    assert load_config(tmp_path / "sub/v.yaml") == {
        "dataset_path": "json", "dataset_kwargs": {"data_files": str(tmp_path / "base/d.json")},
        "doc_to_visual": FunctionRef("utils.fn", str(tmp_path / "base")), "metric_list": [{"metric": "acc"}],
        "task": "t2"}
    assert find_task("t2", [tmp_path]) == tmp_path / "sub/v.yaml"


def no_video_task(root: Path) -> Path:
    folder = root / "textonly"
    folder.mkdir(parents=True)
    (folder / "data.json").write_text('[{"question": "2+2?", "answer": "4"}]\n')
    (folder / "textonly.yaml").write_text("dataset_path: json\ndataset_kwargs:\n  data_files:\n    test: data.json\n"
                                          "task: textonly\ntest_split: test\ndoc_to_text: question\n")
    return root


@pytest.mark.parametrize("case, message", [
    ("unknown task", "unknown lmms-eval task 'nosuch' (searched "),
    ("no video field", "task 'textonly' has no video field: neither a local data file whose docs name video "
                       "files nor a doc_to_visual function over a video folder"),
    ("copy missing a video", "lacks video 'red_2' for contrast at severity 1 (built with ok status for 3 videos)"),
    ("severity not built", "has no contrast at severity 3 (it has contrast@1, contrast@5, "),
    ("no --videos", "task 'vmme_mini' builds its video paths in utils.vmme_doc_to_visual: pass --videos DIR"),
    ("unknown op", "--perturbations: unknown video perturbation 'nosuch_op'"),
    ("wrong seed", "--seed 3: the copy "),
    ("not a copy", "not a perturb build output (no dataset.json)"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(capsys, paths, tmp_path, case, message):
    out = tmp_path / "out"
    argv = lmms_tasks_argv(paths, out)
    if case == "unknown task":
        argv = lmms_tasks_argv(paths, out, "nosuch")
    elif case == "no video field":
        argv = lmms_tasks_argv(paths, out, "textonly")
        argv[argv.index("--include-path") + 1] = str(no_video_task(tmp_path / "more"))
    elif case == "copy missing a video":
        clips = [p for p in sorted((paths["tasks"] / LOCAL_TASK / "videos").glob("*.mp4")) if p.stem != "red_2"]
        argv = lmms_tasks_argv({**paths, "copy": build_copy(clips, tmp_path / "short", "contrast", "1,5")},
                               out, LOCAL_TASK, ops="contrast")
    elif case == "severity not built":
        argv = lmms_tasks_argv(paths, out, severities="1,3")
    elif case == "no --videos":
        argv = lmms_tasks_argv(paths, out, VMME_TASK)
        i = argv.index("--videos")
        del argv[i:i + 2]
    elif case == "unknown op":
        argv = lmms_tasks_argv(paths, out, ops="nosuch_op")
    elif case == "wrong seed":
        argv += ["--seed", "3"]
    elif case == "not a copy":
        argv[argv.index("--copy") + 1] = str(tmp_path)
    code, err = run(capsys, argv)
    assert code == 2
    assert err.startswith("perturb lmms-tasks: error: ") and message in err and err.count("\n") == 1, err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_non_empty_folder_is_refused_and_an_earlier_output_replaced_only_with_force(capsys, paths, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, err = run(capsys, lmms_tasks_argv(paths, out, LOCAL_TASK))
    assert (code, err.strip()) == (2, f"perturb lmms-tasks: error: --out {out}: not empty and not written by "
                                      "perturb lmms-tasks; choose an empty folder")
    (out / "notes.txt").unlink()
    assert run(capsys, lmms_tasks_argv(paths, out, LOCAL_TASK)) == (0, "")
    code, err = run(capsys, lmms_tasks_argv(paths, out, VMME_TASK))
    assert (code, err.strip()) == (2, f"perturb lmms-tasks: error: --out {out}: holds an earlier perturb "
                                      "lmms-tasks folder; pass --force to replace it")
    assert run(capsys, lmms_tasks_argv(paths, out, VMME_TASK) + ["--force"]) == (0, "")
    assert [t.task for t in read_manifest(out).tasks] == [VMME_TASK]
    assert not (out / "data").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_path_building_task_over_local_docs_gets_the_same_generated_doc_to_visual(tmp_path, monkeypatch):
    paths = scene(tmp_path / "scene", ops="contrast", severities="5", local_docs=True)
    out = tmp_path / "out"
    assert main(lmms_tasks_argv(paths, out, VMME_TASK, ops="contrast", severities="5")) == 0
    assert (out / "vmme_mini_perturb_contrast_5.yaml").read_text().endswith(
        "doc_to_visual: !function perturb_visual.vmme_mini_perturb_contrast_5\n")
    monkeypatch.setenv("HF_HOME", str(paths["hf_home"]))
    assert load_generated(out).vmme_mini_perturb_contrast_5({"videoID": "vid002"}) == [
        str(paths["copy"] / "videos/contrast/5/vid002.mkv")]


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_csv_and_json_lines_data_are_rewritten_in_their_own_format(paths, tmp_path, kind):
    folder = tmp_path / "tasks/colour_flat"
    folder.mkdir(parents=True)
    clips = paths["tasks"] / LOCAL_TASK / "videos"
    rows = [{"clip": str(clips / f"{c}.mp4"), "answer": c[0].upper()} for c in ("red_1", "blue_1")]
    name = f"data.{kind}"
    if kind == "csv":
        (folder / name).write_text("clip,answer\n" + "".join(f"{r['clip']},{r['answer']}\n" for r in rows))
    else:
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    builder = "csv" if kind == "csv" else "json"
    (folder / "colour_flat.yaml").write_text(f"dataset_path: {builder}\ndataset_kwargs:\n  data_files: {name}\n"
                                             "task: colour_flat\ndoc_to_visual: clip\n")
    out = tmp_path / "out"
    argv = lmms_tasks_argv({**paths, "tasks": tmp_path / "tasks"}, out, "colour_flat", ops="contrast", severities="5")
    assert main(argv) == 0
    copy = paths["copy"] / "videos/contrast/5"
    text = (out / f"data/colour_flat_perturb_contrast_5/0_{name}").read_text()
    if kind == "csv":
        assert text == f"clip,answer\n{copy / 'red_1.mkv'},R\n{copy / 'blue_1.mkv'},B\n"
    else:
        assert text == "".join(json.dumps(r) + "\n" for r in [{"clip": str(copy / "red_1.mkv"), "answer": "R"},
                                                               {"clip": str(copy / "blue_1.mkv"), "answer": "B"}])
    assert load_config(out / "colour_flat_perturb_contrast_5.yaml")["dataset_kwargs"] == {
        "data_files": str(out / f"data/colour_flat_perturb_contrast_5/0_{name}")}
