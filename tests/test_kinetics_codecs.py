"""Kinetics-C's codec ops and bitstream faults: contract, severity order, prefix exactness,
reproducibility across processes and heaps, the damaged bytes and datagrams, refusals."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import perturb.video as pv
from perturb import measured
from perturb.registry import REGISTRY
from perturb.video.kernels import bitstream as bs
from perturb.video.io.codec_stream import GREY, annex_b, decode, encode, nal_units, padded_size
from perturb.video.kernels.h26x import (abr_options, abr_target, crf_options, crf_reencode,
                                           source_bitrate, source_stream)
from perturb.video.psnr import mean_psnr
from perturb.video.render import CLIP, PREFIX, renderer_of
from perturb.video.sample import sample_clip

ROOT = Path(__file__).resolve().parents[1]
CODECS = ["h264_crf", "h265_crf", "h264_abr", "h265_abr"]
FAULTS = ["bit_error", "packet_loss"]
NAMES = CODECS + FAULTS
SEEDS = range(8)               # faults: PSNR averaged over these seeds (see the severity test)


def clip64() -> np.ndarray:
    return np.ascontiguousarray(sample_clip(64))


@lru_cache(maxsize=None)
def mean_psnrs(name: str, seed: int) -> tuple[float, ...]:
    clip = clip64()
    return tuple(mean_psnr(pv.apply(clip, name, s, seed=seed), clip) for s in range(1, 6))


# ------------------------------------------------------------------------------- contract
@pytest.mark.parametrize("name", NAMES)
def test_contract_on_the_sample_clip(name: str) -> None:
    clip = np.ascontiguousarray(sample_clip(20)[:, 3:200, 5:150])         # odd sides: 197 x 145
    before = clip.copy()
    out = pv.apply(clip, name, 3, seed=0)
    assert np.array_equal(clip, before)
    assert out.shape == clip.shape and out.dtype == np.uint8 and not np.shares_memory(out, clip)
    assert not np.array_equal(out, clip)
    assert np.array_equal(out, pv.apply(clip, name, 3, seed=0))
    spec = REGISTRY.get(name)
    assert spec.category == "digital" and spec.random == (name in FAULTS) and spec.version == 1
    assert spec.deviation.startswith("Source: ") and "Measured" not in spec.deviation
    assert measured.load()[name].section == "kinetics-codecs"      # its figures: the benchmark's results


@pytest.mark.parametrize("name", CODECS)
def test_codec_psnr_falls_strictly_with_severity(name: str) -> None:
    psnrs = mean_psnrs(name, 0)
    assert all(a > b for a, b in zip(psnrs, psnrs[1:])), psnrs


@pytest.mark.parametrize("name", FAULTS)
def test_fault_psnr_falls_strictly_with_severity_over_seeds(name: str) -> None:
    """A stream broken past its first error decodes to noisy garbage, so one seed's PSNR is not
    a measure of damage (packet_loss is strictly ordered for 10 of 16 seeds); the mean over
    eight seeds is, with margins of a dB and more."""
    psnrs = np.mean([mean_psnrs(name, k) for k in SEEDS], axis=0)
    assert all(a > b + 0.5 for a, b in zip(psnrs, psnrs[1:])), psnrs


def test_fault_severities_damage_nested_units() -> None:
    key = pv.draw("bit_error", 1, 64, seed=5).drawn["key"]
    assert all(pv.draw(n, s, 64, seed=5).drawn["key"] == key for n in FAULTS for s in range(1, 6))
    counts = [bs.damaged_count(90_000, 1 / pv.get("bit_error").params(s)["one_in"], s) for s in range(1, 6)]
    assert counts == [1, 2, 3, 4, 9]
    sets = [set(bs.error_positions(key, 90_000, c)[0].tolist()) for c in counts]
    assert all(a < b for a, b in zip(sets, sets[1:]))
    lost = [set(bs.lost_datagrams(key, 62, c).tolist()) for c in (1, 2, 3, 4, 5)]
    assert all(a < b for a, b in zip(lost, lost[1:]))


# ------------------------------------------------------------------------- reads and subsets
def test_reads_of_each_op() -> None:
    reads = {n: renderer_of(REGISTRY.get(n)).reads for n in NAMES}
    assert reads == {"h264_crf": PREFIX, "h265_crf": PREFIX, "h264_abr": CLIP, "h265_abr": CLIP,
                     "bit_error": CLIP, "packet_loss": CLIP}
    assert pv.draw("h264_abr", 2, 10).source_indices([3]).tolist() == list(range(10))
    assert pv.draw("h265_crf", 2, 10).source_indices([3, 1]).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("codec", ["libx264", "libx265"])
def test_crf_prefix_is_exact(codec: str) -> None:
    """No B-frames, no look-ahead: frames 0..t encoded alone are the whole clip's first t + 1."""
    clip = np.ascontiguousarray(sample_clip(36)[:, ::2, ::2])
    whole = crf_reencode(clip, codec, 37)
    for n in (1, 13, 30):
        assert np.array_equal(crf_reencode(clip[:n], codec, 37), whole[:n])


def test_abr_and_faults_are_not_prefix_exact() -> None:
    """Why they read the whole clip: a prefix gets another target and another B-frame structure."""
    clip = np.ascontiguousarray(sample_clip(36)[:, ::2, ::2])
    for name in ("h264_abr", "bit_error"):
        whole = pv.apply(clip, name, 2, seed=1)
        assert not np.array_equal(pv.apply(clip[:20], name, 2, seed=1), whole[:20]), name


@pytest.mark.parametrize("name", NAMES)
def test_subsets_and_single_frames_render_as_apply(name: str) -> None:
    clip = np.ascontiguousarray(sample_clip(30)[:, 40:112, 30:126])
    full = pv.apply(clip, name, 4, seed=11)
    draw = pv.draw(name, 4, len(clip), seed=11)
    for frames in ([0], [17], [29], [29, 3, 3, 12]):
        assert np.array_equal(draw.render(clip[draw.source_indices(frames)], frames), full[frames])
    torch = pytest.importorskip("torch")
    got = draw.render_clip(torch.from_numpy(clip.copy()), [5, 2])
    assert np.array_equal(got.numpy(), full[[5, 2]])


# ------------------------------------------------------------------------- reproducibility
HASH_SCRIPT = """
import hashlib, numpy as np, perturb.video as pv
from perturb.video.sample import sample_clip
clip = np.ascontiguousarray(sample_clip(24)[:, 30:94, 20:120])
for name in {names!r}:
    print(name, hashlib.sha256(pv.apply(clip, name, 4, seed=7).tobytes()).hexdigest())
"""


def _hashes(env: dict[str, str] | None = None) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", HASH_SCRIPT.format(names=NAMES)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    return dict(line.split() for line in done.stdout.splitlines())


def test_same_seed_same_output_across_processes_and_heaps() -> None:
    """glibc fills fresh allocations with the byte MALLOC_PERTURB_ names: an encoder reading
    uninitialised memory (libx264's mb-tree, x265 at one-CTU sides) gives other bytes."""
    clip = np.ascontiguousarray(sample_clip(24)[:, 30:94, 20:120])
    here = {n: hashlib.sha256(pv.apply(clip, n, 4, seed=7).tobytes()).hexdigest() for n in NAMES}
    assert _hashes({"MALLOC_PERTURB_": "1"}) == here
    assert _hashes({"MALLOC_PERTURB_": "254"}) == here


# --------------------------------------------------------------------------- damaged bytes
def test_error_positions_are_distinct_seeded_and_nested() -> None:
    offsets, values = bs.error_positions(123, 500, 40)
    assert len(set(offsets.tolist())) == 40 and offsets.min() >= 0 and offsets.max() < 500
    assert values.dtype == np.uint8 and values.min() >= 1
    again = bs.error_positions(123, 500, 40)
    assert np.array_equal(offsets, again[0]) and np.array_equal(values, again[1])
    head = bs.error_positions(123, 500, 7)
    assert np.array_equal(head[0], offsets[:7]) and np.array_equal(head[1], values[:7])
    assert not np.array_equal(bs.error_positions(124, 500, 7)[0], head[0])
    assert sorted(bs.error_positions(1, 5, 5)[0].tolist()) == [0, 1, 2, 3, 4]


def test_corrupt_changes_exactly_the_drawn_bytes() -> None:
    units = [bytes(range(10)), bytes(range(100, 105)), bytes(3)]
    offsets, values = np.array([0, 9, 12, 17]), np.array([1, 255, 16, 7], np.uint8)
    out = bs.corrupt(units, offsets, values)
    assert [len(u) for u in out] == [10, 5, 3]
    flat, orig = np.frombuffer(b"".join(out), np.uint8), np.frombuffer(b"".join(units), np.uint8)
    assert np.flatnonzero(flat != orig).tolist() == [0, 9, 12, 17]
    assert (flat ^ orig)[[0, 9, 12, 17]].tolist() == [1, 255, 16, 7]


def test_bit_errors_damage_round_size_over_n_bytes_of_the_stream() -> None:
    stream = source_stream(clip64(), out_of_band=True)
    damaged = bs.bit_errors(stream, 9, one_in=10_000, at_least=5)
    a, b = np.frombuffer(b"".join(stream.units), np.uint8), np.frombuffer(b"".join(damaged.units), np.uint8)
    assert len(a) == len(b) == stream.size and damaged.extradata == stream.extradata
    assert int(np.count_nonzero(a != b)) == round(stream.size / 10_000)
    assert int(np.count_nonzero(a != np.frombuffer(b"".join(bs.bit_errors(stream, 9, 10**9, 3).units), np.uint8))) == 3


def test_receive_keeps_the_bytes_of_arrived_datagrams() -> None:
    units = [b"a" * 5, b"b" * 7, b"c" * 2]                # 14 bytes: datagrams of 4 -> 0..3
    out = bs.receive(units, 4, np.array([1, 3]))           # lose bytes 4..7 and 12..13
    assert out == [b"aaaa", b"bbbb", None]
    stream = source_stream(clip64(), out_of_band=True)
    got = bs.packet_loss_stream(stream, 3, loss=0.06, datagram=1472, at_least=5)
    n = -(-stream.size // 1472)
    assert stream.size - got.size == pytest.approx(round(0.06 * n) * 1472, abs=1472)


# ---------------------------------------------------------------------- streams and decoding
def test_parameter_sets_travel_out_of_band() -> None:
    stream = source_stream(clip64()[:8], out_of_band=True)
    assert [n[0] & 0x1F for n in nal_units(stream.extradata)] == [7, 8]
    assert all(n[0] & 0x1F not in (7, 8) for u in stream.units for n in nal_units(u))
    inband = source_stream(clip64()[:8])
    assert [n[0] & 0x1F for n in nal_units(inband.units[0])][:2] == [7, 8]
    assert np.array_equal(decode(stream), decode(inband))
    assert nal_units(annex_b(nal_units(inband.units[0]))) == nal_units(inband.units[0])


def test_missing_frames_hold_the_last_one_and_grey_before_any() -> None:
    clip = np.ascontiguousarray(sample_clip(6)[:, ::4, ::4])
    stream = encode(clip, "libx264", crf_options("libx264", 30))
    full = decode(stream)
    assert stream.pts == tuple(range(6))                  # no B-frames: decode order
    no_last = decode(stream.with_units([*stream.units[:5], None]))
    assert np.array_equal(no_last[:5], full[:5]) and np.array_equal(no_last[5], full[4])
    nothing = decode(stream.with_units([None] * 6))
    assert nothing.shape == clip.shape and np.all(nothing == GREY)
    assert np.array_equal(decode(stream, np.array([2, 5])), full[[2, 5]])


def test_padding_to_what_each_encoder_takes() -> None:
    assert padded_size("libx264", 1, 7) == (2, 8)
    assert padded_size("libx265", 1, 7) == (72, 72)
    assert padded_size("libx265", 100, 225) == (104, 232)
    clip = np.random.default_rng(0).integers(0, 256, (3, 5, 9, 3), dtype=np.uint8)
    assert crf_reencode(clip, "libx265", 27).shape == clip.shape


def test_abr_target_and_the_bitrate_reached() -> None:
    clip = clip64()
    rate = source_bitrate(clip)
    assert 150_000 < rate < 600_000
    assert abr_target(clip, 4) == int(rate / 4)
    for divisor in (2, 4):
        target = abr_target(clip, divisor)
        got = encode(clip, "libx264", abr_options("libx264", target), bit_rate=target).bitrate()
        assert got == pytest.approx(target, rel=0.1)
    tiny = np.zeros((1, 2, 2, 3), np.uint8)
    assert abr_target(tiny, 10**6) == 1000


# ----------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("call, match", [
    (lambda: crf_options("libx264", 52), "crf to be an int in 0..51"),
    (lambda: crf_options("libx264", 23.0), "crf to be an int"),
    (lambda: abr_target(np.zeros((1, 2, 2, 3), np.uint8), 0), "divisor to be a finite number > 0"),
    (lambda: abr_target(np.zeros((1, 2, 2, 3), np.uint8), float("nan")), "divisor"),
    (lambda: encode(np.zeros((1, 2, 2, 3), np.uint8), "libvpx-vp9", {}), "expected codec among"),
    (lambda: bs.bit_errors(source_stream(np.zeros((1, 4, 4, 3), np.uint8)), 1, 0.5, 1), "one_in"),
    (lambda: bs.packet_loss_stream(source_stream(np.zeros((1, 4, 4, 3), np.uint8)), 1, 1.5, 1472, 1), "loss"),
    (lambda: bs.packet_loss_stream(source_stream(np.zeros((1, 4, 4, 3), np.uint8)), 1, 0.1, 0, 1), "datagram"),
    (lambda: bs.error_positions(1, 10, 11), r"count to be an int in \[0, 10\]"),
])
def test_bad_parameters_are_refused(call, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("name", NAMES)
def test_bad_clips_and_severities_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="3 RGB channels"):
        pv.apply(np.zeros((2, 8, 8, 4), np.uint8), name, 3)
    with pytest.raises(ValueError, match="1..5"):
        pv.apply(np.zeros((2, 8, 8, 3), np.uint8), name, 6)


def test_names_and_aliases() -> None:
    assert [pv.get(a).name for a in ("H.265 CRF", "hevc_abr", "Bit Error", "packet loss", "H.264 ABR")] == \
        ["h265_crf", "h265_abr", "bit_error", "packet_loss", "h264_abr"]
    assert {"bit_error", "h265_crf", "h265_abr", "packet_loss"} <= set(REGISTRY.suite("kinetics-c").members)


def test_gallery_has_a_row_per_op() -> None:
    from perturb.rng import derive_seed
    from perturb.video.gallery import gallery, gallery_cells

    clip = np.ascontiguousarray(sample_clip(8)[:, ::4, ::4])
    rows = gallery_cells(clip, NAMES, [1, 5], frame=3, seed=2)
    assert len(rows) == len(NAMES) and all(len(r) == 3 for r in rows)
    for name, row in zip(NAMES, rows):
        assert np.array_equal(row[0], clip[3])
        assert np.array_equal(row[2], pv.apply(clip, name, 5, seed=derive_seed(2, name))[3])
    assert gallery(clip, "h265_crf,packet_loss", severities=[1, 5]).ndim == 3
