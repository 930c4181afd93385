"""Visual perturbations of category texture: ImageNet-C-bar's procedural fields laid over the picture.

Registrations only; the kernels are in :mod:`..kernels`, registered there under each op's name."""
from __future__ import annotations
