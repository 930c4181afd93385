"""Visual perturbations of category blur: defocus, motion, zoom, gaussian, glass and temporal blur.

Registrations only; the kernels are in :mod:`..kernels` (blur, imagenet_c, temporal_blur, torch_*),
registered there under each op's name."""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels.blur import draw_motion_angles
from ..kernels.imagenet_c import ROUNDING, SOURCE, draw_glass
from ..kernels.temporal_blur import draw_window
from ..kernels.twins import kernels_of
from ..render import WINDOW, Renderer
from ..severity_params import paper_table, source_order_note, table

_COMMON = dict(modality="video", category="blur", temporal=False)

register(Spec(name="defocus_blur",
              render=Renderer(kernels=kernels_of("defocus_blur")),
              aliases=("Defocus", "Defocus Blur"),
              summary="Out-of-focus lens: convolution with an anti-aliased disk",
              severities=table("defocus_blur"), random=False,
              deviation="The kernel is the disk convolved with its anti-aliasing Gaussian at full "
                        "support, with unit gain; the reference blurs a disk already normalised and "
                        "clipped to a 17x17 (21x21) box, so at radii 8 and 10 (disk touching the box "
                        "edge) it brightened every frame by about 1%.",
              **_COMMON))
register(Spec(name="motion_blur",
              render=Renderer(draw=draw_motion_angles, kernels=kernels_of("motion_blur")),
              aliases=("Motion", "Motion Blur"),
              summary="One-sided Gaussian streak at a random angle in [-45°, 45°] per frame",
              severities=table("motion_blur"), random=True,
              deviation="The reference calls ImageMagick's motion blur; here the same kind of "
                        "kernel (2·radius+1 one-sided Gaussian taps along the angle) is built in "
                        "numpy and applied with OpenCV, with replicated edges. Angles are drawn "
                        "per frame from the seeded generator.",
              **_COMMON))
register(Spec(name="zoom_blur",
              render=Renderer(kernels=kernels_of("zoom_blur")),
              aliases=("Zoom", "Zoom Blur"),
              summary="Mean of the frame and its centre zooms (np.arange(start, stop, step) factors)",
              severities=table("zoom_blur"), random=False,
              deviation="Zooms are rendered with one bilinear OpenCV affine warp per factor and "
                        "frame instead of scipy's spline zoom of a centre crop; the result differs "
                        "by interpolation only.",
              version=2,           # 2: each frame warped alone (exact positions), not in channel stacks
              **_COMMON))
register(Spec(
    name="gaussian_blur", modality="video", category="blur",
    render=Renderer(kernels=kernels_of("gaussian_blur")),
    summary="Gaussian blur of sigma 1-6 px (ImageNet-C's extra corruption)",
    severities=table("gaussian_blur"), random=False,
    deviation=f"Source: {SOURCE}. Same kernel (truncated at 4 sigma, replicated edges) applied "
              "with OpenCV in float32. " + ROUNDING))
register(Spec(
    name="glass_blur", modality="video", category="blur",
    render=Renderer(draw=draw_glass, kernels=kernels_of("glass_blur")),
    aliases=("Glass", "Glass Blur"),
    summary="Frosted glass: blur, replace each pixel by a random neighbour within d px, blur again",
    severities=table("glass_blur"), paper=paper_table("glass_blur"),
    deviation=f"Source: {SOURCE}. The source's five levels (sigma, d, passes) = (0.7, 1, 2), "
              "(0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2) are not in order of damage: the "
              "number of passes counts more than d, and on the sample clip their mean PSNR is "
              "23.9, 24.1, 20.1, 20.7, 19.9 dB. The same five are used, reordered by damage "
              "(24.1, 23.9, 20.7, 20.1, 19.9 dB), so averages over severities are unchanged. "
              + source_order_note("glass_blur") + " The neighbour offsets are drawn once per clip (one pane of glass "
              "in front of the camera; the image suite draws them per image) from the seeded "
              "Generator, and the reference's pixel loop is replayed in its order on pixel indices "
              "(its swap statement on numpy pixel views copies the neighbour in and leaves the "
              "neighbour as it was; so does this), so each frame is a blur, one gather and a blur. "
              "The blurred frame is rounded to levels before the moves where the reference "
              "truncates. " + ROUNDING))
register(Spec(
    name="temporal_blur", modality="video", category="blur",
    render=Renderer(WINDOW, draw_window, kernels_of("temporal_blur")),
    temporal=True, random=False, aliases=("TemporalBlur", "temporal motion blur"),
    summary="Motion blur over time: each frame the mean of the 2c frames t-c .. t+c-1",
    severities=table("temporal_blur"),
    deviation=("Source: Yi et al. 2021, motion_blur of create_mini_ssv2_c.py (c = 1 2 3 4 6, this op's "
               "own row) and create_mini_kinetics_c.py (c = 3 5 7 9 11, the kinetics-c table). The "
               "reference returns T - 2c frames (it drops the first and last c); we keep T by repeating "
               "the end frames, so frames within c of an end mix fewer distinct frames. The mean is "
               "rounded to the nearest level, half up (the reference truncates)."),
))
