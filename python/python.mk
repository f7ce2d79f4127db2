## The pysandboxes Python package (agent, eval guard, partial mode).
