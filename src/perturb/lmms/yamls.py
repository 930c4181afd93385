"""Reading lmms-eval task YAMLs without lmms-eval: a loader that keeps ``!function`` values as data,
``include:`` chains resolved relative to each YAML, and the lookup of a task by name in the installed
task folders and ``--include_path`` folders."""
from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml

from ..errors import UsageError


@dataclass(frozen=True)
class FunctionRef:
    """A ``!function module.fn`` value: the dotted name and the folder of the YAML that wrote it
    (lmms-eval imports ``module`` from ``<folder>/module.py``)."""
    name: str
    folder: str

    @property
    def module_file(self) -> Path:
        """The file lmms-eval imports the function from."""
        module, _, _ = self.name.rpartition(".")
        return Path(self.folder, *module.split(".")).with_suffix(".py")

    @property
    def function(self) -> str:
        return self.name.rpartition(".")[2]


def _loader(folder: str) -> type[yaml.SafeLoader]:
    class Loader(yaml.SafeLoader):
        """SafeLoader that keeps ``!function`` (and any other local tag) as data."""

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> FunctionRef:
        return FunctionRef(str(loader.construct_scalar(node)), folder)

    def other(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        return loader.construct_scalar(node) if isinstance(node, yaml.ScalarNode) else None

    Loader.add_constructor("!function", function)
    Loader.add_multi_constructor("!", other)
    return Loader


def read_yaml(path: str | os.PathLike) -> dict[str, Any]:
    """One YAML file as a mapping (its own keys only, ``include:`` left in place)."""
    path = Path(path)
    try:
        body = yaml.load(path.read_text(encoding="utf-8"), Loader=_loader(str(path.parent)))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UsageError(f"{path}: not a readable task YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(body, dict):
        raise UsageError(f"{path}: a task YAML must be a mapping, got {type(body).__name__}")
    return body


def load_config(path: str | os.PathLike, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A task's whole configuration as lmms-eval builds it: each ``include:`` (a path, absolute or
    relative to the including YAML's folder; a list applies its last entry first) under the YAML's own keys."""
    path = Path(path).resolve()
    if path in _seen:
        raise UsageError(f"{path}: include: loops back to itself")
    own = read_yaml(path)
    includes = own.pop("include", None)
    config: dict[str, Any] = {}
    for name in reversed([includes] if isinstance(includes, str) else list(includes or [])):
        target = Path(name) if Path(name).is_file() else path.parent / name
        if not target.is_file():
            raise UsageError(f"{path}: include: {name} is not a file")
        config.update(load_config(target, (*_seen, path)))
    config.update(own)
    return resolve_data_files(config, path.parent)


LOCAL_BUILDERS = frozenset({"csv", "json", "parquet", "text", "pandas", "arrow"})


def _anchored(value: Any, folder: Path) -> Any:
    if isinstance(value, str):
        if value and "://" not in value and not os.path.isabs(value) and (folder / value).is_file():
            return str(folder / value)
        return value
    if isinstance(value, dict):
        return {k: _anchored(v, folder) for k, v in value.items()}
    if isinstance(value, list):
        return [_anchored(v, folder) for v in value]
    return value


def resolve_data_files(config: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A local-data task's relative ``dataset_kwargs.data_files`` anchored at the YAML's folder, where
    the file exists there (as lmms-eval 0.7 resolves them, level by level through the includes)."""
    kwargs = config.get("dataset_kwargs")
    if config.get("dataset_path") in LOCAL_BUILDERS and isinstance(kwargs, dict) and "data_files" in kwargs:
        config["dataset_kwargs"] = {**kwargs, "data_files": _anchored(kwargs["data_files"], folder)}
    return config


def installed_tasks_dir() -> Path | None:
    """lmms-eval's installed task folder, found without importing lmms_eval (None when not installed)."""
    try:
        spec = importlib.util.find_spec("lmms_eval")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "tasks").is_dir():
            return Path(location) / "tasks"
    return None


def find_task(name: str, roots: Iterable[str | os.PathLike]) -> Path:
    """The YAML that defines task ``name`` (``task: name``), searched in ``roots`` in order (the
    ``--include-path`` folders first, then the installed tasks); an unknown name is one line."""
    pattern = re.compile(rf"^task:\s*['\"]?{re.escape(name)}['\"]?\s*(#.*)?$", re.MULTILINE)
    searched = []
    for root in roots:
        searched.append(str(root))
        for path in sorted(Path(root).rglob("*.yaml")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if pattern.search(text) and read_yaml(path).get("task") == name:
                return path.resolve()
    where = ", ".join(searched) if searched else "no task folder (lmms-eval is not installed; pass --lmms-tasks DIR)"
    raise UsageError(f"unknown lmms-eval task {name!r} (searched {where})")
