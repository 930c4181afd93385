"""What runs: the jobs of a run, the sources that render their clips and captions, the encoder that
embeds and ranks them, reading and filling the embedding cache
(:mod:`perturb.bench.adapters.cache`).

May import: adapters, scoring.
"""
