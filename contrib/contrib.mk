## Samples, demo, CI recipes, shell completion.
