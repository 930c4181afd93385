"""`perturb list / describe / apply / gallery` and the demo, through perturb.cli.main."""
from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

import perturb
from perturb.cli import main
from perturb.demo import PSNR_CAP, gallery_demo, summary_lines
from perturb.video.psnr import mean_psnr, psnr
from perturb.video import apply
from perturb.video.gallery import gallery, gallery_cells, render_grid
from perturb.video.io import read, write
from perturb.video.sample import sample_clip


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return np.stack([cv2.resize(f, (64, 48), interpolation=cv2.INTER_AREA) for f in sample_clip(16)])


@pytest.fixture(scope="module")
def video(tmp_path_factory, clip) -> str:
    path = tmp_path_factory.mktemp("cli") / "in.mkv"
    write(path, clip, 25.0)                    # ffv1: lossless
    return str(path)


def test_list_table(capsys):
    assert main(["list", "--modality", "video"]) == 0
    out = capsys.readouterr().out
    for spec in perturb.REGISTRY.select("video"):
        assert spec.name in out


def test_list_json_and_filters(capsys):
    assert main(["list", "--json", "--category", "temporal"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["jumble", "box_jumble", "sampling", "reverse_sampling", "freeze",
                                        "frame_rate"]
    assert all(r["temporal"] and r["severities"] == [1, 2, 3, 4, 5] for r in rows)
    assert main(["list", "--json", "--modality", "text"]) == 0
    assert all(r["modality"] == "text" for r in json.loads(capsys.readouterr().out))


def test_list_piped_is_one_perturbation_a_line(capsys):
    """Issue 27 item 8: not a terminal, so plain tab-separated rows: nothing wrapped or split."""
    from perturb.video.cli import PLAIN_COLUMNS

    assert main(["list", "--suite", "kinetics-c"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 12 and all(len(r) == len(PLAIN_COLUMNS) for r in rows)
    by_name = {r[0]: dict(zip(PLAIN_COLUMNS, r)) for r in rows}
    assert set(by_name) == set(perturb.REGISTRY.suite("kinetics-c").members)
    assert by_name["shot_noise"]["aliases"] == "Shot,Shot Noise,poisson_noise"
    assert by_name["shot_noise"]["table"] == "kinetics-c" and by_name["rain"]["severities"] == "1-5"
    assert main(["list"]) == 0
    names = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert names == [s.name for s in perturb.REGISTRY]


def test_list_a_filter_that_selects_nothing_says_why(capsys):
    """Issue 27 item 8: suites hold video ops, so --modality text with a suite is refused."""
    assert main(["list", "--suite", "kinetics-c", "--modality", "text"]) == 2
    err = capsys.readouterr()
    assert err.out == "" and err.err == (
        "perturb list: error: suite kinetics-c holds video perturbations only, so --modality text "
        "selects none; drop --modality or use --modality video\n")
    assert main(["list", "--suite", "msrvtt-p", "--category", "weather", "--json"]) == 2
    assert "suite msrvtt-p has no perturbations in category 'weather'" in capsys.readouterr().err


def test_list_bad_category(capsys):
    assert main(["list", "--category", "nosuch"]) == 2
    assert "expected one of" in capsys.readouterr().err


def test_describe(capsys):
    assert main(["describe", "SampleRate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("sampling (video / temporal)") and "severity 5: rate=32" in out
    assert main(["describe", "freez"]) == 2
    assert "did you mean 'freeze'" in capsys.readouterr().err


@pytest.mark.parametrize("name,severity,seed", [("jumble", 2, 3), ("static_rotate", 4, 0),
                                                ("gaussian_noise", 1, 7)])
def test_apply_writes_the_perturbed_clip(tmp_path, video, clip, name, severity, seed, capsys):
    out = tmp_path / "out.mkv"
    assert main(["apply", video, str(out), "--name", name, "--severity", str(severity),
                 "--seed", str(seed)]) == 0
    got, fps = read(out)
    assert fps == pytest.approx(25.0)
    assert np.array_equal(got, apply(clip, name, severity, seed=seed))
    assert name in capsys.readouterr().out


def test_apply_errors(tmp_path, video, capsys):
    assert main(["apply", video, str(tmp_path / "o.mkv"), "--name", "nosuch"]) == 2
    assert "unknown video perturbation" in capsys.readouterr().err
    bad = tmp_path / "notavideo.mp4"
    bad.write_bytes(b"hello")
    assert main(["apply", str(bad), str(tmp_path / "o.mkv"), "--name", "jpeg"]) == 2
    assert "cannot read video" in capsys.readouterr().err
    assert main(["apply", video, str(tmp_path / "o.mkv"), "--name", "jpeg", "--severity", "6"]) == 2
    assert capsys.readouterr().err == ("perturb apply: error: --severity must be 1..5; got 6 "
                                       "(see perturb apply --help)\n")



@pytest.mark.parametrize("name, codec, message", [
    ("o.webm", "ffv1", "'webm' container cannot hold codec 'ffv1'"),
    ("o.xyz", "ffv1", "no container format for the extension '.xyz'"),
    ("missing/o.mkv", "ffv1", "does not exist"),
    ("o.mkv", "nosuch", "unknown video encoder 'nosuch'"),
])
def test_apply_unwritable_output_is_a_usage_error(tmp_path, video, capsys, name, codec, message):
    out = tmp_path / name
    assert main(["apply", video, str(out), "--name", "jpeg", "--codec", codec]) == 2
    err = capsys.readouterr().err
    assert err.startswith("perturb apply: error: cannot write video" if codec != "nosuch"
                          else "perturb apply: error: unknown video encoder")
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_gallery_command(tmp_path, video, capsys):
    out = tmp_path / "g.png"
    assert main(["gallery", video, str(out), "--perturbations", "sampling", "StaticRotate",
                 "--frame", "5"]) == 0
    image = cv2.imread(str(out))
    assert image is not None and image.shape[0] > 2 * 48 and image.shape[1] > 6 * 64
    assert "2 perturbations" in capsys.readouterr().out
    assert main(["gallery", video, str(out), "--frame", "99"]) == 2
    assert main(["gallery", video, str(out), "--perturbations", "nosuch"]) == 2


def _found(image: np.ndarray, cell: np.ndarray) -> bool:
    """Whether ``cell`` appears pixel for pixel somewhere in ``image``."""
    score = cv2.matchTemplate(image.astype(np.float32), cell.astype(np.float32), cv2.TM_SQDIFF)
    y, x = np.unravel_index(np.argmin(score), score.shape)
    return np.array_equal(image[y:y + cell.shape[0], x:x + cell.shape[1]], cell)


def test_gallery_cells_show_frame_k_of_the_perturbed_clip(clip):
    cells = gallery_cells(clip, ["sampling", "freeze"], [1, 5], frame=7, seed=0)
    assert np.array_equal(cells[0][0], clip[7])
    assert np.array_equal(cells[0][2], apply(clip, "sampling", 5)[7])     # frame 0 held
    image = gallery(clip, ["sampling", "freeze"], frame=7, severities=[1, 5])
    for row in cells:
        for cell in row:
            assert _found(image, cell)


def test_gallery_validation(clip):
    with pytest.raises(ValueError, match="frame index in 0..15"):
        gallery(clip, "jpeg", frame=16)
    with pytest.raises(ValueError, match="severities"):
        gallery(clip, "jpeg", severities=[0])
    with pytest.raises(ValueError, match="label"):
        render_grid([], [], [])


def test_demo_gallery(tmp_path):
    path, scores = gallery_demo(tmp_path, seed=0, frames=8)
    assert path == tmp_path / "gallery.png" and cv2.imread(str(path)) is not None
    assert set(scores) == {s.name for s in perturb.REGISTRY.select("video")}
    assert all(sorted(row) == [1, 2, 3, 4, 5] for row in scores.values())
    assert len(summary_lines(scores)) == len(scores) + 1


def test_psnr():
    a = np.zeros((2, 4, 4, 3), np.uint8)
    assert mean_psnr(a, a, cap=PSNR_CAP) == 100.0 and mean_psnr(a, a) == psnr(a, a) == float("inf")
    assert mean_psnr(a, a + 255) == pytest.approx(0.0) == psnr(a, a + 255)
    b = a.copy()
    b[1] += 16                                       # frame 0 equal, frame 1 off by 16 levels
    assert mean_psnr(b, a, cap=PSNR_CAP) == pytest.approx((100.0 + 10 * np.log10(255 ** 2 / 256)) / 2)
    assert psnr(b, a) == pytest.approx(10 * np.log10(255 ** 2 / 128))
