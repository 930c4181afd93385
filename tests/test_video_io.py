"""Video I/O: round trips, read options, streaming, bad files; the bundled sample clip."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import av
import numpy as np
import pytest

from perturb.errors import VideoReadError
from perturb.video import io as vio
from perturb.video.psnr import mean_psnr
from perturb.video.sample import SAMPLE_PATH, sample_clip, sample_fps

ROOT = Path(__file__).resolve().parents[1]


def ramp(frames: int = 20, h: int = 24, w: int = 32) -> np.ndarray:
    """A clip whose frame t is flat at 10·t: the source index is readable from any frame."""
    return np.repeat((np.arange(frames, dtype=np.uint8) * 10)[:, None, None, None], h * w * 3,
                     axis=1).reshape(frames, h, w, 3)


def noisy(frames: int = 12, h: int = 21, w: int = 33) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (frames, h, w, 3), dtype=np.uint8)


def index_of(clip: np.ndarray) -> list[int]:
    return (np.rint(clip.reshape(len(clip), -1).mean(axis=1) / 10)).astype(int).tolist()


@pytest.mark.parametrize("suffix, codec, options", [
    (".mkv", "ffv1", {}),
    (".avi", "ffv1", {}),
    (".mp4", "libx264rgb", {"qp": 0}),
])
def test_lossless_round_trip_is_exact(tmp_path: Path, suffix: str, codec: str, options: dict) -> None:
    clip = noisy()
    path = tmp_path / f"clip{suffix}"
    vio.write(path, clip, 25, codec, **options)
    back, fps = vio.read(path)
    assert fps == 25 and np.array_equal(back, clip)


@pytest.mark.parametrize("codec", ["libx264", "mpeg4", "mjpeg"])
def test_lossy_codecs_keep_odd_sizes_and_frame_count(tmp_path: Path, codec: str) -> None:
    clip = ramp(h=23, w=31)
    path = tmp_path / "clip.mkv"
    vio.write(path, clip, 12, codec)
    back, fps = vio.read(path)
    assert back.shape == clip.shape and fps == 12
    assert index_of(back) == list(range(len(clip)))


def test_probe(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    vio.write(path, ramp(frames=30), 15, "libx264", crf=20)
    info = vio.probe(path)
    assert (info.width, info.height, info.fps, info.frames, info.codec) == (32, 24, 15.0, 30, "h264")
    assert info.duration == pytest.approx(2.0, abs=0.07)


def test_read_options(tmp_path: Path) -> None:
    path = tmp_path / "ramp.mkv"
    vio.write(path, ramp(frames=20), 10)
    double, fps = vio.read(path, fps=20)
    assert fps == 20 and index_of(double) == [i // 2 for i in range(40)]
    third, _ = vio.read(path, fps=10 / 3)
    assert index_of(third) == [0, 3, 6, 9, 12, 15, 18]
    window, _ = vio.read(path, start=0.5, end=1.2)
    assert index_of(window) == [5, 6, 7, 8, 9, 10, 11]
    assert index_of(vio.read(path, start=0.45, fps=5, max_frames=3)[0]) == [4, 6, 8]
    assert vio.read(path, size=12)[0].shape == (20, 12, 16, 3)
    assert vio.read(path, size=(10, 30), max_frames=4)[0].shape == (4, 30, 10, 3)


def test_start_seeks_into_a_keyframe_coded_stream(tmp_path: Path) -> None:
    clip = ramp(frames=25)
    path = tmp_path / "gop.mp4"
    vio.write(path, clip, 10, "libx264rgb", qp=0, g=6)          # keyframes every 6 frames
    assert index_of(vio.read(path, start=1.35, end=2.0)[0]) == [14, 15, 16, 17, 18, 19]
    assert index_of(vio.read(path, start=1.35, fps=4)[0]) == [13, 16, 18, 21, 23]


def test_iter_frames_streams_frames_and_chunks(tmp_path: Path) -> None:
    path = tmp_path / "ramp.mkv"
    clip = ramp(frames=20)
    vio.write(path, clip, 10)
    frames = list(vio.iter_frames(path))
    assert len(frames) == 20 and frames[0].shape == (24, 32, 3)
    chunks = list(vio.iter_frames(path, chunk=8))
    assert [len(c) for c in chunks] == [8, 8, 4]
    assert np.array_equal(np.concatenate(chunks), clip)


def test_video_writer_streams_batches(tmp_path: Path) -> None:
    clip = noisy(frames=10)
    path = tmp_path / "streamed.mkv"
    with vio.VideoWriter(path, 25, "ffv1") as writer:
        writer.write(clip[:3])
        writer.write(clip[3])
        writer.write(clip[4:])
        with pytest.raises(ValueError, match="expects frames of"):
            writer.write(clip[:, :10])
    assert writer.frames_written == 10
    assert np.array_equal(vio.read(path)[0], clip)


def test_in_memory_bytes_round_trip() -> None:
    import io

    clip = noisy()
    data = vio.to_bytes(clip, 25)
    assert np.array_equal(vio.read(io.BytesIO(data))[0], clip)


def _audio_only(path: Path) -> None:
    container = av.open(str(path), "w")
    stream = container.add_stream("pcm_s16le", rate=8000)
    frame = av.AudioFrame.from_ndarray(np.zeros((1, 800), np.int16), format="s16", layout="mono")
    frame.sample_rate = 8000
    for packet in stream.encode(frame):
        container.mux(packet)
    container.mux(stream.encode(None))
    container.close()


def _truncated(tmp_path: Path, suffix: str, codec: str, keep: float) -> Path:
    full = tmp_path / f"full{suffix}"
    vio.write(full, noisy(frames=40, h=32, w=32), 25, codec)
    cut = tmp_path / f"cut{suffix}"
    data = full.read_bytes()
    cut.write_bytes(data[: int(len(data) * keep)])
    return cut


BAD_FILES = {
    "missing": lambda p: p / "nope.mp4",
    "directory": lambda p: p,
    "zero bytes": lambda p: (p / "empty.mp4").write_bytes(b"") or p / "empty.mp4",
    "text named .mp4": lambda p: (p / "text.mp4").write_text("not a video\n" * 20) or p / "text.mp4",
    "no video stream": lambda p: _audio_only(p / "audio.mka") or p / "audio.mka",
    "truncated mkv": lambda p: _truncated(p, ".mkv", "ffv1", 0.6),
    "truncated mp4": lambda p: _truncated(p, ".mp4", "libx264", 0.9),
    "truncated avi": lambda p: _truncated(p, ".avi", "mpeg4", 0.6),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_files_raise_video_read_error(tmp_path: Path, case: str) -> None:
    path = BAD_FILES[case](tmp_path)
    with pytest.raises(VideoReadError, match="cannot read video"):
        vio.read(path)
    with pytest.raises(ValueError):            # VideoReadError is a ValueError
        list(vio.iter_frames(path))


def test_bad_arguments_name_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "ok.mkv"
    vio.write(path, noisy(frames=3), 25)
    for kwargs, message in [({"fps": 0}, "fps must be"), ({"size": -2}, "size must be"),
                            ({"size": (3,)}, "size must be"), ({"start": 1.0, "end": 0.5}, "end must be"),
                            ({"max_frames": 0}, "max_frames must be")]:
        with pytest.raises(ValueError, match=message):
            vio.read(path, **kwargs)
    with pytest.raises(ValueError, match="uint8"):
        vio.write(tmp_path / "x.mkv", noisy().astype(np.float32), 25)
    with pytest.raises(ValueError, match="unknown video encoder"):
        vio.write(tmp_path / "x.mkv", noisy(), 25, "no-such-codec")



# Outputs the writer cannot make: (file name under tmp_path, codec, what the message must say).
UNWRITABLE = {
    "ffv1 in webm": ("o.webm", "ffv1", r"'webm' container cannot hold codec 'ffv1'"),
    "unknown extension": ("o.xyz", "ffv1", r"no container format for the extension '\.xyz'"),
    "missing folder": ("no/such/o.mkv", "ffv1", r"folder '.*no/such' does not exist"),
    "unknown codec": ("o.mkv", "nosuch", r"unknown video encoder 'nosuch'"),
}


@pytest.mark.parametrize("case", sorted(UNWRITABLE))
def test_unwritable_output_names_container_or_codec(tmp_path: Path, case: str) -> None:
    name, codec, message = UNWRITABLE[case]
    with pytest.raises(ValueError, match=message):
        vio.write(tmp_path / name, noisy(frames=2), 25, codec)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]      # no half-written file left


def test_writer_left_by_an_exception_drops_the_file(tmp_path: Path) -> None:
    path = tmp_path / "o.mkv"
    with pytest.raises(RuntimeError, match="stop"):
        with vio.VideoWriter(path, 25) as w:
            w.write(noisy(frames=2))
            raise RuntimeError("stop")
    assert not path.exists()


def test_bitexact_writer_gives_identical_bytes(tmp_path: Path) -> None:
    clip = noisy(frames=4)
    digests = set()
    for i in range(2):
        with vio.VideoWriter(tmp_path / f"{i}.mkv", 25, "ffv1", bitexact=True) as w:
            w.write(clip[:2])
            w.write(clip[2:])
        assert w.frames_written == 4
        digests.add((tmp_path / f"{i}.mkv").read_bytes())
    assert len(digests) == 1
    np.testing.assert_array_equal(vio.read(tmp_path / "0.mkv")[0], clip)


# --------------------------------------------------------------------------------- sample clip
def test_sample_clip_is_small_real_video() -> None:
    assert SAMPLE_PATH.is_file() and SAMPLE_PATH.stat().st_size < 2_000_000
    clip = sample_clip()
    assert clip.shape == (64, 224, 224, 3) and clip.dtype == np.uint8
    assert 16 <= sample_fps() <= 25
    assert clip.std() > 40                                          # photographic, not flat
    motion = np.abs(np.diff(clip.astype(np.int16), axis=0)).mean(axis=(1, 2, 3))
    assert motion.min() > 1                                         # every frame moves


def test_sample_clip_cache_cannot_be_corrupted() -> None:
    clip = sample_clip(16)
    assert clip.shape[0] == 16
    before = int(clip[0, 0, 0, 0])
    clip[0, 0, 0, 0] = before ^ 0xFF                                # each call's copy is the caller's
    assert int(sample_clip(16)[0, 0, 0, 0]) == before
    assert sample_clip() is not sample_clip() and np.array_equal(sample_clip(), sample_clip())
    with pytest.raises(ValueError, match="frames must be"):
        sample_clip(0)


def test_sample_clip_is_what_the_script_builds() -> None:
    spec = importlib.util.spec_from_file_location("make_sample_clip", ROOT / "scripts" / "make_sample_clip.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = module.make_clip()
    assert np.array_equal(built, module.make_clip())                # deterministic
    assert mean_psnr(sample_clip(), built) > 35                     # only the encoding's loss
