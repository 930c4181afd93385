"""Visual perturbations of category camera: static rotation, per-frame rotation, translation.

Registrations only; the kernels are in :mod:`..kernels.camera` and :mod:`..kernels.torch_blur_camera`,
registered there under each op's name."""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels.camera import draw_angles, draw_offsets
from ..kernels.twins import kernels_of
from ..render import Renderer
from ..severity_params import table

_BORDER = ("Same output size; the uncovered area mirrors the picture (reflect-101) where the "
           "reference code leaves it black: black corners made 45° score a lower PSNR than 90° "
           "on square frames, breaking the severity order, and no real camera shows them.")

register(Spec(
    name="static_rotate", modality="video", category="camera", random=False,
    render=Renderer(kernels=kernels_of("static_rotate"),
                    cpu_kernel="torch"),                   # one grid for the clip: faster on float clips
    summary="Turn every frame by the same angle, counter-clockwise about the centre.",
    aliases=("StaticRotate", "Static Rotation"),
    severities=table("static_rotate"),
    deviation=("Bilinear sampling instead of the reference's nearest neighbour. " + _BORDER
               + " The reference's dataset labels this 'Rotate'; that name resolves to our "
                 "per-frame 'rotate', so use 'static_rotate' or 'StaticRotate'."),
))
register(Spec(
    name="rotate", modality="video", category="camera",
    render=Renderer(draw=draw_angles, kernels=kernels_of("rotate")),
    summary="Turn each frame by its own random angle ~ U(-6s°, 6s°) at severity s.",
    aliases=("VarRotate", "Rotation"),
    severities=table("rotate"),
    deviation=("Continuous angles in (-6s°, 6s°); the reference code draws whole degrees in "
               "[-(6s+1), 6s+1]. Bilinear sampling instead of nearest neighbour. " + _BORDER),
))
register(Spec(
    name="translate", modality="video", category="camera",
    render=Renderer(draw=draw_offsets, torch_frames="clip",     # a gather: any clip, moved as it is
                    kernels=kernels_of("translate"),
                    cpu_kernel="torch"),                   # a float clip moved as it is: no conversions
    summary="Camera shake: each frame shifted by its own random offset in [0, 8s) px per axis.",
    aliases=("Translate", "Translation"),
    severities=table("translate"),
    deviation=("A new offset for every frame, as the paper describes (the reference code draws one "
               "offset per clip). The reference crops a 224 window at the offset from a larger "
               "frame, or zero-pads when the frame is not larger; we keep the input size and "
               "mirror the picture into the uncovered right and bottom edges. Offsets are in "
               "pixels whatever the frame size."),
))
