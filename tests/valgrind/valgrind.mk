## make check-valgrind (issue 10): integration tests of the supervisor,
## learning, network, agent, report and attach areas with PYTHON_SB set to
## python-sb under valgrind's memcheck (tests/valgrind/python-sb-vg).  A test
## fails when it fails, and when any valgrind log of its runs shows a memcheck
## error or a definitely/indirectly lost block (tests/valgrind/run-test,
## scan-logs).  Results go to tests/valgrind/out/<test>.log|.trs, valgrind's
## logs to tests/valgrind/out/<test>.vg/vg.PID.log.  Needs valgrind (Debian
## package valgrind: also its headers, for the shim).
##
## Which tests are not in the set, and why; what valgrind 3.19 cannot do and
## how sb-vg-shim.so makes up for it: tests/valgrind/README.md.
SB_VG_TESTS = \
	sup-basic.py sup-bypass.py sup-files.py sup-process.py sup-rlimit.py \
	learn-endings.py learn-lock.py learn-new-file.py learn-relearn.py learn-roundtrip.py learn-diff.py \
	eval-learn.py \
	net-attacks.py net-inet.py net-unix.py \
	agent-acceptance.py agent-env.py agent-partial.py \
	attr-agent.py attr-eval.py attr-learn.py attr-location.py \
	attach-errors.py attach-fork.py attach-learn.py attach-learn-imports.py attach-policy.py \
	attach-threads.py \
	report-vg.py
SB_VG_JOBS = 2
SB_VG_OUTDIR = tests/valgrind/out

EXTRA_DIST += tests/valgrind/valgrind.mk tests/valgrind/sb-vg-shim.c tests/valgrind/python-sb-vg \
	tests/valgrind/run-test tests/valgrind/scan-logs tests/valgrind/python-sb.supp \
	tests/valgrind/vg-canary.c tests/valgrind/README.md tests/valgrind/report-vg.py

# Built only for check-valgrind: it needs <valgrind/valgrind.h>.
tests/valgrind/sb-vg-shim.so: tests/valgrind/sb-vg-shim.c
	@$(MKDIR_P) tests/valgrind
	$(AM_V_CC)$(CC) -std=gnu11 $(WARN_CFLAGS) -O2 -fPIC -shared -o $@ \
		$(srcdir)/tests/valgrind/sb-vg-shim.c -ldl
# Deliberately wrong (a leak or an uninitialised read): see its source.
tests/valgrind/vg-canary: tests/valgrind/vg-canary.c
	@$(MKDIR_P) tests/valgrind
	$(AM_V_CC)$(CC) -std=gnu11 -O0 -g -o $@ $(srcdir)/tests/valgrind/vg-canary.c
CLEANFILES += tests/valgrind/sb-vg-shim.so tests/valgrind/vg-canary

.PHONY: check-valgrind
check-valgrind: all $(check_PROGRAMS) $(check_SCRIPTS) tests/valgrind/sb-vg-shim.so tests/valgrind/vg-canary
	@command -v valgrind >/dev/null || { echo "check-valgrind: valgrind is not installed"; exit 1; }
	@rm -rf $(SB_VG_OUTDIR) && $(MKDIR_P) $(SB_VG_OUTDIR)
	@$(AM_TESTS_ENVIRONMENT) \
	SB_VG_PROGRAM='$(abs_top_builddir)/tests/valgrind/vg-canary'; export SB_VG_PROGRAM; \
	for what in leak uninit; do \
		SB_VG_LOGDIR='$(abs_top_builddir)/$(SB_VG_OUTDIR)/vg-canary-'$$what; export SB_VG_LOGDIR; \
		$(SHELL) $(top_srcdir)/tests/valgrind/python-sb-vg $$what >/dev/null || \
			{ echo "check-valgrind: vg-canary $$what did not run under valgrind"; exit 1; }; \
		if $(SHELL) $(top_srcdir)/tests/valgrind/scan-logs "$$SB_VG_LOGDIR" >/dev/null; then \
			echo "check-valgrind: the harness missed vg-canary's $$what: the set could not fail"; exit 1; \
		fi; \
	done; \
	echo "check-valgrind: the harness sees vg-canary's leak and its uninitialised read"
	@$(AM_TESTS_ENVIRONMENT) \
	SB_VG_OUT='$(abs_top_builddir)/$(SB_VG_OUTDIR)'; export SB_VG_OUT; \
	printf '%s\n' $(SB_VG_TESTS) | xargs -P $(SB_VG_JOBS) -I '{}' \
		$(SHELL) $(top_srcdir)/build-aux/test-driver --test-name 'valgrind/{}' \
		--log-file '$(SB_VG_OUTDIR)/{}.log' --trs-file '$(SB_VG_OUTDIR)/{}.trs' \
		--color-tests no --enable-hard-errors yes --expect-failure no -- \
		$(SHELL) $(top_srcdir)/tests/valgrind/run-test '{}'; \
	cat $(SB_VG_OUTDIR)/*.trs | awk -v want=$(words $(SB_VG_TESTS)) '/^:test-result: PASS/ {p++} \
		/^:test-result: (FAIL|XPASS|ERROR)/ {f++} /^:test-result: SKIP/ {s++} \
		END {printf "check-valgrind: %d passed, %d failed, %d skipped\n", p, f, s; \
		     if (p + f + s != want) printf "check-valgrind: %d results for %d tests\n", p + f + s, want; \
		     exit f > 0 || p + f + s != want}' || \
	{ for t in $(SB_VG_OUTDIR)/*.trs; do \
		grep -Eq '^:test-result: (FAIL|XPASS|ERROR)' "$$t" && cat "$${t%.trs}.log"; done; exit 1; }

clean-local: clean-valgrind
.PHONY: clean-valgrind
clean-valgrind:
	rm -rf $(SB_VG_OUTDIR)
