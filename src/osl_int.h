/* Internals of the kernel layers, shared by oslayer.c, osl_*.c, landlock.c,
 * unshare.c and wrap_*.c only. */
#ifndef SB_OSL_INT_H
#define SB_OSL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "diag.h"
#include "landlock.h"
#include "oslayer.h"
#include "policy.h"

/* A growable list of malloc'ed strings (argv, notes). */
struct osl_strv {
	char **v;	/* NULL-terminated when non-empty */
	size_t n, cap;
	bool oom;
};
void osl_strv_add(struct osl_strv *s, const char *str);
void osl_strv_addf(struct osl_strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void osl_strv_free(struct osl_strv *s);
bool osl_strv_has(const struct osl_strv *s, const char *str);

/* What the kernel layers need from the policy, gathered once. */
struct osl_input {
	struct sb_ll_in_path *paths;	/* exposures (READ / READ|WRITE) and exec targets (EXEC) */
	size_t n_paths, cap_paths;
	struct sb_ll_in_ports *bind, *connect;
	size_t n_bind, n_connect, cap_bind, cap_connect;
	bool exec_anywhere;
	bool exec_granted;		/* python-api process-exec */
	struct osl_strv exec_targets;	/* canonical executables given EXECUTE */
	struct osl_strv exec_spellings;	/* the same as first named (symlink chains for unshare) */
	struct osl_strv exec_dirs;	/* directories given EXECUTE for exec= globs */
	struct osl_strv protected_in_rw;	/* policy files inside writable exposures */
	size_t n_ignores;
	bool net_needs_host;		/* an ALLOW rule reaches beyond loopback */
	bool udp_rules;			/* ALLOW rules naming UDP (Landlock cannot) */
};

int osl_input_gather(const struct sb_policy *p, const char *python_exe, struct osl_input *in);
void osl_input_free(struct osl_input *in);
/* Add an executable with its ELF loader and #! interpreter (canonical). */
int osl_input_add_exec(struct osl_input *in, const char *path, int depth);
/* Is `path` inside (or equal to) `dir`?  Both canonical. */
bool osl_path_under(const char *path, const char *dir);

/* The mount list of a fresh root (unshare.c; also what bwrap gets). */
enum osl_mount_kind {
	OSL_M_BIND_RO = 0,	/* a host path, read-only */
	OSL_M_BIND_RW,		/* a host path, writable */
	OSL_M_DEVNODE,		/* a host device node, bound without nodev */
	OSL_M_SYMLINK,		/* recreate a host symlink */
	OSL_M_TMPFS,		/* /dev, /dev/shm */
	OSL_M_PROC,		/* /proc of the new pid namespace */
	OSL_M_DIR,		/* an empty directory (the cwd) */
};

struct osl_mount {
	char *path;		/* absolute, the same inside and outside */
	enum osl_mount_kind kind;
	bool is_dir;
	char *target;		/* symlink text; tmpfs options */
};

/* The namespace plan (unshare.c). */
struct osl_ns;
/* Only the sorted mount list: exposures, symlink chains of the interpreter,
 * its loader and `extra` files, /proc, /dev, the cwd. */
int osl_mounts_new(const struct osl_input *in, const char *python_exe, const char *cwd,
		   const struct osl_strv *extra, struct osl_ns **out);
size_t osl_mounts(const struct osl_ns *ns, const struct osl_mount **out);
int osl_ns_new(const struct sb_policy *p, const struct osl_input *in, const char *python_exe,
	       const char *cwd, const char *path_env, struct osl_ns **out, struct sb_diag *diag);
/* slirp4netns for net= rules beyond loopback: a sync pipe before the clone,
 * the helper started on the child's namespaces after it, stopped at the end. */
int osl_ns_before_clone(struct osl_ns *ns);
int osl_ns_after_clone(struct osl_ns *ns, pid_t child, struct sb_diag *diag);
void osl_ns_done(struct osl_ns *ns);
bool osl_ns_host_network(const struct osl_ns *ns);
/* unshare.host-loopback=yes with slirp4netns: 10.0.2.2 is the host's 127.0.0.1. */
bool osl_ns_host_loopback(const struct osl_ns *ns);
void osl_ns_free(struct osl_ns *ns);
int osl_ns_setup_child(const struct osl_ns *ns);
int osl_ns_describe(const struct osl_ns *ns, struct osl_strv *lines);

/* Wrapper command lines (wrap_bwrap.c, wrap_firejail.c): the options between
 * the binary and "--". */
int osl_bwrap_opts(const struct sb_policy *p, const struct osl_input *in, const char *python_exe,
		   const char *self_exe, const char *cwd, struct osl_strv *opts, struct sb_diag *diag);
int osl_firejail_opts(const struct sb_policy *p, const struct osl_input *in, const char *python_exe,
		      const char *self_exe, const char *cwd, struct osl_strv *opts, struct sb_diag *diag);
/* Files the stub (python-sb itself) needs inside the wrapper: its binary and
 * the shared objects it has mapped. */
int osl_self_files(const char *self_exe, struct osl_strv *files);

/* Provider parameter values: true/yes/1/on/empty, false/no/0/off/none. */
bool osl_truthy(const char *v);
bool osl_falsy(const char *v);

/* Find an executable on `path_env` (NULL: $PATH); malloc'ed or NULL. */
char *osl_which(const char *name, const char *path_env);

/* Child-side failure record (async-signal-safe writers). */
void osl_child_fail(const char *stage, const char *path, int err);

struct sb_oslayer {
	enum sb_osl_kind kind;
	enum sb_os_sandbox requested;
	enum sb_mode mode;
	unsigned flags;
	int abi;			/* Landlock ABI used (0 when not Landlock) */
	struct sb_ll_plan *ll;
	int ll_ruleset;			/* built once for the probe and the child; -1: none */
	struct osl_ns *ns;
	char *wrap_bin;			/* bwrap / firejail */
	struct osl_strv wrap_opts;
	char *self_exe;
	char *python_exe;		/* the wrappers' self-test runs it inside the wrapper */
	struct osl_input in;
	char *why_none;			/* why the supervisor runs alone */
	struct osl_strv selftest;	/* outcome lines */
	struct osl_pending *pending;	/* SB_OSL_F_SELFTEST_IN_CHILD: the probe to run */
};

int osl_selftest_landlock(const struct sb_oslayer *l, struct osl_strv *out, struct sb_diag *diag);
/* SB_OSL_F_SELFTEST_IN_CHILD: plan the probe (and make its result pipe);
 * run it in the program's child after the layer; judge it in the parent. */
int osl_selftest_landlock_defer(struct sb_oslayer *l);
void osl_pending_child(const struct sb_oslayer *l);
int osl_pending_collect(struct sb_oslayer *l, struct sb_diag *diag);
void osl_pending_free(struct sb_oslayer *l);
int osl_selftest_unshare(const struct sb_oslayer *l, struct osl_strv *out, struct sb_diag *diag);
int osl_selftest_wrapper(const struct sb_oslayer *l, const char *python_exe, struct osl_strv *out,
			 struct sb_diag *diag);

#endif
