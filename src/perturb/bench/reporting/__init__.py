"""What a run shows: the Markdown and HTML report of a results document, and its plots.

May import: scoring.
"""
