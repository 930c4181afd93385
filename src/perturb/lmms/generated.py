"""The task code written into a variant folder: ``perturb_visual.py``, one ``doc_to_visual`` per
variant of a path-building task. It runs inside lmms-eval, so it imports only the standard library and
the original task's module (by path), never perturb; what each variant swaps is in ``perturb_visual.json``."""
from __future__ import annotations

import re

MODULE = "perturb_visual"

HEADER = '''"""doc_to_visual for perturb's corrupted task variants (written by perturb lmms-tasks {version}).

Each function calls the task's own doc_to_visual, then swaps each path under the original video folder
for the same video in the corrupted copy of its (op, severity), as listed in perturb_visual.json. A
path under that folder which the copy lacks is an error, never the clean video. Standard library only.
"""
import importlib.util
import inspect
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "perturb_visual.json"), encoding="utf-8") as _file:
    VARIANTS = json.load(_file)
_MODULES = {{}}


def original(variant):
    """The task's own doc_to_visual for a variant, imported from its file as lmms-eval imports it."""
    plan = VARIANTS[variant]
    path = plan["original"]
    if path not in _MODULES:
        name = "perturb_original_" + str(len(_MODULES))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _MODULES[path] = module
    return getattr(_MODULES[path], plan["function"])


def swapped(variant, path):
    """The copy's file for one path the original returned (other values pass through)."""
    plan = VARIANTS[variant]
    if not isinstance(path, str):
        return path
    relative = os.path.relpath(os.path.abspath(path), plan["videos"])
    if relative.startswith(os.pardir):
        return path
    found = plan["files"].get(relative.replace(os.sep, "/"))
    if found is None:
        raise FileNotFoundError(path + ": not in the corrupted copy of " + variant + " (perturb lmms-tasks "
                                "listed the videos under " + plan["videos"] + "; write the folder again)")
    return found


def visuals(variant, doc, lmms_eval_specific_kwargs):
    """Call the original as lmms-eval would, and swap its video paths."""
    fn = original(variant)
    if lmms_eval_specific_kwargs is not None and len(inspect.signature(fn).parameters) == 2:
        result = fn(doc, lmms_eval_specific_kwargs)
    else:
        result = fn(doc)
    if isinstance(result, (list, tuple)):
        return [swapped(variant, item) for item in result]
    return swapped(variant, result)
'''

FUNCTION = '''

def {name}(doc, lmms_eval_specific_kwargs=None):
    return visuals({variant!r}, doc, lmms_eval_specific_kwargs)
'''


def function_name(variant: str) -> str:
    """A variant's function name in the module (its task name, as a Python identifier)."""
    return re.sub(r"\W", "_", variant)


def module_text(variants: list[str], version: str) -> str:
    """The whole ``perturb_visual.py`` for these variant names."""
    return HEADER.format(version=version) + "".join(
        FUNCTION.format(name=function_name(v), variant=v) for v in variants)
