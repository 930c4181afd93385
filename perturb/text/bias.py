"""Text perturbations: bias."""
