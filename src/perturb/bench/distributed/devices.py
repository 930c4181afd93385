"""The device options (``--device``, ``--perturb-device``, ``cuda:N``) checked against the GPUs of
the place the work will run (this machine, a cluster, or a ``--gpus N`` preview), before any work:
one check, :func:`check_devices`, for the dry run, the command line and ``benchmark()`` alike."""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import PlacementError

CLUSTER_ENGINES = ("dask", "ray")      # their replicas serve the GPU their worker owns: no cuda:N


@dataclass(frozen=True)
class Gpus:
    """The GPUs an engine can place replicas on, and where they were counted (named in plans and
    refusals): ``where`` shows them, as ``counted`` says; ``advice`` is how to get some there."""

    ids: tuple[str, ...]
    where: str = "this machine"
    counted: str = "CUDA_VISIBLE_DEVICES / torch"
    advice: str = ""

    def usable(self) -> str:
        """``"usable here (CUDA_VISIBLE_DEVICES / torch)"``, or where else they are."""
        return f"usable {'here' if self.where == 'this machine' else 'on ' + self.where} ({self.counted})"


def _index(option: str, value: str | None) -> int | None:
    if value is None or not value.startswith("cuda:"):
        return None
    number = value[5:]
    if not number.isdigit():
        raise PlacementError(f"{option} {value}: expected cuda:N with N a GPU number")
    return int(number)


@dataclass(frozen=True)
class GpuRequest:
    """What ``--device`` and ``--perturb-device`` ask of the GPUs."""

    model: bool                 # the model runs on a GPU (cuda, cuda:N; auto where GPUs exist)
    perturb: bool               # perturbations run on a GPU (--perturb-device cuda[:N])
    auto: bool                  # --device auto: GPUs when the engine has them, else the CPU
    index: int | None = None    # cuda:N named one GPU
    device: str = "auto"
    perturb_device: str | None = None

    @property
    def any(self) -> bool:
        return self.model or self.perturb

    @property
    def needs_count(self) -> bool:
        """Whether checking these options needs the GPUs counted: one asks for CUDA outright or names
        cuda:N (``auto`` alone refuses nothing). Counting imports torch, which a CPU run never needs."""
        return bool(self.asked()) or self.index is not None

    def asked(self) -> list[tuple[str, str]]:
        """(option, value) of each option that asks for CUDA outright (``auto`` never does)."""
        return ([("--device", self.device)] if self.model and not self.auto else []) + \
            ([("--perturb-device", str(self.perturb_device))] if self.perturb else [])


def gpu_request(device: str | None, perturb_device: str | None) -> GpuRequest:
    """Parse the two device options (``auto`` counts as a model GPU request, resolved by the engine);
    a PlacementError in one line for a device that is none of those the options take."""
    device = device or "auto"
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise PlacementError(f"--device must be auto, cpu or cuda[:N]; got {device!r}")
    if perturb_device is not None and perturb_device not in ("cpu", "cuda") and not perturb_device.startswith("cuda:"):
        raise PlacementError(f"--perturb-device must be cpu or cuda[:N] (torch there), or left out (numpy on "
                             f"the CPU); got {perturb_device!r}")
    indices = {i for i in (_index("--device", device), _index("--perturb-device", perturb_device)) if i is not None}
    if len(indices) > 1:
        raise PlacementError(f"--device {device} and --perturb-device {perturb_device} name different GPUs; "
                             "a replica perturbs on the GPU its model uses")
    return GpuRequest(model=device != "cpu", perturb=str(perturb_device or "").startswith("cuda"),
                      auto=device == "auto", index=indices.pop() if indices else None, device=device,
                      perturb_device=perturb_device)


def check_devices(request: GpuRequest, engine: str, gpus: Gpus | None) -> bool:
    """Whether the work goes on GPUs: where an option asks for them (``--device auto``: where ``gpus``
    has some). A PlacementError in one line, before any work, when an option asks for CUDA and
    ``gpus`` holds none, or ``cuda:N`` names a GPU it lacks or picks one on a cluster ``engine``
    (``"in-process"``, ``"loky"``, ``"dask"``, ``"ray"``). ``gpus`` None: not counted yet (a cluster
    not reached), so only what needs no count is checked."""
    if request.index is not None and engine in CLUSTER_ENGINES:
        raise PlacementError(f"--backend {engine} cannot pick cuda:{request.index}: each {engine} replica "
                             "serves the GPU its worker owns; pass --device cuda to use every GPU")
    if gpus is None:
        return request.any
    wanted = request.perturb or (request.model and (bool(gpus.ids) or not request.auto))
    if wanted and not gpus.ids:
        asked = request.asked()
        options = " and ".join(f"{option} {value}" for option, value in asked)
        fix = " and ".join(f"{option} cpu" for option, _ in asked)
        advice = f", or {gpus.advice}" if gpus.advice else ""
        raise PlacementError(f"{options} {'ask' if len(asked) > 1 else 'asks'} for CUDA, but {gpus.where} shows "
                             f"no GPU ({gpus.counted}); pass {fix}{advice}")
    if wanted and request.index is not None and request.index >= len(gpus.ids):
        option = next(f"{o} {v}" for o, v in request.asked() if v.startswith("cuda:"))
        raise PlacementError(f"{option}: {gpus.where} shows {len(gpus.ids)} GPU(s) ({gpus.counted}); "
                             f"expected cuda:0 .. cuda:{len(gpus.ids) - 1}")
    return wanted
