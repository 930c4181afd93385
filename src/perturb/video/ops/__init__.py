"""The visual perturbations, one module per category: each registers its ops on import."""
