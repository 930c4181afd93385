"""Text perturbations: changechar."""
