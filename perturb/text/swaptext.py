"""Text perturbations: swaptext."""
