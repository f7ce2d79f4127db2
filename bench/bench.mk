## Benchmarks (not part of make check): make bench prints ratios against bare
## python and strace; make bench-results also rewrites bench/RESULTS.md.
EXTRA_DIST += bench/run.py bench/RESULTS.md

# python-sb measuring its own decisions (SPEC §9 per-decision latency): the
# same program built with SB_BENCH_LATENCY, only for make bench, never
# installed.  bench/run.py reads the histogram it writes.
EXTRA_PROGRAMS = bench/python-sb-latency
bench_python_sb_latency_SOURCES = $(python_sb_SOURCES) $(src_libsbsup_a_SOURCES)
bench_python_sb_latency_CPPFLAGS = $(AM_CPPFLAGS) -DSB_BENCH_LATENCY
bench_python_sb_latency_LDADD = tracer/libsbattach.a src/libsblearn.a tracer/libsbtracer.a \
	src/libsbcli.a src/libsbpolicy.a src/libsbutil.a $(SB_RUN_LIBS)
CLEANFILES += bench/python-sb-latency

# The kernel's floor: a supervisor that CONTINUEs at once (what a trapped
# call costs before python-sb decides anything).
EXTRA_PROGRAMS += bench/unotify-floor
bench_unotify_floor_SOURCES = bench/unotify-floor.c
bench_unotify_floor_LDADD = -lpthread
CLEANFILES += bench/unotify-floor

.PHONY: bench bench-results
bench: python-sb bench/python-sb-latency bench/unotify-floor
	$(PYTHON) $(srcdir)/bench/run.py --python-sb $(abs_top_builddir)/python-sb \
		--latency-sb $(abs_top_builddir)/bench/python-sb-latency
bench-results: python-sb bench/python-sb-latency bench/unotify-floor
	$(PYTHON) $(srcdir)/bench/run.py --python-sb $(abs_top_builddir)/python-sb \
		--latency-sb $(abs_top_builddir)/bench/python-sb-latency --write-results
EXTRA_DIST += bench/eval_bench.py
