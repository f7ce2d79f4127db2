/* Python attribution: which Python code made a system call (SPEC §6, issue 5).
 * Reads the calling thread's CPython frames through /proc/PID/mem.  Library
 * style; a hostile target may forge every byte, so every loop is bounded. */
#ifndef SB_PYFRAMES_H
#define SB_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SB_PYLOC_MAX_FRAMES 32

struct sb_pyframe {
	char file[256];
	char func[96];
	int line;
};

struct sb_pystack {
	size_t n;				/* frames, innermost first */
	struct sb_pyframe f[SB_PYLOC_MAX_FRAMES];
	bool from_eval;				/* some frame runs code from eval/exec/compile */
	char importing[128];			/* module being imported, "" if none */
	int user_frame;				/* index of the first user-code frame, -1 if none */
};

struct sb_pyproc;	/* per-process cache: runtime address, layout, mem fd */

/* Locate the CPython runtime in process `pid`.  -ENOENT: not a (supported)
 * Python; -EPERM/-ESRCH: cannot read it. */
int sb_pyproc_open(pid_t pid, struct sb_pyproc **out);
void sb_pyproc_free(struct sb_pyproc *p);

/* Read the Python stack of thread `tid`.  Returns 0, or -errno; a thread not
 * running Python gives n == 0 and 0. */
int sb_pyproc_stack(struct sb_pyproc *p, pid_t tid, struct sb_pystack *out);

/* "file:line in func()" of the user frame (or innermost) into buf. */
void sb_pystack_format_loc(const struct sb_pystack *s, char *buf, size_t cap);

#endif
