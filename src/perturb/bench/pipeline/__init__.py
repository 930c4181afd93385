"""What runs: the jobs of a run, the sources that render their clips and captions, the encoder that
embeds and ranks them, and the embedding cache it reads and fills.

May import: adapters, scoring.
"""
