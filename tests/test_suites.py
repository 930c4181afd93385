"""Suites as names: membership data, per-suite tables, selection, build/bench plumbing, summaries.

Tests marked "final counts" expect every op of the catalogue (ImageNet-C's and Kinetics-C's
ops included); the mechanism itself is tested with the ops of the MSRVTT-P suite.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import perturb
from bench_fixtures import write_tiny_dataset
from perturb.bench.pipeline.jobs import jobs_of
from perturb.bench.scoring.baselines import load_baseline
from perturb.bench.scoring.suite_summary import suite_runs, summarize_suites
from perturb.cli import main
from perturb.errors import UnknownPerturbationError
from perturb.registry import REGISTRY, Registry, Spec, Suite
from perturb.rng import item_seed
from perturb.video import Perturbation, apply, draw
from perturb.video.psnr import psnr
from perturb.video.render import INDEX, Renderer
from perturb.video.sample import sample_clip
from perturb.video.severity_params import SUITE_PARAMS
from perturb.video.suites import IMAGENET_C, IMAGENET_C_BAR, KINETICS_C, MSRVTT_P

FINAL_COUNTS = {"msrvtt-p": 18, "imagenet-c": 19, "imagenet-c-bar": 10, "kinetics-c": 12}
TODAY = ("gaussian_noise shot_noise impulse_noise speckle_noise defocus_blur motion_blur zoom_blur jpeg "
         "mpeg1 mpeg2 jumble box_jumble sampling reverse_sampling freeze static_rotate rotate translate").split()


@pytest.fixture(scope="module")
def clip() -> np.ndarray:
    return np.ascontiguousarray(sample_clip(4)[:, :64, :64])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_dataset(tmp_path_factory.mktemp("suites") / "ds", n=3, frames=6, size=32)


# ------------------------------------------------------------------------------ membership data
def test_membership_lists_are_the_agreed_ones():
    assert list(MSRVTT_P) == TODAY
    assert len(set(IMAGENET_C)) == len(IMAGENET_C) == 19
    assert set(IMAGENET_C[:15]) >= {"gaussian_noise", "glass_blur", "snow", "frost", "fog", "jpeg", "pixelate"}
    assert set(IMAGENET_C[15:]) == {"speckle_noise", "gaussian_blur", "spatter", "saturate"}
    assert sorted(KINETICS_C) == sorted(["shot_noise", "rain", "fog", "contrast", "brightness", "saturate",
                                         "temporal_blur", "bit_error", "h265_crf", "h265_abr",
                                         "packet_loss", "frame_rate"])
    suites = {suite.name: suite for suite in REGISTRY.suites("video")}
    # ImageNet-C-bar: imagenet_c_bar.csv's ten rows in its order, none of them an ImageNet-C op
    assert IMAGENET_C_BAR == ("caustic_refraction", "inverse_sparkles", "sparkles", "perlin_noise",
                              "blue_noise_sample", "plasma_noise", "checkerboard_cutout", "cocentric_sine_waves",
                              "single_frequency_greyscale", "brownish_noise")
    assert not set(IMAGENET_C_BAR) & set(IMAGENET_C)
    data = {"msrvtt-p": MSRVTT_P, "imagenet-c": IMAGENET_C, "imagenet-c-bar": IMAGENET_C_BAR, "kinetics-c": KINETICS_C}
    named = {name: suite.members for name, suite in suites.items() if suite.members is not None}
    assert named == {name: tuple(members) for name, members in data.items()}   # each suite is its data
    whole = [name for name, suite in suites.items() if suite.members is None]
    assert len(whole) == 1 and all(spec.name in suites[whole[0]] for spec in REGISTRY.select("video"))
    assert all(suite.title and suite.source for suite in suites.values())          # each says what and whence
    assert "h264_crf" not in IMAGENET_C + KINETICS_C + MSRVTT_P


def test_msrvtt_p_is_todays_18_ops_and_90_configurations():
    specs = REGISTRY.resolve("suite:msrvtt-p", "video")
    assert [s.ref for s in specs] == TODAY and not any(s.table for s in specs)
    jobs = jobs_of(video=["suite:msrvtt-p"])
    assert len(jobs) == 90 and {j.video for j in jobs} == set(TODAY)


@pytest.mark.parametrize("suite", sorted(FINAL_COUNTS))
def test_list_suite_gives_the_final_counts(suite, capsys):
    """Final counts: imagenet-c and kinetics-c need the ops of the whole catalogue."""
    assert main(["list", "--suite", suite, "--json"]) == 0
    out = capsys.readouterr()
    assert len(json.loads(out.out)) == FINAL_COUNTS[suite], out.err


# imagenet_c_bar.csv (facebookresearch/augmentation-corruption ba4d5a5): each op's five points on its 1-10 scale
CBAR_CSV = """caustic_refraction,2.35,3.2,4.9,6.6,9.15
inverse_sparkles,1.0,2.0,4.0,9.0,10.0
sparkles,1.0,2.0,3.0,5.0,6.0
perlin_noise,4.6,5.2,5.8,7.6,8.8
blue_noise_sample,0.8,1.6,2.4,4.0,5.6
plasma_noise,4.75,7.0,8.5,9.25,10.0
checkerboard_cutout,2.0,3.0,4.0,5.0,6.0
cocentric_sine_waves,3.0,5.0,8.0,9.0,10.0
single_frequency_greyscale,1.0,1.5,2.0,4.5,5.0
brownish_noise,1.0,2.0,3.0,4.0,5.0"""


def test_list_imagenet_c_bar_gives_the_reference_levels(capsys):
    """`perturb list --suite imagenet-c-bar`: the ten ops, each severity's point on the source's scale."""
    reference = {name: [float(v) for v in rest] for name, *rest in (line.split(",") for line in CBAR_CSV.splitlines())}
    assert main(["list", "--suite", "imagenet-c-bar"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    got = {r[0]: r[3] for r in rows}
    assert got == {name: "1-5 = levels " + ",".join(f"{v:g}" for v in levels) for name, levels in reference.items()}
    assert main(["list", "--suite", "imagenet-c-bar", "--json"]) == 0
    params = {r["name"]: r["params"] for r in json.loads(capsys.readouterr().out)}
    assert {name: [p[str(s)]["level"] for s in range(1, 6)] for name, p in params.items()} == reference
    assert params["caustic_refraction"]["3"] == {"level": 4.9, "lens_scale": 0.245, "lighting_amount": 0.98}
    assert params["inverse_sparkles"]["5"] == {"level": 10.0, "amount": 35.0}


def test_list_suite_shows_the_table_and_suites(capsys):
    assert main(["list", "--suite", "IMAGENET-C", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["shot_noise"]["table"] == "imagenet-c" and rows["gaussian_noise"]["table"] == ""
    assert rows["shot_noise"]["suites"] == ["msrvtt-p", "imagenet-c", "kinetics-c", "all"]
    assert "jumble" not in rows


def test_unknown_suite_is_a_one_line_usage_error(capsys):
    assert main(["list", "--suite", "imagenet-d"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("perturb list: error: unknown suite 'imagenet-d'; did you mean 'imagenet-c'? "
                   "Expected one of: msrvtt-p, imagenet-c, imagenet-c-bar, kinetics-c, all")   # issue 27 item 13


def test_a_suite_naming_unregistered_ops_says_which():
    reg = Registry()
    render = Renderer(INDEX)
    reg.register(Spec("a", "video", "noise", render=render, severities={1: {"k": 1}, 2: {"k": 2}}))
    reg.register(Spec("b", "video", "noise", render=render, severities={1: {"k": 1}, 2: {"k": 2}}))
    reg.add_suite(Suite("s", "video", ("a", "ghost", "b"), {"b": {1: {"k": 10}, 2: {"k": 20}}}))
    assert reg.missing("s") == ["ghost"]
    with pytest.raises(UnknownPerturbationError, match="suite s needs ghost, which is not registered"):
        reg.suite_specs("s")
    got = reg.suite_specs("s", missing_ok=True)
    assert [s.ref for s in got] == ["a", "b:s"] and got[1].params(2) == {"k": 20}
    with pytest.raises(UnknownPerturbationError, match="suite s needs ghost"):
        reg.resolve("suite:s", "video")


def test_a_video_entry_without_a_renderer_is_refused():
    reg = Registry()
    with pytest.raises(ValueError, match="video perturbation a needs a renderer"):
        reg.register(Spec("a", "video", "noise", severities={1: {"k": 1}}))
    assert "a" not in reg
    reg.register(Spec("t", "text", "Demo", lambda text, rng, **k: (text, False)))   # text keeps fn
    assert "t" in reg


def test_a_table_with_unknown_parameter_names_is_refused():
    reg = Registry()
    reg.register(Spec("a", "video", "noise", render=Renderer(INDEX), severities={1: {"k": 1}}))
    reg.add_suite(Suite("s", "video", ("a",), {"a": {1: {"typo": 3}}}))
    with pytest.raises(ValueError, match=r"names parameters \['typo'\].*expected parameters among \['k'\]"):
        reg.get("a:s")


# ------------------------------------------------------------------------------------- tables
def test_suite_tables_hold_the_sources_constants():
    assert SUITE_PARAMS["imagenet-c"]["shot_noise"] == {"photons": (60, 25, 12, 5, 3)}
    assert SUITE_PARAMS["imagenet-c"]["speckle_noise"] == {"sigma": (0.15, 0.20, 0.35, 0.45, 0.60)}
    assert SUITE_PARAMS["kinetics-c"]["shot_noise"] == {"photons": (60, 25, 12, 5, 3)}
    assert SUITE_PARAMS["kinetics-c"]["contrast"] == {"factor": (0.5, 0.4, 0.3, 0.2, 0.1)}
    assert SUITE_PARAMS["kinetics-c"]["temporal_blur"] == {"c": (3, 5, 7, 9, 11)}
    assert set(SUITE_PARAMS["kinetics-c"]) == {"shot_noise", "contrast", "temporal_blur", "saturate", "fog"}
    for suite, rows in SUITE_PARAMS.items():
        members = REGISTRY.suite(suite).members
        assert set(rows) <= set(members), f"{suite} has tables for non-members"


@pytest.mark.parametrize("ref", [f"{op}:{suite}" for suite, rows in SUITE_PARAMS.items() for op in rows])
def test_every_suite_table_fits_its_op(ref):
    """Final counts: the table's parameter names must be the registered op's own."""
    op, _, suite = ref.partition(":")
    spec = REGISTRY.get(ref, "video")
    assert spec.table == suite and spec.ref == ref
    for sev in range(1, 6):
        assert {k: spec.params(sev)[k] for k in SUITE_PARAMS[suite][op]} == \
            {k: v[sev - 1] for k, v in SUITE_PARAMS[suite][op].items()}


def test_a_suite_with_the_ops_own_values_keeps_the_plain_entry():
    assert REGISTRY.get("gaussian_noise:imagenet-c", "video") is REGISTRY.get("gaussian_noise", "video")
    assert REGISTRY.get("jpeg:ImageNet-C").ref == "jpeg"


def test_describe_shows_every_table(capsys):
    text = perturb.describe("shot_noise")
    assert "suites: msrvtt-p, imagenet-c, kinetics-c, all" in text
    assert "severity 3: photons=50" in text
    assert "imagenet-c table (selected as shot_noise:imagenet-c" in text
    assert "    severity 3: photons=12" in text
    assert main(["describe", "speckle_noise"]) == 0
    assert "    severity 5: sigma=0.6" in capsys.readouterr().out


def test_describe_contrast_shows_both_tables():
    """Final counts: contrast comes with the ImageNet-C digital ops."""
    text = perturb.describe("contrast")
    assert "kinetics-c table" in text and "factor=0.5" in text and "factor=0.05" in text


# ---------------------------------------------------------------------------------------- API
def test_suite_keyword_selects_the_table(clip):
    own = apply(clip, "shot_noise", 3, seed=5)
    inet = apply(clip, "shot_noise", 3, seed=5, suite="imagenet-c")
    assert np.array_equal(inet, apply(clip, "shot_noise:imagenet-c", 3, seed=5))
    assert np.array_equal(own, apply(clip, "shot_noise", 3, seed=5, suite="msrvtt-p"))
    assert psnr(clip, inet) < psnr(clip, own) - 3          # 12 photons against 50
    d = draw("shot_noise", 3, len(clip), seed=5, suite="imagenet-c")
    assert d.params == {"photons": 12} and d.name == "shot_noise"
    assert draw("shot_noise", 3, len(clip), seed=5).params == {"photons": 50}
    p = Perturbation("shot_noise", 3, seed=5, suite="imagenet-c")
    assert np.array_equal(p(clip), inet) and np.array_equal(p.draw(len(clip)).render(clip), inet)
    assert repr(p) == "Perturbation('shot_noise', severity=3, suite='imagenet-c')"


def test_suite_keyword_errors(clip):
    with pytest.raises(ValueError, match="unknown suite 'bogus'; expected one of: msrvtt-p, imagenet-c"):
        apply(clip, "shot_noise", 3, suite="bogus")
    with pytest.raises(ValueError, match="jumble is not in suite imagenet-c; it is in: msrvtt-p, all"):
        Perturbation("jumble", 3, suite="imagenet-c")
    with pytest.raises(ValueError, match="names a suite"):
        apply(clip, "suite:imagenet-c", 3)
    with pytest.raises(ValueError, match="suite imagenet-c holds video perturbations"):
        REGISTRY.resolve("suite:imagenet-c", "text")


def test_resolve_keeps_both_tables_of_one_op():
    got = REGISTRY.resolve("shot_noise,shot_noise:imagenet-c,noise", "video")
    assert [s.ref for s in got] == ["gaussian_noise", "shot_noise", "shot_noise:imagenet-c",
                                    "impulse_noise", "speckle_noise"]


# ------------------------------------------------------------------------------ build and bench
def _build(dataset: Path, out: Path, selection: str, severities: str = "1") -> int:
    return main(["build", str(dataset), "--out", str(out), "--video-perturbations", selection,
                 "--severities", severities, "--text-perturbations", "none", "--no-progress"])


def _bench(dataset: Path, out: Path, selection: str, *extra: str) -> int:
    return main(["bench", "--model", "toy:8", "--dataset", str(dataset), "--out", str(out),
                 "--video-perturbations", selection, "--text-perturbations", "none",
                 "--bootstrap", "0", "--no-progress", *extra])


def test_build_writes_the_suite_table_and_matches_the_library(dataset, tmp_path):
    from perturb.dataset.encode import load
    from perturb.dataset.readers import read_dataset

    assert _build(dataset, tmp_path / "b", "shot_noise,shot_noise:imagenet-c", "5") == 0
    info = json.loads((tmp_path / "b" / "dataset.json").read_text())
    entries = {e["name"]: e for e in info["video_perturbations"]}
    assert entries["shot_noise:imagenet-c"]["table"] == "imagenet-c"
    assert entries["shot_noise:imagenet-c"]["params"] == {"5": {"photons": 3}}
    assert entries["shot_noise"]["params"] == {"5": {"photons": 15}}
    item = read_dataset(str(dataset))[0]
    from perturb.video.io import read
    clean, _ = read(item.video_path)
    ref = "shot_noise:imagenet-c"
    built = load(tmp_path / "b" / "videos" / "shot_noise_imagenet-c" / "5" / f"{item.item_id}.mkv")
    assert np.array_equal(built, apply(clean, ref, 5, seed=item_seed(0, item.item_id, ref, 5)))
    plain = load(tmp_path / "b" / "videos" / "shot_noise" / "5" / f"{item.item_id}.mkv")
    assert not np.array_equal(built, plain)


def test_bench_names_the_table_and_keys_the_cache_by_it(dataset, tmp_path, capsys):
    out = tmp_path / "r"
    assert _bench(dataset, out, "suite:msrvtt-p,shot_noise:imagenet-c", "--severities", "1,5") == 0
    doc = json.loads((out / "results.json").read_text())
    names = [r["perturbation"] for r in doc["runs"]]
    assert len(names) == 38 and names.count("shot_noise:imagenet-c") == 2 and names.count("shot_noise") == 2
    folders = {p.name.rsplit("-", 1)[0] for p in (out / "cache").glob("*/*/*/video/*")}
    assert {"shot_noise", "shot_noise_imagenet-c"} <= folders
    assert doc["suites"]["msrvtt-p"]["configurations"] == 36
    inet = doc["suites"]["imagenet-c"]
    # speckle_noise ran under its own table, not ImageNet-C's: it is not in imagenet-c's group
    assert inet["operations"] == ["gaussian_noise", "shot_noise", "impulse_noise",
                                  "defocus_blur", "motion_blur", "zoom_blur", "jpeg"]
    assert inet["configurations"] == 14 and "speckle_noise" in inet["not_run"]
    assert inet["tables"] == {"shot_noise": "imagenet-c"}
    assert {r["perturbation"] for r in suite_runs(doc["runs"], "imagenet-c")} >= {"shot_noise:imagenet-c"}
    report = (out / "report.md").read_text()
    assert "### Robustness per suite" in report and "| imagenet-c | 7/19 | 14 |" in report
    assert "mCE: needs a baseline model's errors (--baseline-errors)" in report


def test_bench_unknown_suite_is_a_usage_error(dataset, tmp_path, capsys):
    assert _bench(dataset, tmp_path / "x", "suite:nope") == 2
    assert capsys.readouterr().err.strip().endswith("expected one of: msrvtt-p, imagenet-c, imagenet-c-bar, kinetics-c, all")


def test_kinetics_c_builds_and_benches_end_to_end(tmp_path):
    """Final counts: Kinetics-C's ops come with the whole catalogue. Clips of 12 frames at
    30 fps, so frame rates of 20..6 fps and codec GOPs have frames to work on."""
    dataset = write_tiny_dataset(tmp_path / "kds", n=2, frames=12, size=64, fps=30.0)
    assert _build(dataset, tmp_path / "b", "suite:kinetics-c") == 0
    rows = [json.loads(line) for line in (tmp_path / "b" / "manifest.jsonl").read_text().splitlines()]
    assert len({r["perturbation"] for r in rows}) == 12 and all(r["status"] == "ok" for r in rows)
    assert _bench(dataset, tmp_path / "r", "suite:kinetics-c", "--severities", "1,3") == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    kin = doc["suites"]["kinetics-c"]
    assert len(kin["operations"]) == 12 and kin["configurations"] == 24 and not kin["not_run"]
    assert kin["figures"]["rPC"] == pytest.approx(kin["gamma_r_mean"])


def test_python_api_takes_suites(dataset, tmp_path):
    from perturb.dataset import BuildOptions, build
    from perturb.dataset.readers import read_dataset

    result = build(read_dataset(str(dataset))[:1], tmp_path / "b", video_perturbations="suite:imagenet-c",
                   severities="2", text_perturbations=None,
                   options=BuildOptions(progress=False))
    assert result.ok and result.total == 19


# ------------------------------------------------------------------------------------ summaries
def _doc(runs: list[tuple[str, int, float]], clean: float = 0.8) -> dict:
    return {"metric": "t2v.R@5", "clean": {"t2v": {"R@5": clean}},
            "runs": [{"modality": "video", "perturbation": p, "severity": s,
                      "category": REGISTRY.get(p).category, "t2v": {"R@5": v},
                      "gamma_a": 1 - (clean - v), "gamma_r": v / clean} for p, s, v in runs]}


def test_mpc_and_rpc_of_kinetics_c():
    doc = _doc([("shot_noise:kinetics-c", 1, 0.6), ("shot_noise:kinetics-c", 2, 0.4), ("shot_noise", 1, 0.1)])
    kin = summarize_suites(doc)["kinetics-c"]
    assert kin["configurations"] == 2
    assert kin["figures"]["mPC"] == pytest.approx(0.5)
    assert kin["figures"]["rPC"] == pytest.approx(0.625) == pytest.approx(kin["gamma_r_mean"])
    assert kin["gamma_a_mean"] == pytest.approx(1 - 0.8 + 0.5)          # mean γa = 1 − A_c + mPC
    assert "msrvtt-p" not in summarize_suites(doc)           # one member alone does not select a suite


def test_a_kinetics_c_bench_leads_with_its_figures_and_shows_no_partial_imagenet_c(capsys):
    """fog, brightness and saturate are imagenet-c members too, under the same table: no
    "imagenet-c 3/19" row; the mPC/rPC line comes in the headline, before any table."""
    from perturb.bench.adapters.toy import ToyEncoder
    from perturb.bench.api import benchmark
    from perturb.bench.options import BenchOptions
    from perturb.bench.pipeline.encoder import Settings
    from perturb.bench.reporting.report import markdown, print_summary
    from bench_fixtures import tiny_data

    video = [s.ref for s in REGISTRY.resolve("suite:kinetics-c", "video")]
    doc = benchmark(ToyEncoder(8), tiny_data(3, frames=8, size=32),
                    BenchOptions(bootstrap=0, settings=Settings(seed=0, progress=False)), video=video,
                    severities=(1,))
    assert list(doc["suites"]) == ["kinetics-c"]
    kin = doc["suites"]["kinetics-c"]
    line = f"kinetics-c (12/12 operations): mPC {kin['figures']['mPC']:.3f}, rPC {kin['figures']['rPC']:.3f}"
    report = markdown([doc])
    assert report.index(line) < report.index("most damaging configurations") < report.index("### ")
    print_summary(doc)
    assert line in capsys.readouterr().out


def test_mce_against_baseline_errors(tmp_path):
    doc = _doc([("shot_noise:imagenet-c", 1, 0.6), ("shot_noise:imagenet-c", 2, 0.4),
                ("gaussian_noise", 1, 0.9), ("jpeg", 1, 0.5)])
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"shot_noise": [0.5, 0.5, 0.5, 0.5, 0.5],
                                "Gaussian": {"1": 0.2, "2": 0.3, "3": 0.4, "4": 0.5, "5": 0.6}}))
    figures = summarize_suites(doc, load_baseline(path))["imagenet-c"]["figures"]
    assert figures["CE"] == {"shot_noise": pytest.approx(1.0), "gaussian_noise": pytest.approx(0.5)}
    assert figures["mCE"] == pytest.approx(0.75) and figures["without_baseline"] == ["jpeg"]
    assert "figures" in summarize_suites(doc)["imagenet-c"] and summarize_suites(doc)["imagenet-c"]["figures"] == {}


@pytest.mark.parametrize("bad, message", [
    ({"fog_x": [0.1] * 5}, "unknown video perturbation 'fog_x'"),
    ({"jpeg": [0.1, 0.1, 0.1, 0.1, 2.0]}, "'jpeg' must map to 5 errors in \\[0, 1\\]"),
    ({"jpeg": {"7": 0.1}}, "at severities 1..5"),
    ([0.1], "expected a JSON object"),
    ({"fog": [0.1] * 4}, "'fog' must map to 5 errors"),                    # 4: mCE read "over 0"
    ({"fog": {"1": 0.1, "2": 0.1, "3": 0.1, "4": 0.1}}, "'fog' must map to 5 errors"),
    ('{"fog": [0.1, 0.1, 0.1, 0.1, 0.1], "FOG": [0.5, 0.5, 0.5, 0.5, 0.5]}', "'fog' and 'FOG' both name fog"),
    ('{"jpeg": [0.1, 0.1, 0.1, 0.1, 0.1], "jpeg": [0.5, 0.5, 0.5, 0.5, 0.5]}', "'jpeg' and 'jpeg' both name jpeg"),
    ({"jpeg": [0.1] * 5, "jpeg_compression": [0.2] * 5}, "'jpeg' and 'jpeg_compression' both name jpeg"),
    ({"fog": [0] * 5, "jpeg": [0.0] * 5}, "'fog' has every error 0"),
    ({}, "no operation"),
])
def test_bad_baseline_errors(bad, message, tmp_path):
    path = tmp_path / "b.json"
    path.write_text(bad if isinstance(bad, str) else json.dumps(bad))
    with pytest.raises(ValueError, match=message):
        load_baseline(path)


def test_bench_and_report_take_baseline_errors(dataset, tmp_path, capsys):
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"jpeg_compression": [0.5] * 5}))
    assert _bench(dataset, tmp_path / "r", "jpeg,gaussian_noise", "--severities", "1",
                  "--baseline-errors", str(base)) == 0
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    ce = doc["suites"]["imagenet-c"]["figures"]["CE"]
    jpeg = next(r for r in doc["runs"] if r["perturbation"] == "jpeg")
    assert list(ce) == ["jpeg"] and ce["jpeg"] == pytest.approx((1 - jpeg["t2v"]["R@5"]) / 0.5)
    assert main(["report", str(tmp_path / "r" / "results.json"), "--out", str(tmp_path / "rep"),
                 "--baseline-errors", str(base)]) == 0
    assert "over 1 corruptions with baseline errors" in (tmp_path / "rep" / "report.md").read_text()
    base.write_text("{")
    assert _bench(dataset, tmp_path / "r2", "jpeg", "--baseline-errors", str(base)) == 2
    assert "cannot read baseline errors" in capsys.readouterr().err


def test_benchmark_api_takes_a_suite_item():
    from perturb.bench.adapters.factory import load_model
    from perturb.bench.api import benchmark
    from perturb.bench.options import BenchOptions
    from bench_fixtures import tiny_data
    from perturb.bench.pipeline.encoder import Settings

    doc = benchmark(load_model("toy:8"), tiny_data(3), BenchOptions(bootstrap=0, settings=Settings(progress=False)),
                    video=["suite:imagenet-c"], severities=[2])
    assert len(doc["runs"]) == 19 and doc["suites"]["imagenet-c"]["not_run"] == []
    assert {r["perturbation"] for r in doc["runs"]} >= {"shot_noise:imagenet-c", "speckle_noise:imagenet-c"}


def test_benchmark_api_mechanism_with_registered_ops():
    from perturb.bench.adapters.factory import load_model
    from perturb.bench.api import benchmark
    from perturb.bench.options import BenchOptions
    from bench_fixtures import tiny_data
    from perturb.bench.pipeline.encoder import Settings

    doc = benchmark(load_model("toy:8"), tiny_data(3), BenchOptions(bootstrap=0, settings=Settings(progress=False)),
                    video=["jpeg", "speckle_noise:imagenet-c"], severities=[2])
    assert [r["perturbation"] for r in doc["runs"]] == ["jpeg", "speckle_noise:imagenet-c"]
    assert doc["suites"]["imagenet-c"]["configurations"] == 2 and "msrvtt-p" not in doc["suites"]   # jpeg alone
    assert doc["suites"]["imagenet-c"]["operations"] == ["jpeg", "speckle_noise"]


def test_cli_apply_and_gallery_take_suite_tables(tmp_path, capsys):
    from perturb.video.io import read, write

    src = tmp_path / "in.mkv"
    clip = np.ascontiguousarray(sample_clip(3)[:, :48, :48])
    write(src, clip, fps=10)
    assert main(["apply", str(src), str(tmp_path / "out.mkv"), "--name", "shot_noise:imagenet-c",
                 "--severity", "4", "--seed", "2"]) == 0
    assert capsys.readouterr().out.startswith("shot_noise:imagenet-c severity 4 seed 2")
    got, _ = read(tmp_path / "out.mkv")
    decoded, _ = read(src)
    assert np.array_equal(got, apply(decoded, "shot_noise", 4, seed=2, suite="imagenet-c"))
    assert main(["gallery", str(src), str(tmp_path / "g.png"), "--perturbations", "shot_noise",
                 "shot_noise:imagenet-c"]) == 0
    assert "gallery of 2 perturbations" in capsys.readouterr().out


def test_did_you_mean_keeps_the_close_names_only():
    """A typo of one name is answered with that name, not its distant cousins that also end in _noise."""
    from perturb.names import unknown_name

    names = {n: n for n in ("gaussian_noise", "plasma_noise", "perlin_noise", "shot_noise")}
    assert unknown_name("op", "gausian_noise", names, []).startswith("unknown op 'gausian_noise'; did you mean 'gaussian_noise'?")
    assert "did you mean 'gaussian_noise', 'plasma_noise', 'perlin_noise'?" in unknown_name(
        "op", "gausian_noise", names, [], margin=1)          # no margin: difflib's three closest


def test_two_suites_sharing_an_op_run_it_once():
    """imagenet-c and kinetics-c both hold brightness under its own table: one job per severity."""
    jobs = jobs_of(video=["suite:imagenet-c", "suite:kinetics-c"], severities=(3,))
    assert len(jobs) == len(set(jobs)) == 19 + 12 - 1          # brightness once; the other shared ops differ by table
    assert [j.video for j in jobs].count("brightness") == 1
    assert {"shot_noise:imagenet-c", "shot_noise:kinetics-c", "fog:imagenet-c", "fog:kinetics-c"} <= {j.video for j in jobs}
