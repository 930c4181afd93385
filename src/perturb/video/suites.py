"""The named suites of visual perturbations: which ops each holds and the tables it carries.

``msrvtt-p`` is MSRVTT-P's 18 ops (90 configurations), the default of ``perturb build`` and
``perturb bench``; ``imagenet-c`` is imagecorruptions' 15 + 4 held-out corruptions; ``imagenet-c-bar`` is
ImageNet-C-bar's 10 (Mintun et al. 2021), chosen far from ImageNet-C's;
``kinetics-c`` is Mini Kinetics-C's 12 (Yi et al. 2021); ``all`` is every visual op. An op run
as a member of a suite takes that suite's table (``severity_params.SUITE_PARAMS``) where the
suite's constants differ from the op's own row.
"""
from __future__ import annotations

from ..registry import REGISTRY, Suite
from .severity_params import SUITE_PARAMS, suite_table

MSRVTT_P = ("gaussian_noise", "shot_noise", "impulse_noise", "speckle_noise",
            "defocus_blur", "motion_blur", "zoom_blur",
            "jpeg", "mpeg1", "mpeg2",
            "jumble", "box_jumble", "sampling", "reverse_sampling", "freeze",
            "static_rotate", "rotate", "translate")
IMAGENET_C = ("gaussian_noise", "shot_noise", "impulse_noise",
              "defocus_blur", "glass_blur", "motion_blur", "zoom_blur",
              "snow", "frost", "fog",
              "brightness", "contrast", "elastic_transform", "pixelate", "jpeg",
              # the four held-out corruptions
              "speckle_noise", "gaussian_blur", "spatter", "saturate")
# ImageNet-C-bar: imagenet_c_bar.csv's order
IMAGENET_C_BAR = ("caustic_refraction", "inverse_sparkles", "sparkles", "perlin_noise", "blue_noise_sample",
                  "plasma_noise", "checkerboard_cutout", "cocentric_sine_waves",
                  "single_frequency_greyscale", "brownish_noise")
KINETICS_C = ("shot_noise", "rain", "fog", "contrast", "brightness", "saturate",
              "temporal_blur", "bit_error", "h265_crf", "h265_abr", "packet_loss", "frame_rate")

# name -> (members, title, source, the source's summary figures)
SUITES: dict[str, tuple[tuple[str, ...] | None, str, str, tuple[str, ...]]] = {
    "msrvtt-p": (MSRVTT_P, "MSRVTT-P's visual perturbations",
                 "Schiappa et al., Robustness analysis of video-language models (MSRVTT-P)", ("γa", "γr")),
    "imagenet-c": (IMAGENET_C, "ImageNet-C's 15 corruptions and 4 held-out ones",
                   "Hendrycks & Dietterich 2019; imagecorruptions 1.1.2", ("mCE",)),
    # the reference repository ships baseline errors for ImageNet-C only, so no mCE here
    "imagenet-c-bar": (IMAGENET_C_BAR, "ImageNet-C-bar's 10 corruptions, held out from ImageNet-C",
                       "Mintun, Kirillov & Xie 2021, facebookresearch/augmentation-corruption "
                       "imagenet_c_bar.csv", ("mPC", "rPC")),
    "kinetics-c": (KINETICS_C, "Mini Kinetics-C's 12 corruptions",
                   "Yi et al. 2021, create_mini_kinetics_c.py", ("mPC", "rPC")),
    "all": (None, "every visual perturbation", "perturb", ()),
}

for _name, (_members, _title, _source, _figures) in SUITES.items():
    REGISTRY.add_suite(Suite(_name, "video", _members,
                             {op: suite_table(_name, op) for op in SUITE_PARAMS.get(_name, {})},
                             _title, _source, _figures))
