"""``perturb check`` / ``perturb compare`` from the command line: exit codes, tables, JUnit, Markdown."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from gate_fixtures import DEFAULT_PERTURBED, make_results, summary_of, write
from perturb.cli import main


@pytest.fixture
def results(tmp_path):
    return str(write(tmp_path / "results.json", make_results(ci=0.02)))


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_exit_0_when_every_rule_holds(capsys, results):
    code, out, _ = run(capsys, "check", results, "--min", "gamma_r=0.8", "--min", "noise:gamma_r=0.6",
                       "--min", "gaussian_noise:gamma_a=0.7", "--min", "clean.t2v.R@5=0.4")
    assert code == 0
    for rule in ("gamma_r >= 0.8", "noise:gamma_r >= 0.6", "gaussian_noise:gamma_a >= 0.7",
                 "clean.t2v.R@5 >= 0.4"):
        assert rule in out
    assert "OK 4 checks: 4 passed, 0 failed" in out
    assert "value" in out and "threshold" in out and "verdict" in out


def test_check_exit_1_on_a_violation(capsys, results):
    code, out, _ = run(capsys, "check", results, "--min", "gamma_r=0.8", "--min", "noise:gamma_r=0.9")
    assert code == 1
    assert "FAIL" in out and "FAILED 2 checks: 1 passed, 1 failed" in out


def test_check_max_rules(capsys, results):
    assert run(capsys, "check", results, "--max", "clean.t2v.MdR=5")[0] == 0
    assert run(capsys, "check", results, "--max", "clean.t2v.MdR=4")[0] == 1


@pytest.mark.parametrize("argv, words", [
    (["--min", "gamma=0.8"], "unknown metric 'gamma'; did you mean 'gamma_r', 'gamma_a'? Expected one of:"),
    (["--min", "gausian_noise:gamma_r=0.8"], "did you mean 'gaussian_noise'?"),
    (["--min", "gamma_r"], "cannot parse rule 'gamma_r'"),
    ([], "no rules to check; give --min/--max or a --policy file"),
])
def test_check_exit_2_on_bad_rules(capsys, results, argv, words):
    code, out, err = run(capsys, "check", results, *argv)
    assert code == 2 and out == ""
    assert err.startswith("perturb check: error: ") and words in err


def test_check_exit_2_on_bad_files(capsys, tmp_path):
    cases = {"absent.json": None, "broken.json": "{not json",
             "future.json": json.dumps(make_results(schema="2.0")),
             "partial.json": json.dumps({k: v for k, v in make_results().items() if k != "runs"}),
             "badrun.json": json.dumps({**make_results(), "runs": [{"perturbation": "x"}]})}
    expected = {"absent.json": "cannot read results file", "broken.json": "not valid JSON",
                "future.json": "unknown schema_version '2.0'; this perturb reads 1.0",
                "partial.json": "missing key(s) 'runs'",
                "badrun.json": "runs[0]: missing key(s) 'modality', 'category'"}
    for name, text in cases.items():
        if text is not None:
            (tmp_path / name).write_text(text)
        code, _, err = run(capsys, "check", str(tmp_path / name), "--min", "gamma_r=0.5")
        assert code == 2, name
        assert expected[name] in err, err


def test_minor_schema_versions_are_read(capsys, tmp_path):
    path = write(tmp_path / "r.json", make_results(schema="1.3"))
    assert run(capsys, "check", str(path), "--min", "gamma_r=0.5")[0] == 0


def test_argparse_errors_exit_2(capsys, results):
    assert main(["compare", results, results, "--max-drop", "lots"]) == 2


def test_policy_file_and_command_line_rules_combine(capsys, tmp_path, results):
    policy = tmp_path / "policy.yaml"
    policy.write_text("min:\n  gamma_r: 0.8\n  noise:gamma_r: 0.6\nmax:\n  clean.t2v.MdR: 5\n")
    code, out, _ = run(capsys, "check", results, "--policy", str(policy))
    assert code == 0 and "3 checks: 3 passed" in out
    code, out, _ = run(capsys, "check", results, "--policy", str(policy), "--min", "motion_blur:gamma_r=0.95")
    assert code == 1 and "4 checks: 3 passed, 1 failed" in out
    policy.write_text("min:\n  noise:gamma_rr: 0.6\n")
    code, _, err = run(capsys, "check", results, "--policy", str(policy))
    assert code == 2 and "unknown metric 'gamma_rr'" in err
    code, _, err = run(capsys, "check", results, "--policy", str(tmp_path / "nope.toml"))
    assert code == 2 and "cannot read policy file" in err


def test_junit_has_one_testcase_per_rule(capsys, tmp_path, results):
    junit = tmp_path / "out" / "check.xml"
    rules = ["gamma_r=0.8", "noise:gamma_r=0.9", "gaussian_noise@5:gamma_r=0.5", "clean.t2v.R@5=0.4"]
    argv = ["check", results, "--junit", str(junit)]
    for rule in rules:
        argv += ["--min", rule]
    assert run(capsys, *argv)[0] == 1
    root = ET.parse(junit).getroot()
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["gamma_r >= 0.8", "noise:gamma_r >= 0.9",
                                               "gaussian_noise@5:gamma_r >= 0.5", "clean.t2v.R@5 >= 0.4"]
    assert root.get("tests") == "4" and root.get("failures") == "1"
    failed = [c for c in cases if c.find("failure") is not None]
    assert [c.get("name") for c in failed] == ["noise:gamma_r >= 0.9"]
    assert "0.845 is not >= 0.9" in failed[0].find("failure").get("message")


def test_compare_exit_codes_markdown_and_junit(capsys, tmp_path, results):
    doc = make_results(ci=0.02)
    for run_ in doc["runs"]:
        if run_["perturbation"] == "shot_noise":
            run_["gamma_r"] -= 0.2
            run_["ci"]["gamma_r"] = [x - 0.2 for x in run_["ci"]["gamma_r"]]
    doc["summary"] = summary_of(doc["runs"])
    worse = str(write(tmp_path / "worse.json", doc))

    code, out, _ = run(capsys, "compare", results, results, "--significance", "0.05")
    assert code == 0 and "15 checks: 15 passed, 0 failed" in out      # γr and t2v.R@5 by default

    md, junit = tmp_path / "summary.md", tmp_path / "compare.xml"
    code, out, _ = run(capsys, "compare", results, worse, "--max-drop", "0.02", "--significance", "0.05",
                       "--metric", "gamma_r", "--metric", "t2v.R@5", "--markdown", str(md),
                       "--junit", str(junit))
    assert code == 1 and "regression" in out
    assert "- `perturbation shot_noise: gamma_r drop <= 0.02` — dropped by 0.200" in md.read_text()
    cases = ET.parse(junit).getroot().findall("./testsuite/testcase")
    assert len(cases) == 7 + 8          # γr: 4 perturbations + 3 categories; R@5: clean + 4 + 3
    assert [c.get("name") for c in cases if c.find("failure") is not None] == [
        "perturbation shot_noise: gamma_r drop <= 0.02", "category noise: gamma_r drop <= 0.02"]

    code, _, err = run(capsys, "compare", results, worse, "--metric", "R5")
    assert code == 2 and "unknown metric 'R5'" in err
    code, _, err = run(capsys, "compare", results, str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read results file" in err


def test_compare_reads_defaults_from_the_policy(capsys, tmp_path, results):
    policy = tmp_path / "policy.toml"
    policy.write_text('[compare]\nmax_drop = 0.5\nmetrics = ["gamma_a"]\n')
    lower = {k: [a - 0.1 for a in v] for k, v in DEFAULT_PERTURBED.items()}
    worse = write(tmp_path / "worse.json", make_results(lower))      # γa drops by 0.1
    code, out, _ = run(capsys, "compare", results, str(worse), "--policy", str(policy))
    assert code == 0 and "gamma_a" in out and "gamma_r" not in out
    assert run(capsys, "compare", results, str(worse), "--policy", str(policy), "--max-drop", "0")[0] == 1


def _gaussian_runs(doc: dict) -> list[dict]:
    return [r for r in doc["runs"] if r["perturbation"] == "gaussian_noise"]


def _set(path: list, value):
    """A change to a fresh results document: set the value at ``path`` (keys and indices)."""
    def change(doc: dict) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _drop(key: str):
    def change(doc: dict) -> None:
        del doc[key]
    return change


def _all_runs(key: str, value):
    def change(doc: dict) -> None:
        for run_ in _gaussian_runs(doc):
            run_[key] = value
    return change


MALFORMED = {   # a change to a schema-valid document → the words of the refusal
    "wrong type": (_set(["clean", "t2v", "R@5"], "high"), "clean.t2v.R@5 must be a number or null; got 'high'"),
    "summary entry": (_set(["summary", "perturbation", "gaussian_noise"], 3),
                      "summary.perturbation.gaussian_noise: expected an object; got int"),
    "summary section": (_set(["summary", "category"], []), "summary.category: expected an object; got list"),
    "summary value": (_set(["summary", "modality", "video", "gamma_r_std"], "low"),
                      "summary.modality.video.gamma_r_std must be a number or null; got 'low'"),
    "run gamma": (_set(["runs", 0, "gamma_r"], "0.9"), "runs[0].gamma_r must be a number or null; got '0.9'"),
    "run severity": (_set(["runs", 0, "severity"], "3"), "runs[0].severity must be an integer or null"),
    "run scores": (_set(["runs", 1, "v2t"], None), "runs[1].v2t: expected an object; got NoneType"),
    "run name": (_set(["runs", 0, "perturbation"], None), "runs[0].perturbation must be a non-empty string"),
    "interval": (_set(["runs", 2, "ci", "gamma_r"], [0.5]), "runs[2].ci.gamma_r must be a list [lo, hi]"),
    "NaN runs": (_all_runs("gamma_r", float("nan")), "runs[0].gamma_r is nan; an undefined value must be null"),
    "runs disagree with summary": (
        _all_runs("gamma_r", None),
        "summary.perturbation.gaussian_noise.gamma_r_mean is 0.826667 but its 5 run(s) give no defined value; "
        "the summary and the runs disagree"),
    "summary disagrees with runs": (
        _set(["summary", "category", "noise", "gamma_a_mean"], 0.5),
        "summary.category.noise.gamma_a_mean is 0.5 but its 10 run(s) give a mean of 0.907"),
    "unknown metric": (_set(["metric"], "t2v.MdR"),
                       "metric must be t2v. or v2t. followed by one of R@K, mAP, nDCG@K; got 't2v.MdR'"),
    "metric not measured": (_set(["metric"], "v2t.mAP"), "metric is 'v2t.mAP' but clean.v2t.mAP is missing"),
    "ties": (_set(["ties"], "random"), "ties must be one of pessimistic, optimistic; got 'random'"),
    "dataset": (_set(["dataset"], "msrvtt"), "dataset: expected an object with name, n_items; got str"),
    "bootstrap level": (_set(["bootstrap"], {"n": 10, "seed": 0, "level": 95}),
                        "bootstrap.level must be in (0, 1); got 95"),
    # the optional fields that check, compare and report read (perturb.results.FIELDS)
    "flags null": (_set(["flags"], None), "flags: expected a list (each an object with kind, message); "
                                          "got NoneType"),
    "flags not a list": (_set(["flags"], {"kind": "chance", "message": "m"}),
                         "flags: expected a list (each an object with kind, message); got dict"),
    "flag without kind": (_set(["flags"], [{"message": "m"}]), "flags[0]: missing key(s) 'kind'"),
    "flag without message": (_set(["flags"], [{"kind": "chance"}]), "flags[0]: missing key(s) 'message'"),
    "flag message not text": (_set(["flags"], [{"kind": "chance", "message": 3}]),
                              "flags[0].message must be a string; got 3"),
    "skipped as strings": (_set(["skipped"], ["Negation"]),
                           "skipped[0]: expected an object with modality, perturbation, reason; got str"),
    "skipped without reason": (_set(["skipped"], [{"modality": "text", "perturbation": "Negation",
                                                   "severity": None}]), "skipped[0]: missing key(s) 'reason'"),
    "suites not an object": (_set(["suites"], ["kinetics-c"]), "suites: expected an object (each value an "
                             "object with operations, members, configurations, category); got list"),
    "suite entry": (_set(["suites"], {"kinetics-c": {"operations": []}}),
                    "suites.kinetics-c: missing key(s) 'members', 'configurations', 'category'"),
    "chance not an object": (_set(["chance"], 0.01), "chance: expected an object (each value an object "
                             "(each value a finite number or null)); got float"),
    "chance direction": (_set(["chance"], {"t2v": [0.01]}),
                         "chance.t2v: expected an object (each value a finite number or null); got list"),
    "model without id": (_set(["model"], {"kind": "dual"}), "model: missing key(s) 'id'"),
    "no model": (_drop("model"), "missing key(s) 'model'"),
    "bootstrap without level": (_set(["bootstrap"], {"n": 10, "seed": 0}), "bootstrap: missing key(s) 'level'"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_wrong_values_in_a_schema_valid_file_are_bad_input_naming_the_field(capsys, tmp_path, case):
    from perturb.gate import GateInputError, validate

    change, words = MALFORMED[case]
    doc = make_results(ci=0.02)
    change(doc)
    with pytest.raises(GateInputError, match="^<results>: " + re.escape(words)):
        validate(json.loads(json.dumps(doc)))
    path = str(write(tmp_path / "bad.json", doc))
    good = str(write(tmp_path / "good.json", make_results(ci=0.02)))
    report = str(tmp_path / "report")
    for argv in (["check", path, "--min", "gamma_r=0.5"], ["compare", good, path], ["compare", path, good],
                 ["report", good, path, "--out", report]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "", (argv, err)
        assert err.startswith(f"perturb {argv[0]}: error: {path}: {words}")
        assert "Traceback" not in err and err.count("\n") == 1


def test_compare_refuses_mixed_tie_conventions_and_reads_old_files_as_pessimistic(capsys, tmp_path, results):
    optimistic = str(write(tmp_path / "optimistic.json", make_results(ci=0.02, ties="optimistic")))
    code, out, err = run(capsys, "compare", results, optimistic)
    assert code == 2 and out == ""
    assert "the files rank ties differently (baseline pessimistic, current optimistic)" in err
    explicit = str(write(tmp_path / "pessimistic.json", make_results(ci=0.02, ties="pessimistic")))
    assert run(capsys, "compare", results, explicit)[0] == 0
    assert run(capsys, "compare", optimistic, optimistic)[0] == 0


def test_compare_fails_an_equal_drop_on_clean_and_perturbed_data_unless_narrowed(capsys, tmp_path, results):
    lower = {k: [round(a * 0.9, 6) for a in v] for k, v in DEFAULT_PERTURBED.items()}
    worse = str(write(tmp_path / "worse.json", make_results(lower, clean=0.54, ci=0.02)))
    code, out, _ = run(capsys, "compare", results, worse)
    assert code == 1 and "15 checks: 7 passed, 8 failed" in out
    code, out, _ = run(capsys, "compare", results, worse, "--metric", "gamma_r")
    assert code == 0 and "7 checks: 7 passed, 0 failed" in out


def test_table_cells_and_notes_print_brackets_as_written():
    """An install hint such as pip install -e '.[text]' in a check's detail is text, not a style tag."""
    from rich.console import Console

    from perturb.gate.outcome import FAIL, Outcome
    from perturb.gate.tables import print_table

    console = Console(width=200, record=True)
    detail = "requested but did not run: install with pip install -e '.[text]' ([bold] is literal)"
    print_table([Outcome("text NoVB ran", FAIL, {"rule": "text NoVB ran", "detail": detail})], "t",
                notes=["a [red]note[/red] with '.[text]'"], console=console)
    out = console.export_text()
    assert detail in out
    assert "note: a [red]note[/red] with '.[text]'" in out
