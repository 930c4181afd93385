"""Visual perturbations: camera."""
