"""Visual perturbations of category temporal: jumble, box_jumble, sampling, reverse_sampling, freeze, frame_rate.

Registrations only; the index maps are in :mod:`..kernels.temporal` (an op's draw is its index
map, rendering a gather)."""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels.temporal import (box_jumble_indices, frame_rate_indices, freeze_indices, index_draw,
                                jumble_indices, reverse_sampling_indices, sampling_indices)
from ..render import INDEX, Renderer
from ..severity_params import paper_table, table

_SHORT = ("On a clip shorter than the {what}, {effect}; a single frame is returned unchanged.")

register(Spec(
    name="jumble", modality="video", category="temporal",
    render=Renderer(INDEX, index_draw(jumble_indices)), temporal=True,
    summary="Shuffle frames inside consecutive segments; longer segments move frames further.",
    aliases=("Jumble", "Jumbling"),
    severities=table("jumble"), paper=paper_table("jumble"),
    deviation=("The paper (text and reference code) uses segments of 32 16 8 4 2 frames and calls "
               "the shorter segments more severe, but a shuffle inside a segment of n frames moves "
               "a frame by about n/3 positions on average, so shorter segments disturb the order "
               "less. We order the levels by displacement: 4 8 16 32 64. A segment that a shuffle "
               "left in order is rolled by one, so every segment of 2+ frames changes. "
               + _SHORT.format(what="segment", effect="the whole clip is one segment")),
))
register(Spec(
    name="box_jumble", modality="video", category="temporal",
    render=Renderer(INDEX, index_draw(box_jumble_indices)), temporal=True,
    summary="Cut the clip into consecutive segments and shuffle the order of the segments.",
    aliases=("BoxJumble", "Box Jumbling"),
    severities=table("box_jumble"),
    deviation=("Segment lengths (s+1)^2 as in the paper. The reference cuts at multiples of the "
               "segment length; we cut at a random phase (the first and last segments may be "
               "shorter), otherwise a 64-frame clip at severity 5 (two segments) would have exactly "
               "one possible result whatever the seed. A shuffle that leaves every segment in place "
               "is replaced by a rotation, so a clip cut into 2+ segments always changes. A clip "
               "that falls inside one segment comes back unchanged; a single frame always does."),
))
register(Spec(
    name="sampling", modality="video", category="temporal",
    render=Renderer(INDEX, index_draw(sampling_indices)), temporal=True, random=False,
    summary="Slow motion: keep every r-th frame and repeat it r times, trimmed to the input length.",
    aliases=("SampleRate", "Sampling"),
    severities=table("sampling"),
    deviation=("Frame indices idx[t] = (t // r) * r. The reference code leaves ceil(T/r)*r frames; "
               "we trim to the input's T. "
               + _SHORT.format(what="rate", effect="every output frame is frame 0")),
))
register(Spec(
    name="reverse_sampling", modality="video", category="temporal",
    render=Renderer(INDEX, index_draw(reverse_sampling_indices)),
    temporal=True, random=False,
    summary="Sampling, then reversed in time.",
    aliases=("ReverseSample", "ReverseSampling", "Reverse"),
    severities=table("reverse_sampling"),
    deviation=("Frame indices idx[t] = ((T - 1 - t) // r) * r, i.e. the trimmed sampling output "
               "reversed. Reversal dominates the displacement at every level, so this one is not "
               "ordered by displacement."),
))
register(Spec(
    name="freeze", modality="video", category="temporal",
    render=Renderer(INDEX, index_draw(freeze_indices)), temporal=True,
    summary="Keep a random fraction of frames (frame 0 always) and hold each until the next kept one.",
    aliases=("Freeze",),
    severities=table("freeze"),
    deviation=("Keeps round(keep * T) distinct frames (at least 1) including frame 0; the reference "
               "code keeps one more whenever its random draw misses frame 0, and at severity 5 keeps "
               "10% instead of the 2.5% the paper states. The kept frames are drawn as a prefix of "
               "one random order, so under one seed each severity keeps a subset of the frames of "
               "the one below and is strictly more displaced. On short clips neighbouring levels "
               "can round to the same count; a single frame is returned unchanged."),
))
register(Spec(
    name="frame_rate", modality="video", category="temporal",
    render=Renderer(INDEX, index_draw(frame_rate_indices)), temporal=True, random=False,
    summary="The clip's frame rate cut to 20 16 12 9 6 fps, each kept frame held (T frames kept)",
    aliases=("FrameRate",),
    severities=table("frame_rate"),
    deviation=("Source: Yi et al. 2021, create_mini_kinetics_c.py's frame_rate (20 16 12 9 6 fps; the "
               "SSv2 script: 10 8 6 4 2). The reference re-encodes the video file with ffmpeg and "
               "libx265 at the lower rate, so its clips are shorter and H.265-compressed; here only the "
               "timing changes and the clip keeps its T frames: each frame is the one ffmpeg's fps "
               "filter keeps for its slot at the lower rate, held until the next (ffmpeg -vf "
               "fps=r,fps=30 gives the same frames). The clip is taken to run at clip_fps = 30 (the paper's "
               "input rate, as perturb build --paper-preprocess gives); for a clip at another rate take "
               "clip[perturb.video.kernels.temporal.frame_rate_indices(len(clip), r, clip_fps=f)]. The reference's "
               "command passes -fps, which ffmpeg 5.1 rejects (Unrecognized option), so its own "
               "output could not be made here; ffmpeg's fps filter stands in for it."),
))
