"""Visual perturbations of category overlay: ImageNet-C-bar's sparkles, cut-outs and refracting water in front of the picture.

Registrations only; the kernels are in :mod:`..kernels`, registered there under each op's name."""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels.cbar_caustics import draw_caustics
from ..kernels.cbar_overlays import draw_checkerboard, draw_inverse_sparkles, draw_sparkles
from ..kernels.twins import kernels_of
from ..render import Renderer
from ..severity_params import table

SOURCE = "Mintun, Kirillov & Xie 2021, facebookresearch/augmentation-corruption imagenet_c_bar/corrupt.py "
_VIDEO = ("For video one draw per clip gives every frame the same pattern (nothing jumps from frame "
          "to frame); per_frame=True draws anew for every frame, as the reference does per image. "
          "The draw is size-free (fractions of the frame, angles, the reference's RandomState seeds); "
          "lengths the reference gives as a fraction of im_size scale with the frame's shorter side, "
          "positions with each axis, so a square frame of side S gets the reference's parameters and maths at "
          "im_size = S. Coordinates are float64 and seeds int64 (no int32 overflow at any size).")


def overlay(name: str, draw, summary: str, deviation: str) -> None:
    """Registers C-bar overlay ``name`` with its drawer and kernels and the severity rows."""
    register(Spec(name=name, modality="video", category="overlay",
                  render=Renderer(draw=draw, kernels=kernels_of(name)), severities=table(name),
                  extra={"per_frame": True}, summary=summary, deviation=deviation + " " + _VIDEO))


overlay("checkerboard_cutout", draw_checkerboard,
        "A rotated checkerboard whose cells are cut to grey where a seeded grid says so",
        SOURCE + "CheckerBoardCutOut: a grid rotated by an angle in [0, 2π), cells of 0.1-0.25 of the "
        "side, a cell cut to grey 128 where its parities agree and RandomState(seed)'s grid value is "
        "below `fraction`. The reference reads its grid at int(nx), int(ny), which on a square frame "
        "may be negative (Python's wrap-around); on other frames they can pass the grid's end (an "
        "IndexError there): ours reads the grid modulo its size, which is the reference's wrap on "
        "square frames and repeats the grid beyond it. No arithmetic on the pixels: equal to the "
        "reference on square frames.")
overlay("sparkles", draw_sparkles,
        "Five white starbursts of jagged rays flare over the picture",
        SOURCE + "Sparkles: five bursts one after another (each onto the previous result), centres "
        "uniform over the frame, radius `radius` of the side, 50-199 rays whose lengths "
        "(radius · (1 + 0.25·N(0, 1)), at least 1 px) come from RandomState(seed) in the reference's "
        "order, interpolated between rays by angle, falloff length²/(distance² + 1e-4). The same "
        "float64 maths vectorised over pixels (the reference loops per pixel in Python); output is "
        "rounded to the nearest level (the reference truncates).")
overlay("inverse_sparkles", draw_inverse_sparkles,
        "The picture washed out to white except through one jagged starburst hole",
        SOURCE + "InverseSparkles: one burst, centre in the middle half of each axis, radius a "
        "quarter of the side, 50-199 rays from RandomState(seed) (lengths may go below 1 px, as "
        "there), the falloff raised to (100 - amount)/50; outside the burst the picture turns "
        "white. The reference's per-pixel loop is vectorised with float64 coordinates and int64 "
        "seeds, so no size overflows int32 (the reference's issue #5); output is rounded to the "
        "nearest level (the reference truncates).")
overlay("caustic_refraction", draw_caustics,
        "The picture seen through rippling water, bent and lit by bright caustic lines",
        SOURCE + "CausticRefraction: the caustic pattern (five iterations; time in [0.5, 2), period "
        "0.75-1.25 of the side) softened by a Gaussian of sigma 1 (the reference filters its three "
        "equal channels together with scipy, which leaves each channel as the 2-D filter does), a "
        "vertical ray refracted (eta 4) through the normal from the pattern's luma differences, "
        "reaching `lens_scale` of the side, the displacement rounded to 1/1000 px, bilinear "
        "sampling with zero outside the frame, plus `lighting_amount` times the luma differences. "
        "The reference's per-pixel rotation is written in closed form and its bilinear weights "
        "multiplied out (float64 either way); output is rounded to the nearest level (the "
        "reference truncates).")
