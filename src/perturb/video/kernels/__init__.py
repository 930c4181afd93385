"""The code that renders the visual perturbations: numpy and torch kernels, each registered under
its op's name where it is defined (:mod:`.twins`), and their helpers."""
