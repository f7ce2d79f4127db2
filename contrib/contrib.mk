## Samples, demo, CI recipes, shell completion.
EXTRA_DIST += contrib/stdlib-diff/run.py
EXTRA_DIST += contrib/demo/app.py contrib/demo/run-demo.sh contrib/demo/data/notes.txt contrib/demo/data/todo.txt
