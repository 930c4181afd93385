"""perturb.selection: the severity levels and the --severities syntax shared by build and bench."""
from __future__ import annotations

import argparse

import pytest

from perturb.registry import REGISTRY
from perturb.selection import SEVERITY_LEVELS, add_selection_arguments, parse_severities


def test_every_graded_perturbation_is_graded_at_the_shared_levels():
    graded = [spec for spec in REGISTRY if spec.has_severity]
    assert {spec.modality for spec in graded} == {"video", "text"}
    assert {spec.name: tuple(sorted(spec.severities)) for spec in graded} == \
        {spec.name: SEVERITY_LEVELS for spec in graded}
    assert all(spec.default_severity in SEVERITY_LEVELS for spec in graded)


@pytest.mark.parametrize("value, expected", [
    ("1-5", (1, 2, 3, 4, 5)), ("5,1, 3", (1, 3, 5)), ("2 - 3,3", (2, 3)), (4, (4,)), ([3, 1, 3], (1, 3)),
])
def test_parse_severities(value, expected):
    assert parse_severities(value) == expected


@pytest.mark.parametrize("value, message", [
    ("0-2", "severities must be in 1..5"), ("6", "severities must be in 1..5"), ("", "1..5"),
    ("a", "bad severity 'a'"), ("1-", "bad severity '1-'"), ([], "1..5"),
])
def test_parse_severities_refuses(value, message):
    with pytest.raises(ValueError, match=message):
        parse_severities(value)


def test_selection_arguments_defaults():
    parser = argparse.ArgumentParser()
    add_selection_arguments(parser)
    args = parser.parse_args([])
    assert (args.video_perturbations, args.severities, args.text_perturbations) == ("suite:msrvtt-p", "1-5", "all")
    assert parser.parse_args(["--severities", "2,4"]).severities == "2,4"
