"""The parameter table of the visual perturbations: one row per perturbation, one column per severity.

``SEVERITY_PARAMS[name][param]`` is a 5-tuple (severities 1..5). ``PAPER_PARAMS`` holds the reference code's
values where ours differ; the reason is in each perturbation's ``deviation`` text.
"""
from __future__ import annotations

from typing import Any

from ..selection import SEVERITY_LEVELS


def on_scale(levels: tuple[float, ...], maxval: float) -> tuple[float, ...]:
    """ImageNet-C-bar's parameters from its levels: ``level * maxval / 10`` (the reference's
    float_parameter), rounded to 10 decimals so the table reads as the source's numbers."""
    return tuple(round(float(level) * maxval / 10., 10) for level in levels)

SEVERITY_PARAMS: dict[str, dict[str, tuple[Any, ...]]] = {
    # noise
    "gaussian_noise":   {"sigma": (0.08, 0.12, 0.18, 0.26, 0.38)},
    "shot_noise":       {"photons": (250, 100, 50, 30, 15)},
    "impulse_noise":    {"amount": (0.03, 0.06, 0.09, 0.17, 0.27)},
    "speckle_noise":    {"sigma": (0.15, 0.20, 0.25, 0.30, 0.35)},
    # blur
    "defocus_blur":     {"radius": (3, 4, 6, 8, 10), "alias_blur": (0.1, 0.5, 0.5, 0.5, 0.5)},
    "motion_blur":      {"radius": (10, 15, 15, 15, 20), "sigma": (3, 5, 8, 12, 15)},
    # Yi et al. 2021, create_mini_ssv2_c.py's motion_blur: the mean of the 2c frames t-c .. t+c-1
    # (create_mini_kinetics_c.py: c = 3 5 7 9 11, the kinetics-c table below)
    "temporal_blur":    {"c": (1, 2, 3, 4, 6)},
    "zoom_blur":        {"zooms": ((1.0, 1.11, 0.01), (1.0, 1.16, 0.01), (1.0, 1.21, 0.02),
                                   (1.0, 1.26, 0.02), (1.0, 1.31, 0.03))},   # arange(start, stop, step)
    # digital
    "jpeg":             {"quality": (25, 18, 15, 10, 7)},
    # fixed quantiser (qmin = qmax); mean PSNR on the 64-frame sample clip, severities 1..5:
    "mpeg1":            {"q": (8, 12, 17, 23, 31)},   # mpeg2video: 30.8 29.2 27.9 26.8 25.7 dB
    "mpeg2":            {"q": (8, 12, 17, 23, 31)},   # mpeg4:      30.2 28.6 27.2 26.1 25.1 dB
    # Kinetics-C codecs and bitstream faults: Yi et al. 2021, create_mini_ssv2_c.py (functions the
    # Kinetics script imports) and packet-loss-simulation's packet_loss.sh. Mean PSNR on the
    # 64-frame sample clip, severities 1..5 (tests/test_kinetics_codecs.py holds the order):
    "h264_crf":         {"crf": (23, 30, 37, 44, 51)},
    "h265_crf":         {"crf": (27, 33, 39, 45, 51)},
    "h264_abr":         {"divisor": (2, 4, 8, 16, 32)},   # target = source bitrate / divisor
    "h265_abr":         {"divisor": (2, 4, 8, 16, 32)},
    # bytes per damaged byte; datagrams lost (fraction, bytes each); at_least: damaged units at
    # the least, so short clips keep five strictly ordered levels (ours)
    "bit_error":        {"one_in": (100000, 50000, 30000, 20000, 10000), "at_least": (1, 2, 3, 4, 5)},
    "packet_loss":      {"loss": (0.01, 0.02, 0.03, 0.04, 0.06), "datagram": (1472,) * 5,
                         "at_least": (1, 2, 3, 4, 5)},
    # temporal
    "jumble":           {"segment": (4, 8, 16, 32, 64)},
    "box_jumble":       {"segment": (4, 9, 16, 25, 36)},
    "sampling":         {"rate": (2, 4, 8, 16, 32)},
    "reverse_sampling": {"rate": (2, 4, 8, 16, 32)},
    "freeze":           {"keep": (0.40, 0.20, 0.10, 0.05, 0.025)},
    # Yi et al. 2021: target frame rates of create_mini_kinetics_c.py (the SSv2 script: 10 8 6 4 2);
    # clip_fps is the rate the clip is taken to run at (the paper's 30 fps input)
    "frame_rate":       {"fps": (20, 16, 12, 9, 6), "clip_fps": (30.0,) * 5},
    # camera
    "static_rotate":    {"degrees": (7.5, 15, 30, 45, 90)},
    "rotate":           {"max_degrees": (6, 12, 18, 24, 30)},
    "translate":        {"max_shift": (8, 16, 24, 32, 40)},
    # ImageNet-C: imagecorruptions 1.1.2, corruptions.py (blur, digital)
    "gaussian_blur":    {"sigma": (1, 2, 3, 4, 6)},
    # glass_blur and saturate: the source's five levels reordered by damage (PAPER_PARAMS has its
    # order). Mean PSNR on the 64-frame sample clip, severities 1..5:
    # glass_blur 24.1 23.9 20.7 20.1 19.9 dB; saturate 18.24 16.76 14.60 14.58 12.88 dB
    "glass_blur":       {"sigma": (0.9, 0.7, 1.1, 1, 1.5), "max_delta": (2, 1, 3, 2, 4),
                         "iterations": (1, 2, 2, 3, 2)},
    "pixelate":         {"scale": (0.6, 0.5, 0.4, 0.3, 0.25)},
    "elastic_transform": {"alpha": (12.5, 16.25, 21.25, 25.0, 30.0)},   # 250 x (0.05 .. 0.12)
    "brightness":       {"shift": (0.1, 0.2, 0.3, 0.4, 0.5)},
    "contrast":         {"factor": (0.4, 0.3, 0.2, 0.1, 0.05)},
    "saturate":         {"factor": (2, 0.3, 5, 0.1, 20), "offset": (0, 0, 0.1, 0, 0.2)},
    # weather: imagecorruptions 1.1.2 (corruptions.py), its c[i] under names; the video-only
    # columns (drift, fall: px/frame of the clip's layer) are ours
    "fog":     {"strength": (1.5, 2.0, 2.5, 2.75, 3.0), "decay": (2.0, 2.0, 1.7, 1.5, 1.4),
                "wibble": (100,) * 5, "drift": (0.5,) * 5},
    "frost":   {"scale": (1.0, 0.8, 0.7, 0.65, 0.6), "frost": (0.4, 0.6, 0.7, 0.73, 0.78)},
    "snow":    {"mean": (0.1, 0.2, 0.55, 0.55, 0.55), "std": (0.3,) * 5,
                "zoom": (3.0, 2.0, 4.0, 4.5, 2.5), "threshold": (0.5, 0.5, 0.88, 0.85, 0.85),
                "radius": (10, 12, 12, 12, 12), "sigma": (4, 4, 8, 8, 12),
                "blend": (0.8, 0.7, 0.7, 0.65, 0.55), "fall": (4.0,) * 5},
    "spatter": {"mean": (0.65, 0.65, 0.65, 0.65, 0.67), "std": (0.3, 0.3, 0.3, 0.3, 0.4),
                "sigma": (4, 3, 2, 1, 1), "threshold": (0.69, 0.68, 0.68, 0.65, 0.65),
                "smear": (0.6, 0.6, 0.5, 1.5, 1.5), "mud": (0, 0, 0, 1, 1), "drift": (0.5,) * 5},
    # Yi et al. 2021, create_mini_ssv2_c.py's rain (Kinetics-C imports it): one drop per `area`
    # pixels, streaks `length` px long, contrast about the channel means scaled by `darken`;
    # `fall` (px/frame the drops fall in video, half a streak: a 180-degree shutter) is ours
    "rain":    {"area": (770, 770, 770, 500, 400), "length": (10, 30, 60, 60, 80),
                "darken": (0.8, 0.8, 0.7, 0.6, 0.5), "fall": (5.0, 15.0, 30.0, 30.0, 40.0)},
    # ImageNet-C-bar: Mintun, Kirillov & Xie 2021, facebookresearch/augmentation-corruption
    # (commit ba4d5a5), imagenet_c_bar/imagenet_c_bar.csv gives each op's five severities as
    # `level`s on its own 1-10 scale; corrupt.py turns a level into its parameters as
    # level * maxval / 10 (float_parameter). The derived columns are those values; `side` is the
    # reference's im_size: lengths given as a fraction of it scale with the frame's shorter side.
    "single_frequency_greyscale": {"level": (1.0, 1.5, 2.0, 4.5, 5.0), "intensity": on_scale((1.0, 1.5, 2.0, 4.5, 5.0), 196)},
    "cocentric_sine_waves": {"level": (3.0, 5.0, 8.0, 9.0, 10.0), "intensity": on_scale((3.0, 5.0, 8.0, 9.0, 10.0), 128)},
    "plasma_noise":  {"level": (4.75, 7.0, 8.5, 9.25, 10.0), "intensity": on_scale((4.75, 7.0, 8.5, 9.25, 10.0), 64)},
    "perlin_noise":  {"level": (4.6, 5.2, 5.8, 7.6, 8.8), "alpha": on_scale((4.6, 5.2, 5.8, 7.6, 8.8), 0.5)},
    "brownish_noise": {"level": (1.0, 2.0, 3.0, 4.0, 5.0), "intensity": on_scale((1.0, 2.0, 3.0, 4.0, 5.0), 64)},
    # pixels whose blue-noise value (unit variance) is at or below the threshold turn black
    "blue_noise_sample": {"level": (0.8, 1.6, 2.4, 4.0, 5.6),
                          "threshold": tuple(round(t - 2.5, 10) for t in on_scale((0.8, 1.6, 2.4, 4.0, 5.6), 3.0))},
    "checkerboard_cutout": {"level": (2.0, 3.0, 4.0, 5.0, 6.0), "fraction": on_scale((2.0, 3.0, 4.0, 5.0, 6.0), 1.0)},
    # five starbursts of radius `radius` x side
    "sparkles":      {"level": (1.0, 2.0, 3.0, 5.0, 6.0), "radius": on_scale((1.0, 2.0, 3.0, 5.0, 6.0), 0.1)},
    # one starburst of radius side / 4 inside a white field; amount = 100 - level * 65 / 10
    "inverse_sparkles": {"level": (1.0, 2.0, 4.0, 9.0, 10.0),
                         "amount": tuple(100 - a for a in on_scale((1.0, 2.0, 4.0, 9.0, 10.0), 65))},
    # lens_scale: the refraction's reach as a fraction of side (the reference: level * 0.5 * im_size / 10)
    "caustic_refraction": {"level": (2.35, 3.2, 4.9, 6.6, 9.15),
                           "lens_scale": on_scale((2.35, 3.2, 4.9, 6.6, 9.15), 0.5),
                           "lighting_amount": on_scale((2.35, 3.2, 4.9, 6.6, 9.15), 2.0)},
}

PAPER_PARAMS: dict[str, dict[str, tuple[Any, ...]]] = {
    "mpeg1": {"q:v": (20, 40, 60, 80, 100)},
    "mpeg2": {"q:v": (15, 30, 45, 60, 75)},
    "jumble": {"segment": (32, 16, 8, 4, 2)},    # paper text and reference code
    # imagecorruptions 1.1.2's order
    "glass_blur": {"sigma": (0.7, 0.9, 1, 1.1, 1.5), "max_delta": (1, 2, 2, 3, 4), "iterations": (2, 1, 3, 2, 2)},
    "saturate": {"factor": (0.3, 0.1, 2, 5, 20), "offset": (0, 0, 0, 0.1, 0.2)},
    # imagecorruptions 1.1.2 where ours differ: values moved so damage grows strictly on the sample clip
    "fog": {"strength": (1.5, 2.0, 2.5, 2.5, 3.0), "decay": (2.0, 2.0, 1.7, 1.5, 1.4)},
    "frost": {"scale": (1.0, 0.8, 0.7, 0.65, 0.6), "frost": (0.4, 0.6, 0.7, 0.7, 0.75)},
    "snow": {"threshold": (0.5, 0.5, 0.9, 0.85, 0.85)},
}


def table(name: str) -> dict[int, dict[str, Any]]:
    """Per-severity parameter dicts {1: {...}, ..., 5: {...}} for a perturbation."""
    row = SEVERITY_PARAMS[name]
    return {s: {k: v[s - 1] for k, v in row.items()} for s in SEVERITY_LEVELS}


def paper_table(name: str) -> dict[int, dict[str, Any]] | None:
    row = PAPER_PARAMS.get(name)
    return None if row is None else {s: {k: v[s - 1] for k, v in row.items()} for s in SEVERITY_LEVELS}


# ------------------------------------------------------------------------- per-suite tables
# SUITE_PARAMS[suite][name][param] is a 5-tuple that replaces the op's own row for that param
# when ``name`` runs as a member of ``suite`` (params not named keep the op's own values).
# Only constants that differ from the op's own row are listed; each was checked against the
# source named in the comment.
# The ops whose own rows reorder or move the source's levels (the source's are in PAPER_PARAMS),
# per suite whose source uses them: under the suite, severity k is the source's severity k.
SOURCE_ORDER: dict[str, tuple[str, ...]] = {
    "imagenet-c": ("glass_blur", "saturate", "fog", "frost", "snow"),
    "kinetics-c": ("saturate", "fog"),           # Kinetics-C's saturate and fog are ImageNet-C's
}

SUITE_PARAMS: dict[str, dict[str, dict[str, tuple[Any, ...]]]] = {
    # imagecorruptions 1.1.2, imagecorruptions/corruptions.py. Its gaussian_noise, impulse_noise,
    # defocus_blur, motion_blur, zoom_blur and jpeg_compression constants equal our rows. Where
    # our own rows reorder or move its levels (glass_blur, saturate, fog, frost, snow), the suite
    # takes the source's levels in the source's order (PAPER_PARAMS), so severity k is its k.
    "imagenet-c": {
        "shot_noise":    {"photons": (60, 25, 12, 5, 3)},
        "speckle_noise": {"sigma": (0.15, 0.20, 0.35, 0.45, 0.60)},
        **{op: PAPER_PARAMS[op] for op in SOURCE_ORDER["imagenet-c"]},
    },
    # Yi et al. 2021, create_mini_kinetics_c.py (it imports create_mini_ssv2_c.py's functions and
    # redefines motion_blur and frame_rate). Its brightness, saturate and fog constants equal
    # ImageNet-C's (saturate and fog in ImageNet-C's order, as above), and its frame rates (20, 16, 12, 9, 6 fps) are frame_rate's own row; its fog
    # draws one plasma layer per clip, as our fog does by default. temporal_blur's own row is
    # the SSv2 script's (c = 1, 2, 3, 4, 6); the Kinetics script uses c = 3, 5, 7, 9, 11.
    "kinetics-c": {
        **{op: PAPER_PARAMS[op] for op in SOURCE_ORDER["kinetics-c"]},
        "shot_noise":    {"photons": (60, 25, 12, 5, 3)},
        "contrast":      {"factor": (0.5, 0.4, 0.3, 0.2, 0.1)},
        "temporal_blur": {"c": (3, 5, 7, 9, 11)},          # the mean of the 2c frames t-c .. t+c-1
    },
}


def suite_table(suite: str, name: str) -> dict[int, dict[str, Any]] | None:
    """``name``'s per-severity parameters under ``suite``'s table, only the params it replaces."""
    row = SUITE_PARAMS.get(suite, {}).get(name)
    return None if row is None else {s: {k: v[s - 1] for k, v in row.items()} for s in SEVERITY_LEVELS}


def source_order_note(name: str) -> str:
    """The catalogue's sentence for an op whose own row departs from its sources' levels: which
    suites keep the sources' levels and order (``SOURCE_ORDER``)."""
    suites = [suite for suite, ops in SOURCE_ORDER.items() if name in ops]
    return (f"These values are {name}'s own table (its default); under {' and '.join(suites)} "
            f"({name}:{suites[0]}, suite:{suites[0]}) the source's levels are used in the source's "
            "order, so severity k there is the source's severity k.")

