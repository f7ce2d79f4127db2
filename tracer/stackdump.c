/* `python-sb --stack PID`: every thread's Python stack, like `py-spy dump`.
 * The threads keep running while they are read, so a walk may be torn: it
 * is retried a few times and what stays unreadable is shown as such. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "native.h"
#include "pyproc.h"

#define DUMP_MAX_THREADS 256
#define DUMP_RETRIES 3

static void read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = fd < 0 ? -1 : read(fd, buf, cap - 1);

	if (fd >= 0)
		close(fd);
	buf[r > 0 ? r : 0] = '\0';
}

/* Printable copy: NULs (cmdline separators) become spaces, other control
 * characters '?'. */
static void printable(char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '\0')
			s[i] = ' ';
		else if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '?';
}

static void proc_header(FILE *o, struct sb_pyproc *p)
{
	char path[64], cmd[512];
	unsigned v = p->lay.version;
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	r = fd < 0 ? -1 : read(fd, cmd, sizeof(cmd) - 1);
	if (fd >= 0)
		close(fd);
	if (r < 0)
		r = 0;
	while (r > 0 && cmd[r - 1] == '\0')
		r--;
	printable(cmd, (size_t)r);
	cmd[r] = '\0';
	fprintf(o, "Process %d: %s\n", (int)p->pid, cmd);
	fprintf(o, "Python v%u.%u.%u (%s)\n", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, p->image);
}

/* The tid as we see it of a thread whose tid in the target is `inner`. */
static pid_t outer_tid(struct sb_pyproc *p, pid_t inner)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	pid_t found = 0;
	unsigned budget = 4 * SB_PY_MAX_TSTATES;

	if (p->same_pidns)
		return inner;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && budget-- > 0 && (d = readdir(dir))) {
		pid_t t = (pid_t)atoi(d->d_name), in;
		if (t > 0 && sb_pyproc_inner_tid(p, t, &in) == 0 && in == inner)
			found = t;
	}
	closedir(dir);
	return found;
}

static void thread_header(FILE *o, struct sb_pyproc *p, pid_t inner, pid_t outer)
{
	char path[80], stat[512], comm[64];
	const char *state = "unknown";

	if (outer > 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)p->pid, (int)outer);
		read_small(path, stat, sizeof(stat));
		/* state follows the last ')' (comm may contain one) */
		char *rp = strrchr(stat, ')');
		if (rp && rp[1] == ' ' && rp[2])
			state = rp[2] == 'R' ? "active" : "idle";
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)p->pid, (int)outer);
		read_small(path, comm, sizeof(comm));
		comm[strcspn(comm, "\n")] = '\0';
		printable(comm, strlen(comm));
	} else {
		comm[0] = '\0';
	}
	if (outer > 0 && outer != inner)
		fprintf(o, "\nThread %d (%s, %d in its pid namespace): \"%s\"\n", (int)outer, state, (int)inner, comm);
	else
		fprintf(o, "\nThread %d (%s): \"%s\"\n", (int)inner, state, comm);
}

static void print_stack(FILE *o, const struct sb_pystack *s)
{
	if (s->importing[0])
		fprintf(o, "    (importing %s)\n", s->importing);
	if (s->n == 0)
		fprintf(o, "    (no Python frames)\n");
	for (size_t i = 0; i < s->n; i++) {
		const struct sb_pyframe *f = &s->f[i];

		if (s->elided && i == s->n - 1)
			fprintf(o, "    ... %zu frames ...\n", s->elided);
		if (f->line > 0)
			fprintf(o, "    %s (%s:%d)", f->func, f->file, f->line);
		else
			fprintf(o, "    %s (%s)", f->func, f->file);
		fprintf(o, "%s%s\n", (f->flags & SB_PYFRAME_DYNAMIC) ? " [eval]" : "",
			(int)i == s->user_frame ? " <-" : "");
	}
	if (s->depth > s->n + s->elided)
		fprintf(o, "    ... %zu more frames%s\n", s->depth - s->n - s->elided,
			s->truncated ? " (walk stopped at its bound)" : "");
}

static void print_native(FILE *o, pid_t pid, pid_t outer)
{
	struct sb_native_frame f[SB_NATIVE_MAX_FRAMES];
	size_t n = 0;
	int rc = outer > 0 ? sb_native_stack(pid, outer, f, SB_NATIVE_MAX_FRAMES, &n) : -ESRCH;

	if (rc == -ENOTSUP) {
		fprintf(o, "    (native frames not available: built without libunwind)\n");
		return;
	}
	if (rc == -ELIBACC) {
		fprintf(o, "    (native frames not available: libunwind-ptrace.so.0 cannot be loaded; "
			"install libunwind8)\n");
		return;
	}
	if (rc < 0 || n == 0) {
		fprintf(o, "    (native frames not available: %s)\n", strerror(rc < 0 ? -rc : EIO));
		return;
	}
	fprintf(o, "    native:\n");
	for (size_t i = 0; i < n; i++) {
		printable(f[i].name, strlen(f[i].name));
		if (f[i].name[0])
			fprintf(o, "    #%-2zu 0x%016" PRIx64 " %s+0x%" PRIx64 "\n", i, f[i].ip, f[i].name, f[i].off);
		else
			fprintf(o, "    #%-2zu 0x%016" PRIx64 " ?\n", i, f[i].ip);
	}
}

/* Walk one thread, again while the result shows torn reads. */
static void walk_thread(struct sb_pyproc *p, uint64_t tstate, struct sb_pystack *s)
{
	for (int attempt = 0; attempt < DUMP_RETRIES; attempt++) {
		bool torn = false;

		pthread_mutex_lock(&p->lock);
		int rc = sb_pyproc_walk_tstate(p, tstate, s, &p->walk);
		pthread_mutex_unlock(&p->lock);
		if (rc < 0)
			return;
		for (size_t i = 0; i < s->n; i++)
			torn |= (s->f[i].flags & SB_PYFRAME_UNREADABLE) != 0;
		if (!torn)
			return;
	}
}

static int dump(struct sb_pyproc *p, bool native, FILE *o)
{
	uint64_t *tstates = calloc(DUMP_MAX_THREADS, sizeof(*tstates));
	pid_t *tids = calloc(DUMP_MAX_THREADS, sizeof(*tids));
	struct sb_pystack *s = malloc(sizeof(*s));
	size_t n = 0;
	int rc = -ENOMEM;

	if (!tstates || !tids || !s)
		goto out;
	proc_header(o, p);
	rc = sb_pyproc_list_threads(p, tstates, tids, DUMP_MAX_THREADS, &n);
	if (rc < 0)
		goto out;
	if (n == 0)
		fprintf(o, "\n(no Python threads: the interpreter is not initialised or is shutting down)\n");
	for (size_t i = 0; i < n; i++) {
		pid_t outer = outer_tid(p, tids[i]);

		thread_header(o, p, tids[i], outer);
		walk_thread(p, tstates[i], s);
		print_stack(o, s);
		if (native)
			print_native(o, p->pid, outer);
	}
	if (n == DUMP_MAX_THREADS)
		fprintf(o, "\n(more threads not shown)\n");
	rc = 0;
out:
	free(tstates);
	free(tids);
	free(s);
	return rc;
}

int sb_stack_dump(pid_t pid, bool native, char **text)
{
	struct sb_pyproc *p = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *o;
	int rc;

	*text = NULL;
	rc = sb_pyproc_open(pid, &p);
	if (rc == -EAGAIN)
		rc = -ENOENT;
	if (rc < 0)
		return rc;
	o = open_memstream(&buf, &len);
	if (!o) {
		sb_pyproc_free(p);
		return -ENOMEM;
	}
	rc = dump(p, native, o);
	if (fclose(o) != 0 && rc == 0)
		rc = -ENOMEM;
	sb_pyproc_free(p);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*text = buf;
	return 0;
}
