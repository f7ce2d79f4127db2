## The pysandboxes Python package (agent, eval guard, partial mode).

# The package, importable by applications (partial mode) and loaded by the
# agent's bootstrap from $(pythondir) when python-sb runs installed.
pysandboxesdir = $(pythondir)/pysandboxes
pysandboxes_PYTHON = \
	python/pysandboxes/__init__.py \
	python/pysandboxes/_agent.py \
	python/pysandboxes/_bootstrap.py \
	python/pysandboxes/_importstat.py \
	python/pysandboxes/_proto.py \
	python/pysandboxes/_worker.py \
	python/pysandboxes/env.py \
	python/pysandboxes/exceptions.py \
	python/pysandboxes/partial.py \
	python/pysandboxes/unpickle.py

pysandboxesguardsdir = $(pythondir)/pysandboxes/guards
pysandboxesguards_PYTHON = \
	python/pysandboxes/guards/__init__.py \
	python/pysandboxes/guards/api.py \
	python/pysandboxes/guards/dns.py \
	python/pysandboxes/guards/imports.py \
	python/pysandboxes/guards/refusals.py

pysandboxesevalguarddir = $(pythondir)/pysandboxes/evalguard
pysandboxesevalguard_PYTHON = \
	python/pysandboxes/evalguard/__init__.py \
	python/pysandboxes/evalguard/_base.py \
	python/pysandboxes/evalguard/_exc.py \
	python/pysandboxes/evalguard/checker.py \
	python/pysandboxes/evalguard/config.py \
	python/pysandboxes/evalguard/engine.py \
	python/pysandboxes/evalguard/hooks.py \
	python/pysandboxes/evalguard/learn.py \
	python/pysandboxes/evalguard/profiles.py \
	python/pysandboxes/evalguard/rewrite.py \
	python/pysandboxes/evalguard/rules.py \
	python/pysandboxes/evalguard/runner.py \
	python/pysandboxes/evalguard/runtime.py \
	python/pysandboxes/evalguard/sizes.py

# The private sitecustomize python-sb puts first on PYTHONPATH (src/agent.c).
sbbootstrapdir = $(pkgdatadir)/bootstrap
sbbootstrap_PYTHON = python/bootstrap/sitecustomize.py

# Unit tests of the package (stdlib unittest), run by one driver for every
# interpreter at hand; integration tests on the real python-sb.
AGENT_UNIT_TESTS = \
	python/tests/support.py \
	python/tests/test_api.py \
	python/tests/test_bootstrap.py \
	python/tests/test_env_dns.py \
	python/tests/test_exceptions.py \
	python/tests/test_imports.py \
	python/tests/test_importstat.py \
	python/tests/test_partial.py \
	python/tests/test_refusals.py \
	python/tests/test_registry.py \
	python/tests/test_unpickle.py \
	python/tests/test_wire.py \
	python/tests/test_evalguard_corpus.py \
	python/tests/test_evalguard_learn.py \
	python/tests/test_evalguard_rules.py \
	python/tests/test_evalguard_runtime.py \
	python/tests/test_evalguard_semantics.py \
	python/tests/evalguard_corpus/__init__.py \
	python/tests/evalguard_corpus/attacks.py \
	python/tests/evalguard_corpus/support.py
AGENT_INTEGRATION_TESTS = \
	tests/integration/agent-unittests.py \
	tests/integration/agent-acceptance.py \
	tests/integration/agent-env.py \
	tests/integration/agent-importstat.py \
	tests/integration/agent-partial.py \
	tests/integration/agent-bytecode.py \
	tests/integration/eval-guard.py \
	tests/integration/eval-attacks.py \
	tests/integration/eval-learn.py
TESTS += $(AGENT_INTEGRATION_TESTS)
EXTRA_DIST += $(AGENT_UNIT_TESTS) $(AGENT_INTEGRATION_TESTS) tests/integration/agentlib.py

# The sandbox never lets the program write the agent's __pycache__ (its
# directories are exposed read-only), so without bytecode every run would
# compile the agent again (15-40 ms).  python-sb compiles it before the
# program for an interpreter that lacks it (src/agent_bytecode.c) when the
# user may write the tree; the build does it for the interpreters python-sb
# is likely to run, so that the first run does not pay for it either.  A
# read-only source tree only costs that start-up time, hence the `|| :`.
all-local: agent-bytecode
.PHONY: agent-bytecode
agent-bytecode:
	@for py in $(PYTHON) /usr/bin/python3; do \
	  if [ -x "$$py" ] || command -v "$$py" >/dev/null 2>&1; then \
	    "$$py" -m compileall -q $(srcdir)/python/pysandboxes $(srcdir)/python/bootstrap >/dev/null 2>&1 || :; \
	  fi; \
	done
clean-local: agent-bytecode-clean
.PHONY: agent-bytecode-clean
agent-bytecode-clean:
	-test "$(srcdir)" != "." || find python -name __pycache__ -type d -prune -exec rm -rf {} +
