"""Text perturbations: style."""
