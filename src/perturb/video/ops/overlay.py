"""Visual perturbations of category overlay: ImageNet-C-bar's sparkles, cut-outs and refracting water in front of the picture.

Registrations only; the kernels are in :mod:`..kernels`, registered there under each op's name."""
from __future__ import annotations
