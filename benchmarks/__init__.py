"""Speed benchmarks of perturb against its peers: ``python -m benchmarks`` (see README.md).

They measure this checkout: its ``src/`` goes first on the import path, so they run on a machine
where perturb is not installed (the GPU machines) and never time another copy of the package."""
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")
if SRC not in sys.path:
    sys.path.insert(0, SRC)
