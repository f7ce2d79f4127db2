## Benchmarks (not part of make check): make bench prints ratios against bare
## python and strace; make bench-results also rewrites bench/RESULTS.md.
EXTRA_DIST += bench/run.py bench/RESULTS.md
.PHONY: bench bench-results
bench: python-sb
	$(PYTHON) $(srcdir)/bench/run.py --python-sb $(abs_top_builddir)/python-sb
bench-results: python-sb
	$(PYTHON) $(srcdir)/bench/run.py --python-sb $(abs_top_builddir)/python-sb --write-results
EXTRA_DIST += bench/eval_bench.py
