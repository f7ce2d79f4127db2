## Attach mode: the ptrace backend.
