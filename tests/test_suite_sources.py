"""Named suites are faithful to their sources: under ``imagenet-c`` (and ``kinetics-c`` for the ops it
takes from ImageNet-C) severity k is the source's severity k, for every op (issue 27 item 12)."""
from __future__ import annotations

import numpy as np
import pytest

import perturb.video as pv
from perturb.bench.scoring.suite_summary import suite_runs
from perturb.registry import REGISTRY
from perturb.video.psnr import mean_psnr
from perturb.video.sample import sample_clip

# imagecorruptions 1.1.2, imagecorruptions/corruptions.py: each corruption's list ``c`` (severities
# 1..5), recorded here as constants, and the names our ops give to the members of its tuples.
IMAGECORRUPTIONS_1_1_2: dict[str, tuple[tuple[str, ...], list]] = {
    "gaussian_noise":    (("sigma",), [.08, .12, 0.18, 0.26, 0.38]),
    "shot_noise":        (("photons",), [60, 25, 12, 5, 3]),
    "impulse_noise":     (("amount",), [.03, .06, .09, 0.17, 0.27]),
    "speckle_noise":     (("sigma",), [.15, .2, 0.35, 0.45, 0.6]),
    "gaussian_blur":     (("sigma",), [1, 2, 3, 4, 6]),
    "glass_blur":        (("sigma", "max_delta", "iterations"),
                          [(0.7, 1, 2), (0.9, 2, 1), (1, 2, 3), (1.1, 3, 2), (1.5, 4, 2)]),
    "defocus_blur":      (("radius", "alias_blur"), [(3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5)]),
    "motion_blur":       (("radius", "sigma"), [(10, 3), (15, 5), (15, 8), (15, 12), (20, 15)]),
    "zoom_blur":         (("zooms",), [(1, 1.11, 0.01), (1, 1.16, 0.01), (1, 1.21, 0.02), (1, 1.26, 0.02),
                                       (1, 1.31, 0.03)]),          # np.arange(start, stop, step)
    "fog":               (("strength", "decay"), [(1.5, 2), (2., 2), (2.5, 1.7), (2.5, 1.5), (3., 1.4)]),
    "frost":             (("scale", "frost"), [(1, 0.4), (0.8, 0.6), (0.7, 0.7), (0.65, 0.7), (0.6, 0.75)]),
    "snow":              (("mean", "std", "zoom", "threshold", "radius", "sigma", "blend"),
                          [(0.1, 0.3, 3, 0.5, 10, 4, 0.8), (0.2, 0.3, 2, 0.5, 12, 4, 0.7),
                           (0.55, 0.3, 4, 0.9, 12, 8, 0.7), (0.55, 0.3, 4.5, 0.85, 12, 8, 0.65),
                           (0.55, 0.3, 2.5, 0.85, 12, 12, 0.55)]),
    "spatter":           (("mean", "std", "sigma", "threshold", "smear", "mud"),
                          [(0.65, 0.3, 4, 0.69, 0.6, 0), (0.65, 0.3, 3, 0.68, 0.6, 0), (0.65, 0.3, 2, 0.68, 0.5, 0),
                           (0.65, 0.3, 1, 0.65, 1.5, 1), (0.67, 0.4, 1, 0.65, 1.5, 1)]),
    "contrast":          (("factor",), [0.4, .3, .2, .1, .05]),
    "brightness":        (("shift",), [.1, .2, .3, .4, .5]),
    "saturate":          (("factor", "offset"), [(0.3, 0), (0.1, 0), (2, 0), (5, 0.1), (20, 0.2)]),
    "jpeg":              (("quality",), [25, 18, 15, 10, 7]),            # jpeg_compression
    "pixelate":          (("scale",), [0.6, 0.5, 0.4, 0.3, 0.25]),
    "elastic_transform": (("alpha",), [250 * 0.05, 250 * 0.065, 250 * 0.085, 250 * 0.1, 250 * 0.12]),
}
# The ops Mini Kinetics-C takes from ImageNet-C with ImageNet-C's constants (Yi et al. 2021).
KINETICS_FROM_IMAGENET_C = ("brightness", "saturate", "fog", "shot_noise")


def _source_row(name: str, severity: int) -> dict:
    names, levels = IMAGECORRUPTIONS_1_1_2[name]
    level = levels[severity - 1]
    return dict(zip(names, level if len(names) > 1 else (level,)))


def _same(got: dict, want: dict) -> bool:
    """Equal keys and values equal to float precision (zoom_blur's values are tuples)."""
    return got.keys() == want.keys() and all(
        np.allclose(np.asarray(got[k], float), np.asarray(want[k], float), rtol=1e-9, atol=0) for k in want)


def _used(ref: str, severity: int, keys) -> dict:
    params = REGISTRY.get(ref, "video").params(severity)
    return {k: params[k] for k in keys}


def test_the_recorded_constants_cover_the_suite() -> None:
    assert set(IMAGENET_C := REGISTRY.suite("imagenet-c").members) == set(IMAGECORRUPTIONS_1_1_2)
    assert len(IMAGENET_C) == 19


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("name", sorted(IMAGECORRUPTIONS_1_1_2))
def test_imagenet_c_severity_k_is_the_sources_k(name: str, severity: int) -> None:
    """``OP:imagenet-c`` and ``suite:imagenet-c`` take imagecorruptions' values at every severity."""
    want = _source_row(name, severity)
    assert _same(_used(f"{name}:imagenet-c", severity, want), want), f"{name}@{severity}"
    through_suite = {s.name: s for s in REGISTRY.resolve("suite:imagenet-c", "video")}[name]
    assert _same({k: through_suite.params(severity)[k] for k in want}, want)


@pytest.mark.parametrize("name", KINETICS_FROM_IMAGENET_C)
def test_kinetics_c_takes_imagenet_c_ops_at_the_sources_severities(name: str) -> None:
    for severity in range(1, 6):
        want = _source_row(name, severity)
        assert _same(_used(f"{name}:kinetics-c", severity, want), want), f"{name}@{severity}"


def test_a_reordered_own_table_stays_the_ops_default_and_the_catalogue_says_so() -> None:
    assert REGISTRY.get("saturate", "video").params(1)["factor"] == 2          # reordered by damage
    assert REGISTRY.get("saturate:imagenet-c", "video").params(1)["factor"] == 0.3
    for name in ("saturate", "glass_blur", "fog", "frost", "snow"):
        assert "under imagenet-c" in REGISTRY.get(name, "video").deviation
    assert "under imagenet-c and kinetics-c" in REGISTRY.get("saturate", "video").deviation


def test_summary_figures_count_only_runs_at_the_sources_order() -> None:
    """mCE (and mPC/rPC) read the suite's runs: saturate at its own reordered table is not one."""
    runs = [{"modality": "video", "perturbation": ref} for ref in
            ("saturate", "saturate:imagenet-c", "glass_blur:imagenet-c", "saturate:kinetics-c")]
    assert [r["perturbation"] for r in suite_runs(runs, "imagenet-c")] == \
        ["saturate:imagenet-c", "glass_blur:imagenet-c"]
    assert [r["perturbation"] for r in suite_runs(runs, "kinetics-c")] == ["saturate:kinetics-c"]


# ------------------------------------------------------------------ pixels against the reference
# imagecorruptions' names of the deterministic ops compared (zoom_blur is deterministic too but
# resamples with scipy's zoom where ours uses OpenCV: 35-37 dB, see benchmarks/README.md).
PEER_NAMES = {"gaussian_blur": "gaussian_blur", "defocus_blur": "defocus_blur", "brightness": "brightness",
              "contrast": "contrast", "saturate": "saturate", "jpeg": "jpeg_compression",
              "pixelate": "pixelate"}


@pytest.fixture(scope="module")
def peer(tmp_path_factory):
    from benchmarks.peers import PeerWorker, peer_python

    if not peer_python().exists():
        pytest.skip(f"imagecorruptions is not installed in {peer_python().parents[1]} "
                    "(python -m benchmarks.peers sets it up)")
    folder = tmp_path_factory.mktemp("peer")
    np.save(folder / "clip.npy", sample_clip(3))
    with PeerWorker(folder / "clip.npy") as worker:
        yield worker, folder


@pytest.mark.parametrize("name", sorted(PEER_NAMES))
def test_pixels_match_imagecorruptions_at_every_severity(name: str, peer) -> None:
    """PSNR >= 40 dB between ``OP:imagenet-c`` and imagecorruptions' own corruption at the same k."""
    worker, folder = peer
    clip = sample_clip(3)
    for severity in range(1, 6):
        out = folder / f"{name}-{severity}.npy"
        worker.run(PEER_NAMES[name], severity, seed=0, out=out)
        ours = pv.apply(clip, f"{name}:imagenet-c", severity, seed=0)
        db = mean_psnr(ours, np.load(out))
        assert db >= 40, f"{name}:imagenet-c severity {severity}: {db:.1f} dB against imagecorruptions"
