"""Text perturbations: positional."""
