"""Dataset readers and the -P dataset builder."""
