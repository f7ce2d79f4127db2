/* Python attribution: which Python code made a system call (SPEC §6, issue 5).
 * Reads the calling thread's CPython frames through /proc/PID/mem.  Library
 * style; a hostile target may forge every byte, so every loop is bounded.
 * Attribution is information, never a reason to allow anything.
 * doc/attribution.md describes the algorithm, the limits and the costs. */
#ifndef SB_PYFRAMES_H
#define SB_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SB_PYLOC_MAX_FRAMES 32

enum sb_pyframe_flags {
	SB_PYFRAME_DYNAMIC = 1u << 0,	/* code compiled by eval/exec/compile (or a REPL) */
	SB_PYFRAME_LIBRARY = 1u << 1,	/* stdlib, site-packages, <frozen ...> */
	SB_PYFRAME_UNREADABLE = 1u << 2,/* the frame's code could not be read (torn or forged) */
};

struct sb_pyframe {
	char file[256];			/* co_filename, UTF-8, control characters as '?' */
	char func[96];			/* co_qualname ("Class.method", "<module>") */
	int line;			/* -1 when unknown */
	unsigned flags;			/* enum sb_pyframe_flags */
};

struct sb_pystack {
	size_t n;				/* frames, innermost first */
	struct sb_pyframe f[SB_PYLOC_MAX_FRAMES];
	bool from_eval;				/* some frame runs code from eval/exec/compile */
	char importing[128];			/* module being imported, "" if none */
	int user_frame;				/* index of the first user-code frame, -1 if none */
	size_t depth;				/* Python frames on the thread (walked) */
	size_t elided;				/* frames left out before f[n-1] (which is then the
						   user frame, kept although deeper than the window) */
	bool truncated;				/* the walk stopped at its bound */
};

struct sb_pyproc;	/* per-process cache: runtime address, layout, mem fd */

/* Locate the CPython runtime in process `pid`.  -ENOENT: not a (supported)
 * Python; -EAGAIN: a Python whose libpython is not mapped yet (the dynamic
 * loader is running: try again later); -EPERM/-ESRCH: cannot read it;
 * -ENOMEM. */
int sb_pyproc_open(pid_t pid, struct sb_pyproc **out);
void sb_pyproc_free(struct sb_pyproc *p);

/* PY_VERSION_HEX of the target. */
unsigned sb_pyproc_version(const struct sb_pyproc *p);

/* Read the Python stack of thread `tid` (a tid as the caller sees it, e.g.
 * seccomp_notif.pid; translated into the target's pid namespace).  Returns
 * 0, or -errno (-ESRCH: the process or its image is gone, reopen); a thread
 * not running Python, or an interpreter not initialised yet, gives n == 0.
 * Thread-safe; concurrent calls on one sb_pyproc serialise. */
int sb_pyproc_stack(struct sb_pyproc *p, pid_t tid, struct sb_pystack *out);

/* "file:line in func()" of the user frame (or innermost) into buf; "" when
 * the stack is empty. */
void sb_pystack_format_loc(const struct sb_pystack *s, char *buf, size_t cap);

/* Code under `dir` (the agent's bootstrap, a vendored tool) is library code,
 * not the program's own: it is never the user frame, and exec() called from
 * it is exempt like the stdlib's.  Call at start-up, before any attribution
 * (not thread-safe against it).  -ENAMETOOLONG, -ENOSPC (8 at most). */
int sb_pyclassify_add_library_dir(const char *dir);

/* ---- for the supervisor: a process-wide cache of sb_pyproc per pid ----
 * Safe to call from several threads.  An unsupported or non-Python process
 * gives 0 and an empty result ("unknown"); an execve or pid reuse in the
 * target is noticed (the memory descriptor pins the old image) and the
 * process reopened. */

/* Stack of thread tid of process pid (both as the caller sees them). */
int sb_pyloc_stack(pid_t pid, pid_t tid, struct sb_pystack *out);

/* The short form: loc gets sb_pystack_format_loc() ("" if unknown),
 * *from_eval the eval flag, importing (may be NULL) the module being
 * imported ("" if none).  Returns 0 or -errno as sb_pyloc_stack(). */
int sb_pyloc_for(pid_t pid, pid_t tid, char *loc, size_t cap, bool *from_eval,
		 char *importing, size_t icap);

/* Drop the cached state of pid (it exited); sb_pyloc_reset() drops all. */
void sb_pyloc_forget(pid_t pid);
void sb_pyloc_reset(void);

/* Every thread's Python stack of process pid as text, like `py-spy dump`;
 * with `native`, the native frames too (libunwind; "(native frames not
 * available)" without it).  *text is malloc'd by the callee.  -ENOENT: not
 * a supported Python. */
int sb_stack_dump(pid_t pid, bool native, char **text);

#endif
