"""Text perturbations: addtext."""
