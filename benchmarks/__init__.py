"""Speed benchmarks of perturb against its peers: ``python -m benchmarks`` (see README.md)."""
