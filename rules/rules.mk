## Data, not code: templates, base profiles, syscall groups, registries.
