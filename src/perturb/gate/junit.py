"""JUnit XML: one test case per rule or comparison, so CI systems list each verdict."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

from .outcome import FAIL, PASS, Outcome


def junit_xml(outcomes: Sequence[Outcome], suite: str) -> str:
    """A <testsuites> document with one <testsuite> named ``suite``."""
    failures = sum(o.status == FAIL for o in outcomes)
    skipped = sum(o.status not in (PASS, FAIL) for o in outcomes)
    root = ET.Element("testsuites", name="perturb", tests=str(len(outcomes)),
                      failures=str(failures), errors="0", skipped=str(skipped))
    node = ET.SubElement(root, "testsuite", name=suite, tests=str(len(outcomes)),
                         failures=str(failures), errors="0", skipped=str(skipped))
    for o in outcomes:
        case = ET.SubElement(node, "testcase", name=o.name, classname=suite)
        details = "\n".join(f"{k}: {v}" for k, v in o.cells.items() if v)
        if o.status == FAIL:
            ET.SubElement(case, "failure", message=o.message or "failed", type="RobustnessRegression"
                          ).text = details
        elif o.status != PASS:
            ET.SubElement(case, "skipped", message=o.message)
        else:
            ET.SubElement(case, "system-out").text = details
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(outcomes: Sequence[Outcome], suite: str, path: str | Path) -> None:
    """Write :func:`junit_xml` to ``path`` (parent folders created)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(junit_xml(outcomes, suite), encoding="utf-8")
