/* Kernel layers under the supervisor (SPEC §7, reference §6): the same policy
 * compiled to Landlock rules, to namespaces built natively (unshare), or to a
 * bubblewrap / firejail command line.
 *
 * Two steps, because the child between fork and execve may not allocate:
 *   parent: sb_oslayer_new() selects the layer from os-sandbox=, probes the
 *           kernel, computes everything (paths, rights, ports, mounts, argv)
 *           and proves with a probe child that the layer refuses a denied path
 *           and a denied port (fails closed otherwise);
 *   child:  sb_oslayer_setup_ns_child() (unshare only, first thing after the
 *           clone), then sb_oslayer_apply_child() after rlimits and before the
 *           seccomp filter: its O_PATH opens must not reach a supervisor that
 *           is not listening yet.
 * Library style: 0 or -errno, messages (with a "Hint:") in the sb_diag.
 */
#ifndef SB_OSLAYER_H
#define SB_OSLAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "diag.h"
#include "policy.h"
#include "supervisor.h"

struct sb_oslayer;

enum sb_osl_kind {
	SB_OSL_NONE = 0,	/* the supervisor alone */
	SB_OSL_LANDLOCK,
	SB_OSL_UNSHARE,
	SB_OSL_BWRAP,
	SB_OSL_FIREJAIL,
};

enum sb_osl_flags {
	SB_OSL_F_NO_SELFTEST = 1u << 0,	/* skip the probe (unit tests of the computation) */
	/* Test-only: the layer is computed but apply_child restricts nothing, so
	 * the self-test must catch it (tests/integration/os-landlock-*.py). */
	SB_OSL_F_TEST_NOOP = 1u << 1,
	/* Landlock: the self-test runs in the program's own child right after
	 * sb_oslayer_apply_child() restricts it, and the parent judges it with
	 * sb_oslayer_selftest_collect() before letting it exec (no probe child).
	 * The other layers probe when they are made, as without the flag. */
	SB_OSL_F_SELFTEST_IN_CHILD = 1u << 2,
};

struct sb_oslayer_args {
	const struct sb_policy *policy;
	const char *python_exe;		/* the interpreter that will be exec'ed */
	enum sb_mode mode;
	const char *cwd;		/* NULL: getcwd() (unshare recreates it in the new root) */
	const char *self_exe;		/* bwrap/firejail stub: NULL = /proc/self/exe resolved */
	const char *path_env;		/* where to look for bwrap, firejail, slirp4netns; NULL = $PATH */
	unsigned flags;			/* enum sb_osl_flags */
	int abi;			/* Landlock ABI to compute for; 0 = probe the kernel */
};

/* Select and prepare the layer.  Errors: -ENOTSUP (a named layer cannot run
 * here: message and hint in diag), -EIO (the self-test found the layer not
 * enforcing), -EINVAL, -ENOMEM.  On success diag may hold one warning (auto
 * without Landlock). */
int sb_oslayer_new(const struct sb_policy *p, const char *python_exe, enum sb_mode mode,
		   struct sb_oslayer **out, struct sb_diag *diag);
int sb_oslayer_new_ex(const struct sb_oslayer_args *a, struct sb_oslayer **out, struct sb_diag *diag);
void sb_oslayer_free(struct sb_oslayer *l);

enum sb_osl_kind sb_oslayer_kind(const struct sb_oslayer *l);
const char *sb_oslayer_name(const struct sb_oslayer *l);	/* "landlock", "none", ... */
int sb_oslayer_landlock_abi(const struct sb_oslayer *l);	/* 0 unless Landlock */

/* Landlock enforces exactly the policy's file exposure (no ignore=, no policy
 * file inside a writable exposure, no read-only exposure inside a writable
 * one, every exposure existing): an open the supervisor allowed may then be
 * CONTINUEd, because a racing thread that swaps the path for anything the
 * policy refuses gets EACCES from the kernel (SPEC §9).  The supervisor must
 * still emulate opens it refuses or that python-import= restricts. */
bool sb_oslayer_enforces_fs(const struct sb_oslayer *l);
/* The same for reads alone: a policy file inside a writable exposure and a
 * read-only exposure inside a writable one only widen what Landlock lets the
 * program *write*, so read-only opens may still be CONTINUEd there (the
 * common expose-rw=. project).  ignore= and exec= targets outside the
 * exposures still widen what it may read. */
bool sb_oslayer_enforces_fs_read(const struct sb_oslayer *l);
/* Landlock EXECUTE is granted only to the executables the policy may start
 * (the interpreter, its ELF loader, exec= rules), so a checked execve may be
 * CONTINUEd. */
bool sb_oslayer_enforces_exec(const struct sb_oslayer *l);

/* What the layer enforces and what it leaves to the supervisor, and the
 * self-test's outcome, for --check-config.  *text is malloc'ed. */
int sb_oslayer_describe(const struct sb_oslayer *l, char **text);

/* Run the probe again (sb_oslayer_new already did unless NO_SELFTEST). */
int sb_oslayer_selftest(const struct sb_oslayer *l, struct sb_diag *diag);
/* Judge the probe the program's child ran (SB_OSL_F_SELFTEST_IN_CHILD),
 * once that child has reported; 0 when none is pending.  A failure fills
 * `diag` and the child must not exec. */
int sb_oslayer_selftest_collect(struct sb_oslayer *l, struct sb_diag *diag);

/* ---- in the child (after fork, before the seccomp filter) -------------------- */

/* Restrict the calling process with the prepared layer (Landlock).  No-op
 * for the other kinds.  Async-signal-safe: system calls only, no allocation.
 * On failure the reason is kept for sb_oslayer_child_error(). */
int sb_oslayer_apply_child(const struct sb_oslayer *l);

/* Format the last child-side failure ("landlock: adding '/x': EACCES") into
 * buf without allocating; returns the length.  For the child's error pipe. */
size_t sb_oslayer_child_error(int rc, char *buf, size_t len);

/* ---- namespaces (os-sandbox=unshare) ------------------------------------------ */

/* Clone flags the spawn must add when it forks the child (0 unless unshare):
 * CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS.
 * The fork must be clone(flags|SIGCHLD) (raw syscall, no new stack). */
int sb_oslayer_clone_flags(const struct sb_oslayer *l);

/* First thing in the cloned child: uid/gid maps to the invoking ids, a fresh
 * root from the prepared mount list, /proc, a minimal /dev, loopback up, the
 * cwd.  The child is pid 1 of its namespace: this function forks once more,
 * keeps pid 1 as a small init (forwards signals, reaps, exits with the
 * program's status) and returns 0 only in the grandchild, which carries on
 * with the spawn.  The grandchild's host pid is not the one clone returned:
 * hand the listener over with sb_oslayer_send_listener() on a
 * sb_oslayer_stub_socketpair() (or SCM_RIGHTS).  Async-signal-safe. */
int sb_oslayer_setup_ns_child(const struct sb_oslayer *l);

/* The network beyond loopback (net= rules that reach other hosts) comes from
 * slirp4netns, started by the parent on the child's namespaces.  The spawn
 * calls, around its clone:
 *   sb_oslayer_before_clone(l)             (a sync pipe; 0 when not needed)
 *   pid = clone(...)
 *   sb_oslayer_after_clone(l, pid, diag)   (parent: start slirp4netns, wait
 *                                           until it is up, release the child;
 *                                           on error kill the child)
 *   ... the program runs ...
 *   sb_oslayer_spawn_done(l)               (after the child is reaped)
 * The child blocks in sb_oslayer_setup_ns_child() until released.  All three
 * are no-ops for the other layers. */
int sb_oslayer_before_clone(struct sb_oslayer *l);
int sb_oslayer_after_clone(struct sb_oslayer *l, pid_t child, struct sb_diag *diag);
void sb_oslayer_spawn_done(struct sb_oslayer *l);

/* ---- wrappers (os-sandbox=bwrap / firejail) ------------------------------------ */

/* The command line to exec in the child instead of the interpreter:
 *   <bwrap|firejail> <options from the policy> -- <self_exe> --_sb-stub <fd> -- <python argv...>
 * `stub_fd` is the inherited unix socket the stub sends the listener on.
 * *out is a NULL-terminated malloc'ed array of malloc'ed strings (free with
 * sb_oslayer_argv_free). */
int sb_oslayer_wrap_argv(const struct sb_oslayer *l, const char *python_exe, char *const *python_argv,
			 int stub_fd, char ***out);
void sb_oslayer_argv_free(char **argv);
/* The same, keeping `keep_fds` (the agent's channel) open across firejail,
 * which closes every other descriptor (bwrap passes them on). */
int sb_oslayer_wrap_argv_keep(const struct sb_oslayer *l, const char *python_exe, char *const *python_argv,
			      int stub_fd, const int *keep_fds, size_t n_keep, char ***out);

/* The socket between the supervisor (sv[0]: close-on-exec, SO_PASSCRED)
 * and the stub (sv[1]: inherited through the wrapper; pass its number as
 * stub_fd).  The parent closes sv[1] after the fork. */
int sb_oslayer_stub_socketpair(int sv[2]);

/* main.c: is this the stub's command line
 *   python-sb --_sb-stub FD EXE -- ARGV...
 * (exactly argv[1] == "--_sb-stub")?  0 with the parts, -EINVAL otherwise. */
int sb_oslayer_stub_parse(int argc, char **argv, int *fd, const char **exe, char ***py_argv);

/* The stub's job inside the wrapper: call `install` (spawn.c: no_new_privs,
 * the seccomp filter with NEW_LISTENER; returns the listener fd or -errno),
 * hand the listener over with sb_oslayer_send_listener(), close both and
 * execve `exe`.  Returns only on failure (-errno). */
int sb_oslayer_stub_exec(int sock, int (*install)(void *data), void *data,
			 const char *exe, char *const *argv, char *const *envp);

/* Hand a listener to the supervisor when it cannot know our pid (inside the
 * wrapper, or the unshare layer's grandchild): announce our pid on `sock`
 * (SO_PASSCRED translates it), send the fd number, wait for the go-ahead.
 * Only write(2)/read(2): safe after the filter is installed. */
int sb_oslayer_send_listener(int sock, int listener);
/* The same, telling the supervisor how the filter was installed (the
 * first byte is 'K' instead of 'P'). */
enum sb_osl_listener_flags {
	SB_OSL_LISTENER_KILLABLE = 1u << 0,	/* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV */
};
int sb_oslayer_send_listener_ex(int sock, int listener, unsigned flags);
/* Supervisor side, on sv[0]: learn the sender's pid, take its listener with
 * pidfd_getfd(), send the go-ahead.  -EPIPE when the sender (or the wrapper)
 * died first. */
int sb_oslayer_recv_listener(int sock, int *listener);
/* The same in two steps, for a spawn that needs the sender's pid (in our
 * pid namespace) before the sender goes on: take the listener (the sender
 * keeps waiting, so *pid still names it), then release the sender. */
int sb_oslayer_take_listener(int sock, int *listener, pid_t *pid, unsigned *flags);
int sb_oslayer_release_stub(int sock);

#endif
