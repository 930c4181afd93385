"""Where it runs: the devices a run may use, the placement of model replicas over GPUs and hosts,
the replicas' tasks, the shards of a run's work, and the dry run that prints the placement.

May import: adapters, pipeline, scoring.
"""
