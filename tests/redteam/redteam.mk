## Red-team catalogue (tests/redteam/catalogue.txt): attacks on python-sb, each
## run under os-sandbox=none and os-sandbox=auto (a representative subset also
## under unshare, bwrap and firejail) and proven by canaries, plus fault
## injection.  doc/security.md's table is generated from the catalogue.

# The native attacks, loaded into the sandboxed interpreter with ctypes.  A
# shared object built as a check program: no libtool in this tree.  Never
# built with sanitizers: it runs inside an uninstrumented interpreter.
check_PROGRAMS += tests/redteam/rt_native.so tests/redteam/rt_marker
tests_redteam_rt_native_so_SOURCES = tests/redteam/rt_native.h tests/redteam/rt_native.c \
	tests/redteam/rt_native_race.c tests/redteam/rt_native_net.c
tests_redteam_rt_native_so_CFLAGS = -std=gnu11 $(WARN_CFLAGS) -fPIC -fvisibility=hidden -pthread
tests_redteam_rt_native_so_LDFLAGS = -shared -pthread
tests_redteam_rt_native_so_LDADD =
# What the attacks try to start where the policy forbids it.
tests_redteam_rt_marker_SOURCES = tests/redteam/rt_marker.c
tests_redteam_rt_marker_CFLAGS = -std=gnu11 $(WARN_CFLAGS)
tests_redteam_rt_marker_LDFLAGS =
tests_redteam_rt_marker_LDADD =

# One runner per group; run-table checks doc/security.md against the catalogue.
REDTEAM_TESTS = tests/redteam/run-files.py tests/redteam/run-process.py \
	tests/redteam/run-kernel.py tests/redteam/run-net.py tests/redteam/run-python.py \
	tests/redteam/run-faults.py tests/redteam/run-table.py
TESTS += $(REDTEAM_TESTS)

REDTEAM_ATTACKS = \
	tests/redteam/attacks/rtlib.py tests/redteam/attacks/evilmod.py \
	tests/redteam/attacks/agent_forgery.py tests/redteam/attacks/attack_loop.py \
	tests/redteam/attacks/busy_threads.py tests/redteam/attacks/cext.py \
	tests/redteam/attacks/chroot_escape.py tests/redteam/attacks/clone_ns.py \
	tests/redteam/attacks/clone_parent.py tests/redteam/attacks/ctypes_libc.py \
	tests/redteam/attacks/dirfd_tricks.py tests/redteam/attacks/dns_exfil.py \
	tests/redteam/attacks/dotenv.py tests/redteam/attacks/env_enum.py \
	tests/redteam/attacks/eval_escape.py tests/redteam/attacks/exec_inplace.py tests/redteam/attacks/exist_oracle.py \
	tests/redteam/attacks/exec_memfd.py tests/redteam/attacks/exec_unlisted.py \
	tests/redteam/attacks/file_url.py tests/redteam/attacks/foreign_abi.py \
	tests/redteam/attacks/fork_bomb.py tests/redteam/attacks/fork_child.py \
	tests/redteam/attacks/fromfd.py tests/redteam/attacks/fsetown.py \
	tests/redteam/attacks/grandchild.py tests/redteam/attacks/hardlink_secret.py \
	tests/redteam/attacks/ifconfig.py tests/redteam/attacks/inherited_fd.py \
	tests/redteam/attacks/intranet.py tests/redteam/attacks/io_uring.py \
	tests/redteam/attacks/kill_group.py tests/redteam/attacks/kill_inherited.py \
	tests/redteam/attacks/kill_outside.py tests/redteam/attacks/kill_supervisor.py \
	tests/redteam/attacks/kill_thread_pair.py \
	tests/redteam/attacks/klogctl.py tests/redteam/attacks/list_secret_dir.py \
	tests/redteam/attacks/listen_inbound.py tests/redteam/attacks/many_processes.py \
	tests/redteam/attacks/memory_bomb.py tests/redteam/attacks/memread_fail.py \
	tests/redteam/attacks/meta_path_import.py tests/redteam/attacks/mknod_dev.py \
	tests/redteam/attacks/mount_dotdot.py tests/redteam/attacks/mount_family.py \
	tests/redteam/attacks/nested_sb.py tests/redteam/attacks/netlink.py \
	tests/redteam/attacks/nofile_addfd.py tests/redteam/attacks/nofile_both.py \
	tests/redteam/attacks/open_by_handle.py tests/redteam/attacks/openat2_resolve.py \
	tests/redteam/attacks/os_system.py tests/redteam/attacks/packet_sniff.py \
	tests/redteam/attacks/peek_parent.py tests/redteam/attacks/personality.py \
	tests/redteam/attacks/pickle_gadget.py tests/redteam/attacks/poke_sibling.py \
	tests/redteam/attacks/policy_rewrite.py tests/redteam/attacks/posix_spawn.py \
	tests/redteam/attacks/prlimit_outside.py tests/redteam/attacks/proc_pid_tricks.py \
	tests/redteam/attacks/pythonapi.py tests/redteam/attacks/race_chdir.py \
	tests/redteam/attacks/race_connect.py tests/redteam/attacks/race_exec.py \
	tests/redteam/attacks/race_move.py tests/redteam/attacks/race_opath.py \
	tests/redteam/attacks/race_open.py tests/redteam/attacks/race_proc.py \
	tests/redteam/attacks/race_symlink.py tests/redteam/attacks/race_write.py \
	tests/redteam/attacks/raw_inject.py \
	tests/redteam/attacks/read_parent_env.py tests/redteam/attacks/read_secret.py \
	tests/redteam/attacks/read_shadow.py tests/redteam/attacks/reload_originals.py \
	tests/redteam/attacks/rename_secret.py tests/redteam/attacks/rmtree_ro.py \
	tests/redteam/attacks/ro_metadata.py tests/redteam/attacks/sched_outside.py \
	tests/redteam/attacks/scm_rights.py tests/redteam/attacks/seccomp_nested.py \
	tests/redteam/attacks/setuid_priv.py tests/redteam/attacks/sigstorm.py \
	tests/redteam/attacks/sock_diag.py tests/redteam/attacks/socket_cbase.py \
	tests/redteam/attacks/ssrf_loopback.py tests/redteam/attacks/steal_listener.py \
	tests/redteam/attacks/subclasses_walk.py tests/redteam/attacks/subinterpreter.py \
	tests/redteam/attacks/symlink_create.py tests/redteam/attacks/symlink_in_scope.py \
	tests/redteam/attacks/tcp_fastopen.py tests/redteam/attacks/tempfiles.py \
	tests/redteam/attacks/tmpfile_link.py tests/redteam/attacks/traversal.py \
	tests/redteam/attacks/unix_sockets.py tests/redteam/attacks/userfaultfd.py \
	tests/redteam/attacks/vfork_exec.py tests/redteam/attacks/write_outside.py

EXTRA_DIST += $(REDTEAM_TESTS) $(REDTEAM_ATTACKS) tests/redteam/rt.py \
	tests/redteam/catalogue.txt tests/redteam/gen-table.py tests/redteam/rtext.c \
	doc/security.md

# Rewrite the red-team table of doc/security.md from the catalogue
# (run-table.py fails while they differ).
.PHONY: redteam-table
redteam-table:
	$(PYTHON) $(top_srcdir)/tests/redteam/gen-table.py --update $(top_srcdir)/doc/security.md
