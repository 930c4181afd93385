"""``perturb text``: one caption, stdin lines, the Table-1-like overview, and usage errors."""
from __future__ import annotations

import io

import pytest

from perturb.cli import main
from perturb.registry import REGISTRY

CAPTION = "a little girl does gymnastics"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["text", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_the_perturbed_caption_alone(capsys):
    assert run(capsys, CAPTION, "--name", "NoVB") == (0, "a little girl [UNK] gymnastics\n", "")
    assert run(capsys, CAPTION, "--name", "drop_first_last", "--seed", "3")[1] == \
        "[UNK] little girl does [UNK]\n"


def test_seed_and_severity_are_used(capsys):
    a = run(capsys, CAPTION, "--name", "Typos", "--seed", "1")[1]
    assert a == run(capsys, CAPTION, "--name", "Typos", "--seed", "1")[1]
    assert run(capsys, CAPTION, "--name", "Typos")[1] == run(capsys, CAPTION, "--name", "Typos",
                                                              "--seed", "0")[1]         # default seed 0
    long = " ".join(["people", "dancing", "singing", "playing", "guitar"] * 4)
    low = run(capsys, long, "--name", "Keyboard", "--severity", "1")[1]
    high = run(capsys, long, "--name", "Keyboard", "--severity", "5")[1]
    diff = lambda out: sum(a != b for a, b in zip(out.split(), long.split()))  # noqa: E731
    assert diff(low) < diff(high)


def test_not_applicable_is_reported_on_stderr(capsys):
    code, out, err = run(capsys, "a red car", "--name", "NoVB")
    assert (code, out) == (0, "a red car\n") and "did not apply" in err
    assert run(capsys, "a red car", "--name", "NoVB", "--strict")[0] == 1


def test_reads_captions_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("a dog runs fast\n\na cat sleeps\n"))
    code, out, _ = run(capsys, "-", "--name", "DropLast")
    assert code == 0 and out == "a dog runs [UNK]\n\na cat [UNK]\n"


def test_all_prints_every_text_perturbation(capsys):
    code, out, _ = run(capsys, "--all", CAPTION)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["category", "perturbation", "applied", "perturbed"]
    rows = {line.split()[1]: line for line in lines[1:]}
    assert set(rows) == {s.name for s in REGISTRY.select("text")}
    assert rows["NoVB"].endswith("a little girl [UNK] gymnastics")
    assert rows["DropFirstLast"].split()[0] == "Positional"
    for spec in REGISTRY.select("text"):
        if spec.needs_model:
            assert rows[spec.name].endswith("(needs a model: --model NAME_OR_PATH)")


@pytest.mark.parametrize("argv, message", [
    (["x", "--name", "Typoz"], "did you mean 'Typos'"),
    (["x", "--name", "Typos", "--severity", "9"], "severity"),
    (["x", "--name", "NoVB", "--severity", "2"], "no severity levels"),
    (["x", "--name", "Typos", "--seed", "-1"], "--seed"),
    (["-", "--all"], "one caption"),
])
def test_usage_errors_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err


def test_name_or_all_is_required(capsys):
    assert main(["text", CAPTION]) == 2
