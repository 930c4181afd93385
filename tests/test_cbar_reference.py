"""ImageNet-C-bar against its reference code (facebookresearch/augmentation-corruption).

The comparison itself runs in the peer environment (``python -m benchmarks.cbar_reference
--reference DIR --record``) and is recorded in tests/data/cbar_reference.json. Here: the record
covers every op with a reference form at every severity and meets the bar (PSNR >= 40 dB at the
same draw, KS p > 0.01 per drawn component, constants equal); our frames at the recorded seeds
still hash as recorded (a kernel changed without re-running the comparison fails, naming the
command); and one live comparison where the peer environment and the reference are here.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest

from benchmarks import cbar_reference as cr
from benchmarks.cbar_peer import CLONE, from_wire, reference_folder, to_wire
from perturb.video.suites import SUITES

RERUN = f"re-run `{cr.COMMAND}` and commit {cr.RECORD.relative_to(cr.ROOT)}"


@pytest.fixture(scope="module")
def record() -> dict:
    if not cr.RECORD.exists():
        pytest.fail(f"{cr.RECORD.relative_to(cr.ROOT)} is missing: {RERUN}")
    return json.loads(cr.RECORD.read_text())


def test_the_record_covers_every_op_with_a_reference_form_at_every_severity(record: dict) -> None:
    assert record["ops"] == cr.compared_ops(), f"the ops with a reference form changed: {RERUN}"
    if "imagenet-c-bar" in SUITES:
        assert sorted(SUITES["imagenet-c-bar"][0]) == record["ops"]
    speed_rows = [r["op"] for r in record["speed"]["rows"]]
    assert speed_rows == record["ops"]
    for op in record["ops"]:
        assert sorted(record["fidelity"]["cells"][op]) == ["1", "2", "3", "4", "5"], op
        coherence = record["fidelity"]["coherence"]["cells"][op]
        assert sorted(coherence) == ["clip", "per_frame"], op
        # frame 1 reads frame 0's draw with one draw per clip, its own with per_frame=True
        assert (coherence["clip"]["same_draw_as_t0"], coherence["per_frame"]["same_draw_as_t0"]) == (True, False), op
        dist = record["distributions"]["ops"][op]
        assert dist["problems"] == [], op
        assert dist["ks"] or dist["constants"], op
        for per in dist["constants"].values():
            assert sorted(per) == ["1", "2", "3", "4", "5"], op
    assert record["fidelity"]["side"] == 64
    assert (record["distributions"]["draws"], record["distributions"]["side"]) == (2000, 224)


def test_every_recorded_cell_meets_the_bar(record: dict) -> None:
    fid, dist = record["fidelity"], record["distributions"]
    cells = [c for row in fid["cells"].values() for c in row.values()]
    cells += [c for row in fid["coherence"]["cells"].values() for c in row.values()]
    assert min(c["psnr"] for c in cells) >= 40.0
    assert all(c["psnr"] == 99.0 for c in cells if c["identical"])
    ks = [r for row in dist["ops"].values() for r in row["ks"].values()]
    assert ks and min(r["p"] for r in ks) > 0.01
    assert all(c["equal"] for row in dist["ops"].values() for per in row["constants"].values() for c in per.values())
    assert cr.failures(record) == [] == record["failures"]


def test_our_frames_at_the_recorded_seeds_hash_as_recorded(record: dict) -> None:
    fid = record["fidelity"]
    coherence = fid["coherence"]
    one, two = cr.square_clip(1, fid["side"]), cr.square_clip(coherence["frames"], fid["side"])
    changed = []
    for op in record["ops"]:
        for severity, cell in fid["cells"][op].items():
            _, out = cr.our_render(op, int(severity), one, cell["seed"])
            if cr.digest(out[fid["frame"]]) != cell["sha256"]:
                changed.append(f"{op} s{severity}")
        for mode, cell in coherence["cells"][op].items():
            _, out = cr.our_render(op, coherence["severity"], two, cell["seed"], mode == "per_frame")
            if cr.digest(out[coherence["t"]]) != cell["sha256"]:
                changed.append(f"{op} t={coherence['t']} {mode}")
    assert not changed, f"our frames changed since the comparison was recorded ({', '.join(changed)}): {RERUN}"


def test_components_name_every_scalar_of_the_reference_kwargs() -> None:
    kwargs = {"centers": np.array([[1.5, 2.0], [3.0, 4.0]]), "scales": (7.0, 7.0), "seed": 4294967295,
              "intensity": [1, 2, 3]}
    assert cr.components(kwargs) == {"centers[0,0]": 1.5, "centers[0,1]": 2.0, "centers[1,0]": 3.0,
                                     "centers[1,1]": 4.0, "scales[0]": 7.0, "scales[1]": 7.0,
                                     "seed": 4294967295.0, "intensity[0]": 1.0, "intensity[1]": 2.0,
                                     "intensity[2]": 3.0}


def test_the_wire_keeps_arrays_tuples_and_lists_apart() -> None:
    kwargs = {"centers": np.array([[1.5, 2.0]]), "nrays": np.array([50, 199], dtype=np.int64),
              "scales": (7.0, 7.0), "intensity": [1.0, 2.0], "seed": np.int64(3), "phase": 0.25}
    back = from_wire(json.loads(json.dumps(to_wire(kwargs))))
    assert sorted(back) == sorted(kwargs)
    assert back["centers"].dtype == np.float64 and back["centers"].tolist() == [[1.5, 2.0]]
    assert back["nrays"].dtype == np.int64 and back["nrays"].tolist() == [50, 199]
    assert back["scales"] == (7.0, 7.0) and back["intensity"] == [1.0, 2.0]
    assert back["seed"] == 3 and type(back["seed"]) is int and back["phase"] == 0.25


def test_a_missing_reference_is_one_line_naming_the_clone(tmp_path, capsys) -> None:
    with pytest.raises(FileNotFoundError) as info:
        reference_folder(tmp_path)
    assert str(info.value) == (f"no ImageNet-C-bar reference code at {tmp_path} (expected corrupt.py there or "
                               f"in its imagenet_c_bar/): run `{CLONE} DIR` and pass --reference DIR")
    (tmp_path / "imagenet_c_bar").mkdir()
    (tmp_path / "imagenet_c_bar" / "corrupt.py").write_text("")
    assert reference_folder(tmp_path) == tmp_path / "imagenet_c_bar"
    assert cr.main(["--reference", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: no ImageNet-C-bar reference code at ")
    assert "git clone https://github.com/facebookresearch/augmentation-corruption DIR" in err


def test_an_op_without_a_reference_form_is_refused(tmp_path, capsys) -> None:
    (tmp_path / "corrupt.py").write_text("")
    assert cr.main(["--reference", str(tmp_path), "--ops", "gaussian_noise"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: expected ops with a reference form ({', '.join(cr.compared_ops()) or 'none yet'}); "
                   "got gaussian_noise\n")


def test_live_comparison_of_one_op_against_the_reference(record: dict, tmp_path) -> None:
    """The op the reference renders fastest, at severity 3 on a 32x32 frame, >= 40 dB (slow: runs the
    reference's per-pixel loops in the peer environment)."""
    from benchmarks.cbar_peer import ReferenceWorker
    from benchmarks.peers import peer_python

    if not peer_python().exists():
        pytest.skip(f"no peer environment at {peer_python().parents[1]} (python -m benchmarks.peers sets it up)")
    if not os.environ.get(cr.ENV):
        pytest.skip(f"{cr.ENV} is not set: point it at a checkout of the reference (`{CLONE} DIR`)")
    folder = reference_folder(os.environ[cr.ENV])
    op = min(record["speed"]["rows"], key=lambda r: r["reference_ms"])["op"]
    with ReferenceWorker(folder) as worker:
        cell = cr.compare(worker, tmp_path, op, 3, cr.square_clip(1, 32), 0, seed=7)
    print(f"{op} s3 at 32x32: {cell['psnr']} dB", file=sys.stderr)
    assert cell["psnr"] >= 40.0, f"{op} severity 3: {cell['psnr']} dB against the reference at the same draw"


def test_the_benchmarks_cbar_section_needs_the_reference(monkeypatch, capsys) -> None:
    from benchmarks.__main__ import main

    monkeypatch.delenv(cr.ENV, raising=False)
    assert main(["--sections", "cbar"]) == 2
    assert capsys.readouterr().err == (
        "error: no reference given: run `git clone https://github.com/facebookresearch/augmentation-corruption DIR` "
        f"and pass --reference DIR (or set {cr.ENV})\n")
