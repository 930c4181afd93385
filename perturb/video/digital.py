"""Visual perturbations: digital."""
