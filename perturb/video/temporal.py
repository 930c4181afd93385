"""Visual perturbations: temporal."""
