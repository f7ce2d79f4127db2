"""The agent's guards: imports, the python-api registry, DNS names, refusals."""
