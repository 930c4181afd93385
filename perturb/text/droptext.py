"""Text perturbations: droptext."""
