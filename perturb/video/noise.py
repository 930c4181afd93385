"""Visual perturbations: noise."""
