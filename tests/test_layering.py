"""The package's layering: nothing imports the CLI, the ground floor imports nothing above it,
and importing the gate stays light (no OpenCV, no PyAV) while the registry still fills on use."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "perturb"
ENTRY_POINTS = {"perturb.cli", "perturb.__main__"}    # the command itself and ``python -m perturb``
GROUND_FLOOR = {"perturb.errors", "perturb.fileio", "perturb.selection", "perturb.shapes", "perturb.version"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports, relative imports resolved (``from . import x`` gives both)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_sources_are_found():
    names = {module_name(p) for p in SOURCES}
    assert {"perturb.cli", "perturb.video.cli", "perturb.gate.scope", *GROUND_FLOOR} <= names
    assert "perturb.cli" in imported_modules(PACKAGE / "__main__.py")       # the scan sees imports


def test_no_library_module_imports_the_cli():
    offenders = sorted(module_name(p) for p in SOURCES if module_name(p) not in ENTRY_POINTS
                       and "perturb.cli" in imported_modules(p))
    assert offenders == []


def test_ground_floor_imports_nothing_above_it():
    for path in SOURCES:
        name = module_name(path)
        if name in GROUND_FLOOR:
            ours = {m for m in imported_modules(path) if m == "perturb" or m.startswith("perturb.")}
            assert ours <= GROUND_FLOOR, f"{name} imports {sorted(ours - GROUND_FLOOR)}"


BENCH = PACKAGE / "bench"
BENCH_ROOMS = sorted(p.parent for p in BENCH.glob("*/__init__.py"))


def may_import(room: Path) -> set[str]:
    """The benchmark rooms a room's docstring says it may import (its ``May import:`` line)."""
    doc = ast.get_docstring(ast.parse((room / "__init__.py").read_text(encoding="utf-8"))) or ""
    lines = [line for line in doc.splitlines() if line.startswith("May import:")]
    assert len(lines) == 1, f"{room.name}'s docstring has no single 'May import:' line"
    said = lines[0].removeprefix("May import:").strip().rstrip(".")
    return set() if said.startswith("nothing") else {name.strip() for name in said.split(",")}


def test_every_benchmark_room_says_what_it_may_import():
    rooms = {room.name for room in BENCH_ROOMS}
    assert rooms == {"adapters", "scoring", "pipeline", "distributed", "reporting"}
    for room in BENCH_ROOMS:
        assert may_import(room) <= rooms - {room.name}, room.name


@pytest.mark.parametrize("room", BENCH_ROOMS, ids=lambda room: room.name)
def test_a_benchmark_room_imports_only_the_rooms_it_says(room):
    allowed = {f"perturb.bench.{name}" for name in may_import(room) | {room.name}}
    for path in sorted(room.rglob("*.py")):
        for target in imported_modules(path):
            if target.startswith("perturb.bench"):
                assert any(target == a or target.startswith(a + ".") for a in allowed), \
                    f"{module_name(path)} imports {target}; {room.name} may import {sorted(may_import(room))}"


def test_no_module_imports_another_modules_private_names():
    private = sorted(f"{module_name(path)}: {node.module} {alias.name}" for path in SOURCES
                     for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("perturb"))
                     for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__"))
    assert private == []


def test_the_benchmark_top_level_holds_at_most_ten_modules():
    assert len(list(BENCH.glob("*.py"))) <= 10


def test_no_module_is_over_350_lines():
    long = {module_name(p): n for p in SOURCES if (n := len(p.read_text(encoding="utf-8").splitlines())) > 350}
    assert long == {}


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_importing_the_gate_loads_neither_opencv_nor_pyav():
    assert run_python("import sys, perturb.gate; print('cv2' in sys.modules, 'av' in sys.modules)") \
        == ["False", "False"]


GATE_MODULES = {"perturb", "perturb.catalogue", "perturb.errors", "perturb.fileio", "perturb.names",
                "perturb.registry", "perturb.selection", "perturb.version", "perturb.metric_names",
                "perturb.results", "perturb.result_tasks", "perturb.shapes", "perturb.gate", "perturb.gate.check", "perturb.gate.compare",
                "perturb.gate.outcome", "perturb.gate.rules", "perturb.gate.scope"}


def test_importing_the_gate_loads_the_results_contract_and_nothing_of_the_benchmark():
    code = ("import sys, perturb.gate; print(' '.join(sorted(m for m in sys.modules if m == 'perturb' "
            "or m.startswith('perturb.')))); print(*(m in sys.modules for m in ('numpy', 'torch', 'cv2', 'av')))")
    *loaded, numpy, torch, cv2, av = run_python(code)
    assert set(loaded) == GATE_MODULES
    assert (numpy, torch, cv2, av) == ("False", "False", "False", "False")


@pytest.mark.parametrize("lookup, expected", [
    ("len(perturb.list())", "83"),
    ("perturb.REGISTRY.get('motion blur').name", "motion_blur"),
    ("len(perturb.REGISTRY.select('text'))", "35"),
    ("len(perturb.REGISTRY.select('video'))", "48"),
])
def test_registry_fills_on_first_lookup(lookup, expected):
    assert run_python(f"import perturb; print({lookup})") == [expected]


def test_text_lookups_leave_the_video_side_unloaded():
    code = ("import sys, perturb; perturb.text.apply('a dog runs fast', 'Typos', seed=1); "
            "print(len(perturb.REGISTRY.select('text')), 'cv2' in sys.modules, 'av' in sys.modules)")
    assert run_python(code) == ["35", "False", "False"]


def test_listing_order_does_not_depend_on_what_was_imported_first():
    code = "import {first}, perturb; print(perturb.list()[0]['name'], perturb.list()[-1]['name'])"
    assert run_python(code.format(first="perturb.video")) == run_python(code.format(first="perturb.text"))


def test_the_video_package_does_not_import_the_image_package():
    """perturb.image stands above perturb.video: an image is a one-frame clip, never the reverse."""
    below = [p for p in SOURCES if module_name(p).startswith("perturb.video")
             or module_name(p) in GROUND_FLOOR | {"perturb.registry"}]
    offenders = sorted(module_name(p) for p in below
                       if any(m == "perturb.image" or m.startswith("perturb.image.") for m in imported_modules(p)))
    assert below and offenders == []


LMMS = PACKAGE / "lmms"


def test_the_lmms_bridge_says_what_it_may_import_and_imports_only_the_scoring_room():
    """The bridge scores with the benchmark's own γ, intervals and suite figures, and nothing else of it."""
    assert may_import(LMMS) == {"scoring"}
    allowed = "perturb.bench.scoring"
    offenders = sorted(f"{module_name(p)}: {m}" for p in LMMS.rglob("*.py") for m in imported_modules(p)
                       if m.startswith("perturb.bench") and not (m == allowed or m.startswith(allowed + ".")))
    assert offenders == []


def test_no_module_imports_lmms_eval():
    """The bridge reads lmms-eval's files; perturb never imports the harness itself."""
    offenders = sorted(module_name(p) for p in SOURCES
                       if any(m == "lmms_eval" or m.startswith("lmms_eval.") for m in imported_modules(p)))
    assert offenders == []
