"""Rule syntax and policy files (YAML and TOML) for ``perturb check``."""
from __future__ import annotations

import pytest

from perturb.errors import GateInputError
from perturb.gate.rules import Rule, load_policy, parse_rule


@pytest.mark.parametrize("spec, expected", [
    ("gamma_r=0.8", Rule("gamma_r", 0.8)),
    ("noise:gamma_r=0.6", Rule("gamma_r", 0.6, scope="noise")),
    ("gaussian_noise:gamma_a=0.7", Rule("gamma_a", 0.7, scope="gaussian_noise")),
    ("gaussian_noise@5:gamma_a=0.5", Rule("gamma_a", 0.5, scope="gaussian_noise", severity=5)),
    ("@3:gamma_r=0.7", Rule("gamma_r", 0.7, severity=3)),
    ("clean.t2v.R@5=0.4", Rule("clean.t2v.R@5", 0.4)),
    (" video : t2v.R@1 = 0.2 ", Rule("t2v.R@1", 0.2, scope="video")),
])
def test_parse_rule(spec, expected):
    assert parse_rule(spec) == expected


def test_rule_text_and_bounds():
    assert parse_rule("noise@2:gamma_r=0.6").text == "noise@2:gamma_r >= 0.6"
    upper = parse_rule("clean.t2v.MdR=5", "max")
    assert upper.text == "clean.t2v.MdR <= 5"
    assert upper.holds(5) and not upper.holds(5.5)
    assert parse_rule("gamma_r=0.8").holds(0.8) and not parse_rule("gamma_r=0.8").holds(0.79)


@pytest.mark.parametrize("spec, words", [
    ("gamma_r", "expected [SCOPE[@SEVERITY]:]METRIC=THRESHOLD"),
    ("gamma_r=", "expected"),
    ("a:b:gamma_r=0.3", "cannot parse"),
    ("gamma_r=high", "must be a number"),
    ("gamma_r=nan", "finite"),
    ("noise@9:gamma_r=0.5", "severity in 'noise@9:gamma_r=0.5' must be one of 1, 2, 3, 4, 5"),
    ("noise@x:gamma_r=0.5", "severity"),
])
def test_bad_rule_syntax(spec, words):
    with pytest.raises(GateInputError) as info:
        parse_rule(spec)
    assert words in str(info.value)


YAML_POLICY = """\
# robustness policy
min:
  clean.t2v.R@5: 0.4
  gamma_r: 0.8
  noise:gamma_r: 0.6
  gaussian_noise:gamma_a: 0.7
  "@5:gamma_r": 0.5
max:
  clean.t2v.MdR: 5
compare:
  max_drop: 0.03
  significance: 0.05
  metrics: [gamma_r, t2v.R@5]
"""

TOML_POLICY = """\
[min]
"clean.t2v.R@5" = 0.4
gamma_r = 0.8
"noise:gamma_r" = 0.6
"gaussian_noise:gamma_a" = 0.7
"@5:gamma_r" = 0.5

[max]
"clean.t2v.MdR" = 5

[compare]
max_drop = 0.03
significance = 0.05
metrics = ["gamma_r", "t2v.R@5"]
"""


@pytest.mark.parametrize("name, text", [("policy.yaml", YAML_POLICY), ("policy.toml", TOML_POLICY)])
def test_policy_files_yaml_and_toml_agree(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    policy = load_policy(path)
    assert [r.text for r in policy.rules] == [
        "clean.t2v.R@5 >= 0.4", "gamma_r >= 0.8", "noise:gamma_r >= 0.6",
        "gaussian_noise:gamma_a >= 0.7", "@5:gamma_r >= 0.5", "clean.t2v.MdR <= 5"]
    assert policy.compare == {"max_drop": 0.03, "significance": 0.05, "metrics": ["gamma_r", "t2v.R@5"]}


@pytest.mark.parametrize("text, words", [
    ("min: [gamma_r]\n", "'min' must map rule targets to thresholds"),
    ("minimum:\n  gamma_r: 0.8\n", "unknown key(s) 'minimum'; expected min, max, compare"),
    ("compare:\n  maxdrop: 0.1\n", "unknown key(s) 'maxdrop'; expected max_drop, significance, metrics"),
    ("min:\n  gamma_r: lots\n", "must be a number"),
    ("min: {gamma_r: 0.8\n", "not valid YAML"),
    ("- 1\n- 2\n", "expected a mapping"),
])
def test_bad_policy(tmp_path, text, words):
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(GateInputError) as info:
        load_policy(path)
    assert words in str(info.value)


def test_unreadable_policy(tmp_path):
    with pytest.raises(GateInputError, match="cannot read policy file"):
        load_policy(tmp_path / "absent.yaml")
    bad = tmp_path / "p.toml"
    bad.write_text("[min\n")
    with pytest.raises(GateInputError, match="not valid TOML"):
        load_policy(bad)
