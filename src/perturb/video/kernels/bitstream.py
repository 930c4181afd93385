"""Kinetics-C's bitstream faults: bit errors and packet loss in an H.264 stream, in memory, seeded.

Both ops encode the clip as its source stream (:func:`.h26x.source_stream`: ffmpeg's
default libx264 encode, parameter sets out of band), damage the stream, and decode what is left
with FFmpeg's default error concealment (:func:`..io.codec_stream.decode`: a frame that does not
come out repeats the last one that did). Which bytes or datagrams are damaged is the only
random choice: one key per clip is drawn from the clip's Generator, and the damaged units are
the first ones of a sequence drawn from that key, so a higher severity damages the same units
and more, and the same seed damages the same bytes on every machine.

- ``bit_error``: ``round(size / one_in)`` bytes of the access units (at least ``at_least``)
  are XORed with a random non-zero value, as ``ffmpeg -bsf noise=one_in`` damages about one
  byte in ``one_in``.
- ``packet_loss``: the stream is cut into ``datagram``-byte UDP datagrams, as ffmpeg streams raw
  H.264 over UDP, and ``round(loss × datagrams)`` of them (at least ``at_least``) are lost;
  each access unit is decoded from the bytes of its datagrams that arrived.

Both read the whole clip: the source stream has B-frames, so a frame's pixels depend on later
ones (``reads="clip"``).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..io.codec_stream import Stream, decode
from .keyed_words import draw_key
from .h26x import source_stream
from .twins import register_kernel

CHUNK = 256                     # byte offsets drawn from the key's Generator at a time


def _number(name: str, value: Any, low: float, integer: bool = False, high: float | None = None) -> Any:
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    ok = isinstance(value, kinds) and not isinstance(value, bool) and np.isfinite(value)
    if not ok or value < low or (high is not None and value > high):
        kind = "an int" if integer else "a number"
        bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"expected {name} to be {kind} {bounds}; got {value!r}")
    return value


def damaged_count(total: int, rate: float, at_least: int) -> int:
    """How many of ``total`` units a fault damages: round(rate × total), at least ``at_least``."""
    return min(int(total), max(int(at_least), int(round(rate * total))))


def draw_fault_key(rng: np.random.Generator, n_frames: int, params: Mapping[str, Any]) -> dict[str, Any]:
    """The clip's fault key: one 64-bit draw from its Generator."""
    return {"key": draw_key(rng)}


# ------------------------------------------------------------------------------- bit errors
def error_positions(key: int, total: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` distinct byte offsets in 0..total-1 and a non-zero XOR value for each.

    Offsets and values are read in order from one Generator seeded with ``key`` (repeats
    skipped), so the first ``count`` are the same whatever ``count`` is: a larger count
    damages the same bytes, and more.
    """
    _number("count", count, 0, integer=True, high=total)
    gen = np.random.default_rng(int(key))
    offsets: dict[int, int] = {}
    while len(offsets) < count:
        where = gen.integers(0, total, CHUNK)
        values = gen.integers(1, 256, CHUNK)
        for p, v in zip(where.tolist(), values.tolist()):
            if len(offsets) == count:
                break
            offsets.setdefault(p, v)
    return np.fromiter(offsets, np.int64, len(offsets)), np.fromiter(offsets.values(), np.uint8, len(offsets))


def corrupt(units: Sequence[bytes], offsets: np.ndarray, values: np.ndarray) -> list[bytes]:
    """The units with the bytes at ``offsets`` (into their concatenation) XORed with ``values``."""
    data = np.frombuffer(b"".join(units), np.uint8).copy()
    data[offsets] ^= values                     # offsets are distinct
    ends = np.cumsum([len(u) for u in units])
    return [data[a:b].tobytes() for a, b in zip([0, *ends[:-1]], ends)]


def bit_errors(stream: Stream, key: int, one_in: float, at_least: int) -> Stream:
    """The stream with round(size / one_in) bytes of its access units damaged (at least ``at_least``)."""
    _number("one_in", one_in, 1)
    _number("at_least", at_least, 0, integer=True)
    offsets, values = error_positions(key, stream.size, damaged_count(stream.size, 1 / one_in, at_least))
    return stream.with_units(corrupt(stream.units, offsets, values))


# ------------------------------------------------------------------------------ packet loss
def lost_datagrams(key: int, n_datagrams: int, count: int) -> np.ndarray:
    """``count`` of ``n_datagrams`` datagram indices: the first ones of a permutation from ``key``."""
    _number("count", count, 0, integer=True, high=n_datagrams)
    return np.sort(np.random.default_rng(int(key)).permutation(n_datagrams)[:count])


def receive(units: Sequence[bytes], datagram: int, lost: np.ndarray) -> list[bytes | None]:
    """Each unit's bytes that arrive when the concatenated units travel in ``datagram``-byte
    datagrams and the datagrams ``lost`` do not (None: nothing of the unit arrived)."""
    stream = b"".join(units)
    arrived = np.ones(-(-len(stream) // datagram), bool)
    arrived[lost] = False
    mask = np.repeat(arrived, datagram)[:len(stream)]
    data = np.frombuffer(stream, np.uint8)
    out: list[bytes | None] = []
    start = 0
    for unit in units:
        end = start + len(unit)
        kept = data[start:end][mask[start:end]]
        out.append(kept.tobytes() if kept.size else None)
        start = end
    return out


def packet_loss_stream(stream: Stream, key: int, loss: float, datagram: int, at_least: int) -> Stream:
    """The stream as received when round(loss × datagrams) of its datagrams are lost (at least ``at_least``)."""
    _number("loss", loss, 0, high=1)
    _number("datagram", datagram, 1, integer=True)
    _number("at_least", at_least, 0, integer=True)
    n = -(-stream.size // int(datagram))
    lost = lost_datagrams(key, n, damaged_count(n, loss, at_least))
    return stream.with_units(receive(stream.units, int(datagram), lost))


# ------------------------------------------------------------------------------------ ops
FAULTS = {"bit_error": bit_errors, "packet_loss": packet_loss_stream}


def damaged(name: str, clip: np.ndarray, key: int, params: Mapping[str, Any],
            keep: np.ndarray | None = None) -> np.ndarray:
    """The clip's source stream damaged by fault ``name`` under ``key``, decoded (frames ``keep``)."""
    return decode(FAULTS[name](source_stream(clip, out_of_band=True), key, **params), keep)


def fault_frames(name: str):
    """The numpy kernel of fault ``name``: the whole clip's stream damaged and decoded."""
    def kernel(frames: np.ndarray, ids: np.ndarray, drawn: Mapping[str, Any],
               params: Mapping[str, Any]) -> np.ndarray:
        return damaged(name, frames, drawn["key"], params, keep=ids)
    kernel.__name__ = f"{name}_frames"
    return kernel


for _name in FAULTS:
    register_kernel(_name, "numpy", fault_frames(_name))
