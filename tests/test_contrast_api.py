"""The contrast API's calling convention, input checks, picklable results and module layering."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CONTRAST = Path(__file__).resolve().parents[1] / "perturb" / "contrast"


def _imported_modules(path: Path) -> set[str]:
    """Sibling modules a contrast module imports (``from . import x``, ``from .x import y``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module} if node.module else {a.name for a in node.names}
    return found


def test_lm_does_not_import_verb():
    assert "verb" not in _imported_modules(CONTRAST / "lm.py")
    assert "lm" not in _imported_modules(CONTRAST / "verb_tokens.py")


@pytest.mark.parametrize("first", ["perturb.contrast.lm", "perturb.contrast.verb",
                                   "perturb.contrast.verb_tokens"])
def test_each_verb_module_imports_first_in_a_fresh_process(first):
    code = (f"import {first}, perturb.contrast.lm as lm, perturb.contrast.verb as verb; "
            "assert callable(lm.candidates) and callable(verb.candidates)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=CONTRAST.parents[1], timeout=300)
    assert done.returncode == 0, done.stderr
