## Fuzzing (issue 10): libFuzzer targets for every decoder that reads hostile
## input; fuzz/README.md says what each one feeds, what it asserts and how to
## run it.  Include this fragment last: it reads the other fragments' source
## lists.
##
## `make fuzz` builds every target with clang as fuzz/<target>-clang, in any
## tree and whatever CC was configured: the library sources each target needs
## are compiled again with clang, coverage and ASan+UBSan into fuzz/obj/ and
## archived as fuzz/lib*-clang.a, so the code under test is instrumented, not
## only the harness.  `make fuzz-run FUZZ_TARGET=fuzz_sockaddr FUZZ_SECONDS=600`
## runs one target (new inputs go to fuzz/work/<target>/, crashes to
## fuzz/work/<target>-crash-*); `make -j2 fuzz-smoke` builds all of them and
## runs each for FUZZ_SMOKE_SECONDS on its committed corpus (CI).
## `./configure --enable-fuzz CC=clang` builds the same targets as ordinary
## programs of the tree (fuzz/<target>), whole tree instrumented.

FUZZ_TARGETS = fuzz_policy fuzz_sockaddr fuzz_pathres fuzz_resolve fuzz_tracer_decode fuzz_frames \
	fuzz_elf fuzz_learn_merge fuzz_agent_msg fuzz_event_json

# Seeds (committed, small): fuzz/corpus for the policy loader (its historical
# name), fuzz/corpus-<name> for the others; dictionaries fuzz/<target>.dict.
fuzz_corpus = $(if $(filter fuzz_policy,$(1)),fuzz/corpus,fuzz/corpus-$(patsubst fuzz_%,%,$(1)))
FUZZ_CORPORA = fuzz/corpus fuzz/corpus-sockaddr fuzz/corpus-pathres fuzz/corpus-resolve \
	fuzz/corpus-tracer_decode fuzz/corpus-frames fuzz/corpus-elf fuzz/corpus-learn_merge \
	fuzz/corpus-agent_msg fuzz/corpus-event_json
FUZZ_DICTS = fuzz/fuzz_policy.dict fuzz/fuzz_pathres.dict fuzz/fuzz_resolve.dict \
	fuzz/fuzz_learn_merge.dict fuzz/fuzz_agent_msg.dict fuzz/fuzz_event_json.dict
EXTRA_DIST += fuzz/fuzz.mk fuzz/README.md fuzz/fuzz_input.h fuzz/fuzz_pyblobs.h fuzz/fuzz_learnenv.h \
	fuzz/gen-seeds.py $(FUZZ_TARGETS:%=fuzz/%.c) $(FUZZ_CORPORA) $(FUZZ_DICTS)

# ---- what each target links (objects or archives, in link order) ----------------
FUZZ_A_sup = fuzz/libsbsup-clang.a
FUZZ_A_learn = fuzz/libsblearn-clang.a
FUZZ_A_tracer = fuzz/libsbtracer-clang.a
FUZZ_A_policy = fuzz/libsbpolicy-clang.a
FUZZ_A_util = fuzz/libsbutil-clang.a
FUZZ_LIBS_fuzz_policy = $(FUZZ_A_policy) $(FUZZ_A_util)
FUZZ_LIBS_fuzz_sockaddr = fuzz/obj/src/sockaddr.o $(FUZZ_A_policy) $(FUZZ_A_util)
FUZZ_LIBS_fuzz_pathres = $(FUZZ_A_policy) $(FUZZ_A_util)
# The resolver and the /proc readers only: the rest of the supervisor stays out
# (the target provides the two accessors of its private state it needs).
FUZZ_LIBS_fuzz_resolve = fuzz/obj/src/pathres.o fuzz/obj/src/procmem.o $(FUZZ_A_policy) $(FUZZ_A_util)
FUZZ_LIBS_fuzz_tracer_decode = $(FUZZ_A_tracer)
FUZZ_LIBS_fuzz_frames = $(FUZZ_A_tracer)
FUZZ_LIBS_fuzz_elf = $(FUZZ_A_tracer)
FUZZ_LIBS_fuzz_learn_merge = $(FUZZ_A_learn) $(FUZZ_A_policy) $(FUZZ_A_util)
FUZZ_LIBS_fuzz_agent_msg = fuzz/obj/src/agent.o $(FUZZ_A_learn) $(FUZZ_A_policy) $(FUZZ_A_util)
FUZZ_LIBS_fuzz_event_json = $(FUZZ_A_learn) $(FUZZ_A_policy) $(FUZZ_A_util)

# ---- `make fuzz`: clang builds beside the configured tree ------------------------
FUZZ_CC = clang
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_COMPILE = $(FUZZ_CC) -std=gnu11 -g -O1 -pthread -Wall -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	$(DEFS) $(DEFAULT_INCLUDES) -I$(top_srcdir)/fuzz $(AM_CPPFLAGS) $(CPPFLAGS) \
	$(SECCOMP_CFLAGS) $(CJSON_CFLAGS) $(PCRE2_CFLAGS) $(LIBUNWIND_CFLAGS)
FUZZ_BINS = $(FUZZ_TARGETS:%=fuzz/%-clang)
# No dependency tracking for these objects: any header change rebuilds them all.
FUZZ_HDRS = $(wildcard $(top_srcdir)/src/*.h $(top_srcdir)/tracer/*.h $(top_srcdir)/fuzz/*.h)
fuzz_objs = $(patsubst %.c,fuzz/obj/%.o,$(filter %.c,$(1)))

.PHONY: fuzz fuzz-check-cc fuzz-run fuzz-smoke fuzz-clean
fuzz: $(FUZZ_BINS)

fuzz-check-cc:
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz needs clang (apt-get install clang), or FUZZ_CC=..." >&2; exit 1; }

fuzz/obj/%.o: $(top_srcdir)/%.c $(FUZZ_HDRS) $(BUILT_SOURCES) | fuzz-check-cc
	@$(MKDIR_P) $(@D)
	$(AM_V_CC)$(FUZZ_COMPILE) -c $< -o $@

fuzz/libsbutil-clang.a: $(call fuzz_objs,$(src_libsbutil_a_SOURCES))
fuzz/libsbpolicy-clang.a: $(call fuzz_objs,$(src_libsbpolicy_a_SOURCES))
fuzz/libsbtracer-clang.a: $(call fuzz_objs,$(tracer_libsbtracer_a_SOURCES))
fuzz/libsblearn-clang.a: $(call fuzz_objs,$(src_libsblearn_a_SOURCES))
fuzz/libsbsup-clang.a: $(call fuzz_objs,$(src_libsbsup_a_SOURCES))
fuzz/lib%-clang.a:
	$(AM_V_AR)rm -f $@ && $(AR) cr $@ $^ && $(RANLIB) $@

.SECONDEXPANSION:
$(FUZZ_BINS): fuzz/%-clang: fuzz/obj/fuzz/%.o $$(FUZZ_LIBS_$$*)
	$(AM_V_CCLD)$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -pthread $^ $(SB_EXT_LIBS) -o $@

FUZZ_TARGET = fuzz_policy
FUZZ_SECONDS = 60
FUZZ_SMOKE_SECONDS = 15
# Per-input limits: a hang or a memory blow-up is a finding too.
FUZZ_OPTS = -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1
fuzz_dict = $(if $(wildcard $(top_srcdir)/fuzz/$(1).dict),-dict=$(top_srcdir)/fuzz/$(1).dict)

fuzz-run: fuzz/$(FUZZ_TARGET)-clang
	@$(MKDIR_P) fuzz/work/$(FUZZ_TARGET)
	./fuzz/$(FUZZ_TARGET)-clang $(FUZZ_OPTS) $(call fuzz_dict,$(FUZZ_TARGET)) \
	  -artifact_prefix=fuzz/work/$(FUZZ_TARGET)- -max_total_time=$(FUZZ_SECONDS) \
	  fuzz/work/$(FUZZ_TARGET) $(top_srcdir)/$(call fuzz_corpus,$(FUZZ_TARGET))

# CI: each target replays its committed corpus, then mutates it for a fixed time
# in a scratch directory; any crash, leak, hang or broken assertion fails.
FUZZ_SMOKES = $(FUZZ_TARGETS:%=fuzz-smoke-%)
.PHONY: $(FUZZ_SMOKES)
fuzz-smoke: $(FUZZ_SMOKES)
	@echo "fuzz-smoke: $(words $(FUZZ_TARGETS)) targets ran $(FUZZ_SMOKE_SECONDS)s each without a finding"
$(FUZZ_SMOKES): fuzz-smoke-%: fuzz/%-clang
	@rm -rf fuzz/work/smoke-$* fuzz/work/smoke-$*-* && $(MKDIR_P) fuzz/work/smoke-$*
	@echo "  FUZZ     $* ($(FUZZ_SMOKE_SECONDS)s)"
	@./fuzz/$*-clang $(FUZZ_OPTS) $(call fuzz_dict,$*) -artifact_prefix=fuzz/work/smoke-$*- \
	  -max_total_time=$(FUZZ_SMOKE_SECONDS) fuzz/work/smoke-$* $(top_srcdir)/$(call fuzz_corpus,$*) \
	  >fuzz/work/smoke-$*.log 2>&1 || { tail -n 60 fuzz/work/smoke-$*.log; \
	  echo "fuzz-smoke: $* failed; input fuzz/work/smoke-$*-*, log fuzz/work/smoke-$*.log" >&2; exit 1; }

fuzz-clean:
	rm -rf fuzz/obj fuzz/work fuzz/lib*-clang.a $(FUZZ_BINS)
CLEANFILES += $(FUZZ_BINS) fuzz/libsbutil-clang.a fuzz/libsbpolicy-clang.a fuzz/libsbtracer-clang.a \
	fuzz/libsblearn-clang.a fuzz/libsbsup-clang.a

# ---- `./configure --enable-fuzz CC=clang`: the targets as programs of the tree ---
if FUZZ
# The whole tree gets coverage and sanitizers, so the libraries are fuzzed
# instrumented; programs link the sanitizer runtimes.
AM_CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
AM_LDFLAGS += -fsanitize=address,undefined
FUZZ_PROGFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
noinst_PROGRAMS += fuzz/fuzz_policy fuzz/fuzz_sockaddr fuzz/fuzz_pathres fuzz/fuzz_resolve \
	fuzz/fuzz_tracer_decode fuzz/fuzz_frames fuzz/fuzz_elf fuzz/fuzz_learn_merge fuzz/fuzz_agent_msg \
	fuzz/fuzz_event_json
fuzz_fuzz_policy_SOURCES = fuzz/fuzz_policy.c
fuzz_fuzz_policy_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_policy_LDADD = src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
fuzz_fuzz_sockaddr_SOURCES = fuzz/fuzz_sockaddr.c src/sockaddr.c
fuzz_fuzz_sockaddr_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_sockaddr_LDADD = src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
fuzz_fuzz_pathres_SOURCES = fuzz/fuzz_pathres.c
fuzz_fuzz_pathres_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_pathres_LDADD = src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
fuzz_fuzz_resolve_SOURCES = fuzz/fuzz_resolve.c src/pathres.c src/procmem.c
fuzz_fuzz_resolve_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_resolve_LDADD = src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
fuzz_fuzz_tracer_decode_SOURCES = fuzz/fuzz_tracer_decode.c
fuzz_fuzz_tracer_decode_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_tracer_decode_LDADD = tracer/libsbtracer.a $(SB_EXT_LIBS)
fuzz_fuzz_frames_SOURCES = fuzz/fuzz_frames.c
fuzz_fuzz_frames_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_frames_LDADD = tracer/libsbtracer.a $(SB_EXT_LIBS)
fuzz_fuzz_elf_SOURCES = fuzz/fuzz_elf.c
fuzz_fuzz_elf_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_elf_LDADD = tracer/libsbtracer.a $(SB_EXT_LIBS)
fuzz_fuzz_learn_merge_SOURCES = fuzz/fuzz_learn_merge.c
fuzz_fuzz_learn_merge_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_learn_merge_LDADD = src/libsblearn.a src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
fuzz_fuzz_agent_msg_SOURCES = fuzz/fuzz_agent_msg.c src/agent.c
fuzz_fuzz_agent_msg_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_agent_msg_LDADD = src/libsblearn.a src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
fuzz_fuzz_event_json_SOURCES = fuzz/fuzz_event_json.c
fuzz_fuzz_event_json_LDFLAGS = $(FUZZ_PROGFLAGS)
fuzz_fuzz_event_json_LDADD = src/libsblearn.a src/libsbpolicy.a src/libsbutil.a $(SB_EXT_LIBS)
endif
