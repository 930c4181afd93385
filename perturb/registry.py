"""One registry for every perturbation, visual and text.

Each entry (a :class:`Spec`) says what a perturbation is: name, aliases, modality, category,
per-severity parameters, whether it is temporal, random or needs a model, the paper's values
and our deviations. ``perturb.list()``, ``perturb describe``, the CLI and the generated
catalogue all read from here, so they cannot drift.
"""
from __future__ import annotations

import difflib
import numbers
import importlib
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .errors import UnknownPerturbationError
from .selection import SEVERITY_LEVELS as SEVERITIES  # noqa: F401  (the levels live in selection)

# The modules whose import registers each modality's perturbations, in listing order. They are
# imported on the registry's first lookup, so importing perturb (or perturb.gate) stays light.
PROVIDERS = {"text": "perturb.text", "video": "perturb.video"}


def normalize(name: str) -> str:
    """Case, space, dash and underscore insensitive key: 'Motion Blur' == 'motion_blur'."""
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


@dataclass(frozen=True)
class Spec:
    """Everything the library knows about one perturbation."""

    name: str
    modality: str                      # "video" or "text"
    category: str
    fn: Callable[..., Any]             # functional kernel
    summary: str = ""
    aliases: tuple[str, ...] = ()
    severities: Mapping[int, Mapping[str, Any]] | None = None   # our params per severity
    paper: Mapping[int, Mapping[str, Any]] | None = None        # the paper's, where they differ
    deviation: str = ""                # why ours differs from the paper / reference code
    default_severity: int | None = 3
    temporal: bool = False
    random: bool = True
    needs_model: bool = False
    needs_parse: bool = False          # text: runs on a spaCy Doc
    resources: tuple[str, ...] = ()    # text: NLP resources used
    extra: Mapping[str, Any] = field(default_factory=dict)
    # video: how parameters are drawn and frames rendered, per backend (perturb.video.render.Renderer)
    render: Any = None
    version: int = 1                   # implementation version: bump when the kernel's output changes (cache key)

    @property
    def has_severity(self) -> bool:
        return self.severities is not None

    def params(self, severity: int | None) -> dict[str, Any]:
        """The parameters at a severity (validated); {} for perturbations without severities."""
        if self.severities is None:
            if severity is not None:
                raise ValueError(f"{self.name} has no severity levels; got severity={severity!r}")
            return {}
        if severity is None:
            severity = self.default_severity
        # numpy integers count as ints; bools do not, though Python makes them ints
        valid = isinstance(severity, numbers.Integral) and not isinstance(severity, bool)
        if not valid or int(severity) not in self.severities:
            raise ValueError(f"severity must be an int in {_levels(self.severities)} for "
                             f"{self.name}; got {severity!r}")
        return dict(self.severities[int(severity)])


def _levels(severities: Mapping[int, Any]) -> str:
    """The valid severities as written in messages: '1..5' when contiguous, else '1, 3, 5'."""
    keys = sorted(severities)
    if keys == list(range(keys[0], keys[-1] + 1)):
        return f"{keys[0]}..{keys[-1]}"
    return ", ".join(map(str, keys))


class Registry:
    """Name → Spec, with aliases and 'did you mean' suggestions."""

    def __init__(self, providers: Mapping[str, str] | None = None) -> None:
        self._specs: dict[str, Spec] = {}
        self._keys: dict[str, str] = {}     # normalized name or alias -> canonical name
        self._providers = dict(providers or {})   # modality -> module not imported yet
        self._order = {m: i for i, m in enumerate(self._providers)}
        self._loading = threading.RLock()

    def _load(self, modality: str | None = None) -> None:
        """Import the provider modules of ``modality`` (None: all) once; they register on import."""
        if not self._providers:
            return
        with self._loading:     # other threads wait until the registry is whole
            for m in [m for m in self._providers if modality is None or m == modality]:
                module = self._providers.get(m)
                if module is not None:
                    importlib.import_module(module)
                    self._providers.pop(m, None)

    def _ordered(self) -> list[Spec]:
        """Every spec: modalities in provider order, registration order within each."""
        return sorted(self._specs.values(), key=lambda s: self._order.get(s.modality, len(self._order)))

    def register(self, spec: Spec) -> Spec:
        for key in (spec.name, *spec.aliases):
            k = normalize(key)
            owner = self._keys.get(k)
            if owner is not None and owner != spec.name:
                raise ValueError(f"name {key!r} of {spec.name} is already taken by {owner}")
            self._keys[k] = spec.name
        self._specs[spec.name] = spec
        return spec

    def get(self, name: str, modality: str | None = None) -> Spec:
        if isinstance(name, Spec):
            return name
        if not isinstance(name, str):
            raise ValueError(f"a perturbation name must be a str; got {type(name).__name__}")
        self._load(modality)
        canonical = self._keys.get(normalize(name))
        spec = self._specs.get(canonical) if canonical else None
        if spec is None or (modality is not None and spec.modality != modality):
            pool = [s for s in self._specs.values() if modality is None or s.modality == modality]
            raise UnknownPerturbationError(self._unknown_message(name, pool, modality))
        return spec

    @staticmethod
    def _unknown_message(name: str, pool: list[Spec], modality: str | None) -> str:
        keys = {normalize(k): s.name for s in pool for k in (s.name, *s.aliases)}
        close = difflib.get_close_matches(normalize(name), list(keys), n=5, cutoff=0.5)
        suggestions = list(dict.fromkeys(keys[k] for k in close))
        kind = f"{modality} perturbation" if modality else "perturbation"
        msg = f"unknown {kind} {name!r}"
        if suggestions:
            msg += f"; did you mean {', '.join(repr(s) for s in suggestions)}?"
        msg += f" Expected one of: {', '.join(sorted(s.name for s in pool))}"
        return msg

    def __contains__(self, name: str) -> bool:
        self._load()
        return normalize(name) in self._keys

    def __iter__(self):
        self._load()
        return iter(self._ordered())

    def __len__(self) -> int:
        self._load()
        return len(self._specs)

    def select(self, modality: str | None = None, category: str | None = None,
               names: Iterable[str] | None = None) -> list[Spec]:
        """Specs filtered by modality and/or category, in listing order (see :meth:`_ordered`)."""
        self._load(modality)
        out = [s for s in self._ordered()
               if (modality is None or s.modality == modality)
               and (category is None or normalize(s.category) == normalize(category))]
        if names is not None:
            wanted = {self.get(n, modality).name for n in names}
            out = [s for s in out if s.name in wanted]
        return out

    def categories(self, modality: str | None = None) -> list[str]:
        return list(dict.fromkeys(s.category for s in self.select(modality)))

    def resolve(self, selection: str | Iterable[str], modality: str) -> list[Spec]:
        """Expand 'all', 'none', category names and perturbation names (comma-separated ok)."""
        items = selection.split(",") if isinstance(selection, str) else list(selection)
        items = [i.strip() for i in items if i and i.strip()]
        if not items or [normalize(i) for i in items] == ["none"]:
            return []
        cats = {normalize(c): c for c in self.categories(modality)}
        chosen: dict[str, Spec] = {}
        for item in items:
            key = normalize(item)
            if key == "all":
                chosen.update((s.name, s) for s in self.select(modality))
            elif key in cats:
                chosen.update((s.name, s) for s in self.select(modality, cats[key]))
            else:
                spec = self.get(item, modality)
                chosen[spec.name] = spec
        order = [s.name for s in self.select(modality)]
        return sorted(chosen.values(), key=lambda s: order.index(s.name))


REGISTRY = Registry(PROVIDERS)
register = REGISTRY.register
get = REGISTRY.get
