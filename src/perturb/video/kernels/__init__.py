"""The code that renders the visual perturbations: numpy and torch kernels and their helpers."""
