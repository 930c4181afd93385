"""Visual perturbations of category weather: fog, frost, snow, spatter and rain.

Registrations only; the kernels are in :mod:`..kernels` (weather, weather_layers, rain, torch_weather),
registered there under each op's name."""
from __future__ import annotations

from ...registry import Spec, register
from ..kernels.rain import draw_rain
from ..kernels.twins import kernels_of
from ..kernels.weather import draw_weather
from ..render import Renderer
from ..severity_params import paper_table, source_order_note, table


def renderer(name: str) -> Renderer:
    return Renderer(draw=draw_weather(name), kernels=kernels_of(name))


# ------------------------------------------------------------------------------ registration
_VIDEO = ("For video the layer is drawn once per clip and moves coherently (frame t shows a window "
          "of one larger layer at offset round(t·v)); the image suite draws a new layer per image, "
          "which per_frame=True reproduces frame by frame. The layer is generated on the host from a "
          "key drawn from the clip's generator, so numpy and torch composite the same layer; "
          "output is rounded to the nearest level (the reference truncates).")

register(Spec(name="fog", render=renderer("fog"),
              modality="video", category="weather", aliases=("Fog",),
              summary="A diamond-square plasma haze lifts and flattens the picture; drifts slowly",
              severities=table("fog"), paper=paper_table("fog"), extra={"per_frame": True},
              deviation="The reference's fog (diamond-square plasma, wibble 100, map the next power of "
                        "two of the longer side, top-left crop) is restated with the clip's generator; "
                        "the field is a torus, so it translates seamlessly by 0.5 px/frame in a random "
                        "direction. Severity 4's strength is 2.75 (the source's 2.5 damaged the sample "
                        "clip less than severity 3). " + source_order_note("fog") + " With the same random stream "
                        "the plasma field equals the reference's to 3e-8. " + _VIDEO))
register(Spec(name="frost", render=renderer("frost"),
              modality="video", category="weather", aliases=("Frost",),
              summary="Ice on the lens: scale·x + frost·texture with a procedural frost texture",
              severities=table("frost"), paper=paper_table("frost"), extra={"per_frame": True},
              deviation="The reference blends one of six frost photographs (randomly cropped); here the "
                        "texture is grown procedurally (seeded): a soft plasma icing under ice needles "
                        "with ±60° side branches, tinted bluish white. Frost stays still over the clip "
                        "(ice on a lens does not drift). Severities 4 and 5 blend 0.73 and 0.78 of "
                        "the texture (source 0.7, 0.75: lowering only the picture's weight made severity "
                        "4 milder than 3 on the sample clip). " + source_order_note("frost") + " " + _VIDEO))
register(Spec(name="snow", render=renderer("snow"),
              modality="video", category="weather", aliases=("Snow",),
              summary="Streaked snow flakes over a greyed, brightened picture; flakes fall 4 px/frame",
              severities=table("snow"), paper=paper_table("snow"), extra={"per_frame": True},
              deviation="The reference's snow layer (normal noise, clipped zoom, threshold, motion blur at "
                        "an angle in [-135°, -45°], plus its 180° turn); the noise is drawn at the zoomed-"
                        "out size and enlarged bilinearly with OpenCV (scipy's zoom of a centre crop in "
                        "the reference) and the streak uses rounded tap offsets with replicated edges. "
                        "Flakes fall along their streaks at 4 px/frame. Severity 3's threshold is 0.88 "
                        "(source 0.9: severity 3 damaged the sample clip less than 2). " + source_order_note("snow") + " " + _VIDEO))
register(Spec(name="spatter", render=renderer("spatter"),
              modality="video", category="weather", aliases=("Spatter",),
              summary="Water drops (severities 1-3) or mud (4-5) on the lens; drops run down slowly",
              severities=table("spatter"), extra={"per_frame": True},
              deviation="The reference's spatter layer (blurred thresholded noise; water: Canny, distance "
                        "transform and ridge filter, pale turquoise; mud: brown mask), with scikit-image's "
                        "Gaussian replaced by OpenCV's (4σ support, replicated edges). Drops drift "
                        "0.5 px/frame downwards (45°-135°). " + _VIDEO))

register(Spec(
    name="rain", modality="video", category="weather",
    render=Renderer(draw=draw_rain, kernels=kernels_of("rain")),
    aliases=("Rain",), extra={"per_frame": True},
    summary="One-pixel rain streaks 10-80 px long over a flattened picture; streaks fall in video",
    severities=table("rain"),
    deviation=("Source: Yi et al. 2021, rain of create_mini_ssv2_c.py (Kinetics-C imports it): drops "
               "area/770 to area/400, streaks 10 to 80 px, contrast scaled by 0.8 to 0.5 about the "
               "channel means. The reference draws a slant in [-10, 10) but renders every streak with "
               "a slant of -1 px (it passes its constant, not the draw); we render the drawn slant. "
               "Its streak starts keep the streak inside the frame's bottom edge; ours are uniform on "
               "a sheet that wraps around, so the density is even. For video the sheet is drawn once "
               "per clip and falls along the streaks at half a streak length per frame (the "
               "column fall: a 180-degree shutter), repeating no sooner than every 128 frames; "
               "per_frame=True draws a new sheet and slant per frame, as the reference does per image. "
               "Output is rounded to the nearest level (the reference truncates)."),
))
