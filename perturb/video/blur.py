"""Visual perturbations: blur."""
