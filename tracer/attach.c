/* Attach mode: seize, the stop loop, detach (SPEC §8, issue 6).
 *
 * Every thread of each process is seized (PTRACE_SEIZE, re-scanning
 * /proc/PID/task until a pass finds no new thread, so threads created
 * meanwhile are caught) with TRACESYSGOOD, TRACECLONE, TRACEFORK,
 * TRACEVFORK and TRACEEXEC, and never EXITKILL: the targets must outlive us.
 * Each is then interrupted and restarted with PTRACE_SYSCALL; new threads
 * and children are attached by the kernel.  The loop handles, per
 * ptrace(2):
 *   syscall stops      PTRACE_GET_SYSCALL_INFO says entry or exit;
 *                      decoded, judged and shown (attach_decode.c,
 *                      attach_judge.c), refused when enforcing
 *                      (attach_enforce.c)
 *   event stops        clone/fork/vfork (a new tracee), exec (the thread id
 *                      may change to the process id)
 *   PTRACE_EVENT_STOP  a group-stop (PTRACE_LISTEN: job control keeps
 *                      working) or our own interrupt
 *   signal stops       the signal is re-injected
 * Waiting: SIGCHLD is blocked in this thread and taken with sigtimedwait()
 * after a non-blocking waitpid() found nothing, so no stop is missed and
 * the caller's stop flag and the deadline are looked at at least every
 * SB_A_TICK_MS (a handler for SIGINT interrupts the wait at once).
 * Detach: every tracee is interrupted; at its next stop it is detached
 * with the signal it was about to receive (0 at a syscall, event or group
 * stop: a group-stop in effect survives the detach).  An interrupted
 * blocking call is restarted by the kernel; a call that cannot be
 * restarted returns EINTR (the spurious EINTR strace documents too).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attach_int.h"
#include "learn.h"
#include "log.h"
#include "pyframes.h"
#include "pymodules.h"

#define SB_A_OPTIONS                                                                            \
	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |  \
	 PTRACE_O_TRACEEXEC)
#define SB_A_TICK_MS 200		/* longest wait between two looks at *stop */
#define SB_A_DETACH_MS 5000		/* how long tracees get to stop for the detach */
#define SB_A_SCAN_PASSES 64		/* /proc/PID/task scans before giving up on stability */

#if defined(__x86_64__)
# define SB_A_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
# define SB_A_ARCH AUDIT_ARCH_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
# define SB_A_ARCH AUDIT_ARCH_RISCV64
#else
# define SB_A_ARCH 0
#endif

/* ---- /proc ------------------------------------------------------------------------- */

int sb_aproc_status_field(pid_t pid, const char *key, long *val)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	FILE *f;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			*val = strtol(line + kl + 1, NULL, 10);
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

static int read_ptrace_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int sb_attach_check(pid_t pid, struct sb_attach_info *info)
{
	struct sb_attach_info dummy;
	char path[64];
	long tgid, tracer;
	ssize_t n;
	int fd;

	if (!info)
		info = &dummy;
	info->pid = pid;
	info->tracer = 0;
	info->ptrace_scope = -1;
	info->exe[0] = info->cwd[0] = '\0';
	if (pid <= 0 || sb_aproc_status_field(pid, "Tgid", &tgid) != 0)
		return -ESRCH;
	if (tgid == getpid())
		return -EINVAL;
	/* Traced by us already (a thread of a process listed before): fine. */
	if (sb_aproc_status_field((pid_t)tgid, "TracerPid", &tracer) == 0 && tracer != 0 && tracer != getpid()) {
		info->tracer = (pid_t)tracer;
		return -EBUSY;
	}
	snprintf(path, sizeof(path), "/proc/%ld/exe", tgid);
	n = readlink(path, info->exe, sizeof(info->exe) - 1);
	info->exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/cwd", tgid);
	n = readlink(path, info->cwd, sizeof(info->cwd) - 1);
	info->cwd[n > 0 ? n : 0] = '\0';
	/* Opening the memory needs the same PTRACE_MODE_ATTACH permission
	 * (Yama, credentials, Landlock scoping) as attaching does. */
	snprintf(path, sizeof(path), "/proc/%ld/mem", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT || err == ESRCH)
			return -ESRCH;
		info->ptrace_scope = read_ptrace_scope();
		return err == EACCES || err == EPERM ? -EPERM : -err;
	}
	close(fd);
	return 0;
}

int sb_attach_parse_pids(const char *s, pid_t **pids, size_t *n)
{
	size_t cap = 1, k = 0;
	pid_t *v;

	*pids = NULL;
	*n = 0;
	for (const char *p = s; *p; p++)
		cap += *p == ',';
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (*s) {
		char *end;
		long x;

		if (*s < '0' || *s > '9')
			goto bad;
		errno = 0;
		x = strtol(s, &end, 10);
		if (errno || x <= 0 || x > INT32_MAX || (*end && *end != ','))
			goto bad;
		v[k++] = (pid_t)x;
		s = *end ? end + 1 : end;
		if (*end == ',' && !*s)
			goto bad;
	}
	if (k == 0)
		goto bad;
	*pids = v;
	*n = k;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

/* ---- the tracee table ---------------------------------------------------------------- */

/* Linear: tens of threads in practice, and the loop's cost is the stop
 * itself (two context switches), not this search. */
static struct sb_atracee *tracee_find(struct sb_actx *c, pid_t tid)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->t[i].gone && c->t[i].tid == tid)
			return &c->t[i];
	return NULL;
}

static size_t tracees_live(const struct sb_actx *c)
{
	size_t live = 0;

	for (size_t i = 0; i < c->n; i++)
		live += !c->t[i].gone;
	return live;
}

static int tgid_add(struct sb_actx *c, pid_t tgid)
{
	for (size_t i = 0; i < c->n_tgids; i++)
		if (c->tgids[i] == tgid)
			return 0;
	if (c->n_tgids == c->cap_tgids) {
		size_t cap = c->cap_tgids ? 2 * c->cap_tgids : 8;
		pid_t *v = realloc(c->tgids, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->tgids = v;
		c->cap_tgids = cap;
	}
	c->tgids[c->n_tgids++] = tgid;
	return 0;
}

static void tgid_remove(struct sb_actx *c, pid_t tgid)
{
	for (size_t i = 0; i < c->n_tgids; i++)
		if (c->tgids[i] == tgid) {
			c->tgids[i] = c->tgids[--c->n_tgids];
			return;
		}
}

/* Slots are reused, never moved while the loop holds a pointer: the array
 * grows only here, and callers look their tracee up again afterwards. */
static int tracee_add(struct sb_actx *c, pid_t tid, pid_t tgid)
{
	struct sb_atracee *t = NULL;

	for (size_t i = 0; i < c->n && !t; i++)
		if (c->t[i].gone && !c->t[i].call)
			t = &c->t[i];
	if (!t) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 16;
			struct sb_atracee *v = realloc(c->t, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			c->t = v;
			c->cap = cap;
		}
		t = &c->t[c->n++];
	}
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->tgid = tgid;
	t->detaching = c->detaching;
	c->st.tracees++;
	return tgid_add(c, tgid);
}

static void tracee_drop(struct sb_atracee *t)
{
	free(t->call);
	t->call = NULL;
	t->gone = true;
}

/* ---- output ------------------------------------------------------------------------------ */

static void out_write(struct sb_actx *c, const char *s, size_t len)
{
	/* The trace is for a person watching: a closed or full stream loses
	 * lines, never the target's calls. */
	if (fwrite(s, 1, len, c->out) == len)
		fflush(c->out);
}

/* "[pid N] name(args) = result\n  at file:line in f()\n" */
static void print_call(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call, const char *result)
{
	char line[SB_A_TEXT + 512];
	struct sb_abuf b;

	if (!c->o->trace)
		return;
	/* Two bytes kept for the newline of a line that was cut. */
	sb_abuf_init(&b, line, sizeof(line) - 2);
	sb_abuf_printf(&b, "[pid %d] %s(%s) = %s", (int)t->tid, sb_adecode_name(call), call->text, result);
	if (call->deny)
		sb_abuf_puts(&b, " (DENIED)");
	line[b.len++] = '\n';
	line[b.len] = '\0';
	out_write(c, line, b.len);
	if (call->ev.pyloc[0]) {
		sb_abuf_init(&b, line, sizeof(line));
		sb_abuf_printf(&b, "  at %s%s\n", call->ev.pyloc, call->ev.from_eval ? " [eval]" : "");
		out_write(c, line, b.len);
	}
}

static void print_exit(struct sb_actx *c, pid_t tid, int status)
{
	char line[128];
	int n;

	if (!c->o->trace)
		return;
	if (WIFEXITED(status))
		n = snprintf(line, sizeof(line), "[pid %d] +++ exited with %d +++\n", (int)tid, WEXITSTATUS(status));
	else
		n = snprintf(line, sizeof(line), "[pid %d] +++ killed by SIG%s%s +++\n", (int)tid,
			     sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
			     WCOREDUMP(status) ? " (core dumped)" : "");
	if (n > 0)
		out_write(c, line, (size_t)n);
}

/* ---- events -------------------------------------------------------------------------------- */

static void log_event(struct sb_actx *c, struct sb_event *ev)
{
	int len;

	if (c->o->log_fd < 0)
		return;
	(void)sb_event_fill_comm(ev);	/* our tids are host tids; the event may be reused */
	len = c->logline ? sb_event_to_json(ev, c->logline, SB_LOG_LINE_MAX) : -ENOMEM;
	/* A full disk loses a log line, counted; never the call. */
	if (len <= 0 || write(c->o->log_fd, c->logline, (size_t)len) != len)
		c->st.log_lost++;
}

static void emit_event(struct sb_actx *c, struct sb_acall *call, int64_t rval, bool is_error)
{
	const struct sb_attach_opts *o = c->o;
	struct sb_event *ev = &call->ev;
	char buf[SB_NOTICE_MAX];
	int len;

	if (!call->has_event)
		return;
	/* The program's own result for what was let through (a refusal keeps
	 * the errno the policy gives, as the supervisor's events do). */
	if (ev->verdict == SB_ALLOWED)
		ev->err = is_error && rval > -512 ? (int)-rval : 0;
	if (ev->verdict == SB_DENIED)
		c->st.refused++;
	else if (ev->verdict == SB_WOULD_DENY)
		c->st.would_deny++;
	if (o->policy && ev->verdict != SB_ALLOWED) {
		len = sb_event_to_notice(ev, buf, sizeof(buf));
		if (len > 0)
			out_write(c, buf, (size_t)len);
	}
	log_event(c, ev);
	if (o->learn) {
		enum sb_verdict keep = ev->verdict;

		/* The learner keeps what its own rule file does not allow yet. */
		if (o->learn_policy && o->learn_policy != c->judge_policy)
			ev->verdict = sb_ajudge_again(call, o->learn_policy);
		else if (!o->learn_policy)
			ev->verdict = SB_WOULD_DENY;
		sb_learn_record(o->learn, ev);
		ev->verdict = keep;
	}
}

/* ---- modules imported before the attach ------------------------------------------------------- */

/* Never judged by the agent nor the supervisor (python/pysandboxes/guards/
 * imports.py CORE, src/sup_attr.c): not worth a rule. */
static bool never_judged(const char *name)
{
	static const char *const core[] = { "sys", "builtins", "warnings", "_io", "asyncio", "tokenize",
					     "__main__", "encodings", "pysandboxes", NULL };

	for (const char *const *m = core; *m; m++)
		if (!strcmp(*m, name))
			return true;
	return false;
}

static void import_event(struct sb_actx *c, struct sb_event *ev)
{
	const struct sb_attach_opts *o = c->o;

	ev->verdict = o->learn_policy && sb_policy_import_allowed(o->learn_policy, ev->name) ? SB_ALLOWED
											     : SB_WOULD_DENY;
	snprintf(ev->tip, sizeof(ev->tip), "python-import=%s", ev->name);
	log_event(c, ev);
	sb_learn_record(o->learn, ev);
}

/* A module's file as an open for reading would report it: canonical, as
 * seen from here (as attach_judge.c sees paths), relative ones from the
 * process's current directory.  A file that is gone is not an access. */
static void file_event(struct sb_actx *c, struct sb_event *ev, pid_t tgid, const char *file)
{
	const struct sb_attach_opts *o = c->o;
	char *joined = NULL, *canon;

	if (file[0] != '/') {
		char link[64], cwd[PATH_MAX];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tgid);
		if ((n = readlink(link, cwd, sizeof(cwd) - 1)) <= 0)
			return;
		cwd[n] = '\0';
		if (asprintf(&joined, "%s/%s", cwd, file) < 0)
			return;
		file = joined;
	}
	canon = realpath(file, NULL);
	free(joined);
	if (!canon)
		return;
	if (strlen(canon) < sizeof(ev->path)) {
		snprintf(ev->path, sizeof(ev->path), "%s", canon);
		ev->verdict = o->learn_policy && sb_policy_check_path(o->learn_policy, ev->path, strlen(ev->path),
								      SB_ACC_READ, NULL) == SB_PATH_ALLOW
				      ? SB_ALLOWED : SB_WOULD_DENY;
		log_event(c, ev);
		sb_learn_record(o->learn, ev);
	}
	free(canon);
}

/* What an attached learner cannot see as calls: what process tgid imported
 * before the attach (its start-up, the program's own imports) and the files
 * those modules came from (the main script among them), read from its
 * sys.modules; read again before the detach, for the modules imported
 * meanwhile that opened no file (builtin and frozen ones).  One import event
 * per top-level name, as the agent reports them, and one read per module
 * file, as the open that loaded it would have been reported: the learner
 * generalises them as it does those.  Not Python, not initialised, or
 * unreadable: nothing is recorded.  (When attached, the threads were just
 * interrupted and the loop has not restarted them: the dicts hold still
 * while they are read.) */
static void learn_modules(struct sb_actx *c, pid_t tgid, const char *when)
{
	struct sb_pymodules *m = NULL;
	struct sb_event *ev;

	if (!c->o->learn || sb_pymodules_read(tgid, &m) != 0)
		return;
	if ((ev = calloc(1, sizeof(*ev))) != NULL) {
		clock_gettime(CLOCK_REALTIME, &ev->ts);
		ev->pid = ev->tid = tgid;
		ev->nr = -1;
		ev->kind = SB_EV_IMPORT;
		ev->category = -1;
		snprintf(ev->syscall, sizeof(ev->syscall), "import");
		snprintf(ev->pyloc, sizeof(ev->pyloc), "in sys.modules %s", when);
		for (size_t i = 0; i < m->n; i++) {
			if (never_judged(m->name[i]))
				continue;
			snprintf(ev->name, sizeof(ev->name), "%s", m->name[i]);
			import_event(c, ev);
		}
		ev->kind = SB_EV_PATH;
		ev->name[0] = ev->tip[0] = '\0';
		ev->access = SB_ACC_READ;
		ev->syscall[0] = '\0';	/* no call: the log says so as for the agent's events */
		snprintf(ev->pyloc, sizeof(ev->pyloc), "a module's __file__ in sys.modules %s", when);
		for (size_t i = 0; i < m->n_files; i++)
			file_event(c, ev, tgid, m->file[i]);
		free(ev);
	}
	sb_pymodules_free(m);
}

static void learn_all_modules(struct sb_actx *c, const char *when)
{
	for (size_t i = 0; i < c->n_tgids; i++)
		learn_modules(c, c->tgids[i], when);
}

/* ---- syscall stops --------------------------------------------------------------------------- */

static int call_of(struct sb_atracee *t, struct sb_acall **out)
{
	if (!t->call && !(t->call = malloc(sizeof(*t->call))))
		return -ENOMEM;
	*out = t->call;
	return 0;
}

/* The stack as struct sb_event keeps it (event.h): "file\tline\tfunc\tflags\n"
 * per frame, innermost first, the frames that fit. */
static void pack_stack(const struct sb_pystack *s, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		const struct sb_pyframe *f = &s->f[i];
		int w = snprintf(buf + len, cap - len, "%s\t%d\t%s\t%s%s\n", f->file, f->line, f->func,
				 (f->flags & SB_PYFRAME_DYNAMIC) ? "e" : "",
				 (f->flags & SB_PYFRAME_LIBRARY) ? "l" : "");

		if (w < 0 || (size_t)w >= cap - len) {
			buf[len] = '\0';
			return;
		}
		len += (size_t)w;
	}
}

/* Which Python code made the call: read while the thread is stopped in it.
 * Files are shown as the code objects name them (the program's own start
 * directory is not ours to strip). */
static void locate(struct sb_actx *c, const struct sb_atracee *t, struct sb_acall *call)
{
	struct sb_pystack *s = c->stack;

	if (!s || sb_pyloc_stack(t->tgid, t->tid, s) != 0 || s->n == 0)
		return;	/* not Python (yet), or unreadable: unknown */
	sb_pystack_format_loc(s, call->ev.pyloc, sizeof(call->ev.pyloc));
	call->ev.from_eval = s->from_eval;
	snprintf(call->ev.importing, sizeof(call->ev.importing), "%s", s->importing);
	if (call->has_event)
		pack_stack(s, call->ev.stack, sizeof(call->ev.stack));
}

static void on_entry(struct sb_actx *c, struct sb_atracee *t, const struct __ptrace_syscall_info *si)
{
	struct sb_acall *call;
	uint64_t args[6];

	t->in_call = false;
	t->deny_pending = false;
	if (si->arch != SB_A_ARCH || call_of(t, &call) != 0)
		return;
	memcpy(args, si->entry.args, sizeof(args));
	if (sb_adecode_entry(c, t, (int)si->entry.nr, args, call) != 0)
		return;
	/* Every field a later event.h adds starts as "nothing known". */
	memset(&call->ev, 0, sizeof(call->ev));
	clock_gettime(CLOCK_REALTIME, &call->ev.ts);
	sb_ajudge_entry(c, t, call);
	if (c->o->trace || call->has_event)
		locate(c, t, call);
	if (call->deny && sb_aenforce_entry(t->tid, call->deny) != 0) {
		/* Could not change the registers (the thread is gone): say it
		 * would have been refused, not that it was. */
		call->deny = 0;
		call->ev.verdict = SB_WOULD_DENY;
	}
	t->in_call = true;
	t->deny_pending = call->deny != 0;
}

static void on_exit_stop(struct sb_actx *c, struct sb_atracee *t, const struct __ptrace_syscall_info *si)
{
	struct sb_acall *call = t->call;
	int64_t rval = si->exit.rval;
	bool is_error = si->exit.is_error;
	char res[160];
	struct sb_abuf rb;

	if (!t->in_call || !call)
		return;
	t->in_call = false;
	if (t->deny_pending) {
		if (sb_aenforce_exit(t->tid, call->deny) == 0) {
			rval = -call->deny;
			is_error = true;
		}
		t->deny_pending = false;
	}
	sb_adecode_exit(c, t, call, rval, is_error);
	sb_abuf_init(&rb, res, sizeof(res));
	sb_adecode_result(&rb, rval, is_error);
	print_call(c, t, call, res);
	c->st.calls++;
	emit_event(c, call, rval, is_error);
}

/* A call that will not return while we watch (the thread died in it, or
 * we detach at a stop inside it). */
static void flush_pending(struct sb_actx *c, struct sb_atracee *t, const char *why)
{
	char res[64];

	if (!t->in_call || !t->call)
		return;
	t->in_call = false;
	snprintf(res, sizeof(res), "?%s", why);
	print_call(c, t, t->call, res);
	c->st.calls++;
	emit_event(c, t->call, 0, false);
}

/* ---- restarting and detaching ------------------------------------------------------------------ */

static void resume(pid_t tid, int sig)
{
	/* ESRCH: the tracee was killed meanwhile; its exit is reported next. */
	(void)ptrace(PTRACE_SYSCALL, tid, NULL, (void *)(long)sig);
}

static void detach(struct sb_actx *c, struct sb_atracee *t, int sig)
{
	flush_pending(c, t, " <detached ...>");
	(void)ptrace(PTRACE_DETACH, t->tid, NULL, (void *)(long)sig);
	tracee_drop(t);
}

static void begin_detach(struct sb_actx *c)
{
	c->detaching = true;
	clock_gettime(CLOCK_MONOTONIC, &c->detach_start);
	for (size_t i = 0; i < c->n; i++) {
		struct sb_atracee *t = &c->t[i];

		if (t->gone || t->detaching)
			continue;
		t->detaching = true;
		/* The next stop, whatever it is, is where it gets detached. */
		(void)ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL);
	}
}

/* ---- stops ------------------------------------------------------------------------------------- */

static void on_syscall_stop(struct sb_actx *c, struct sb_atracee *t)
{
	struct __ptrace_syscall_info si;
	long n = ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(si), &si);

	if (n < 0) {
		if (errno == EIO || errno == EINVAL)
			c->no_info = true;	/* kernel < 5.3 */
		resume(t->tid, 0);
		return;
	}
	if (si.op == PTRACE_SYSCALL_INFO_ENTRY) {
		if (t->detaching && !c->o->enforce) {
			detach(c, t, 0);
			return;
		}
		on_entry(c, t, &si);
		if (t->detaching) {
			if (t->deny_pending) {
				t->detach_at_exit = true;	/* set the return, then go */
				resume(t->tid, 0);
			} else {
				t->in_call = false;	/* let it run unseen */
				detach(c, t, 0);
			}
			return;
		}
	} else if (si.op == PTRACE_SYSCALL_INFO_EXIT) {
		on_exit_stop(c, t, &si);
		if (t->detaching) {
			detach(c, t, 0);
			return;
		}
	}
	resume(t->tid, 0);
}

static void on_new_tracee(struct sb_actx *c, pid_t tid)
{
	long tgid = tid;

	if (tracee_find(c, tid))
		return;
	if (sb_aproc_status_field(tid, "Tgid", &tgid) != 0)
		tgid = tid;
	if (tracee_add(c, tid, (pid_t)tgid) != 0)
		return;	/* out of memory: it runs, traced by nobody's loop until detach */
}

/* execve by a thread that was not the leader: the kernel gave it the
 * leader's id; the leader's old slot takes over the caller's state. */
static void on_exec(struct sb_actx *c, pid_t tid)
{
	struct sb_atracee *t, *old;
	unsigned long former = 0;

	(void)ptrace(PTRACE_GETEVENTMSG, tid, NULL, &former);
	t = tracee_find(c, tid);
	if (t && (pid_t)former != tid && (old = tracee_find(c, (pid_t)former)) != NULL) {
		struct sb_acall *call = t->call;

		t->call = old->call;
		t->in_call = old->in_call;
		t->deny_pending = old->deny_pending;
		old->call = call;
		old->in_call = false;
		tracee_drop(old);
	}
	if (t)
		sb_pyloc_forget(t->tgid);
}

static void on_event_stop(struct sb_actx *c, pid_t tid, int sig, int event)
{
	struct sb_atracee *t;
	unsigned long msg = 0;

	switch (event) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) == 0 && msg)
			on_new_tracee(c, (pid_t)msg);
		break;
	case PTRACE_EVENT_EXEC:
		on_exec(c, tid);
		break;
	}
	t = tracee_find(c, tid);
	if (!t)
		return;
	if (event == PTRACE_EVENT_STOP &&
	    (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)) {
		if (t->detaching)
			detach(c, t, 0);	/* the group-stop stays in effect */
		else
			(void)ptrace(PTRACE_LISTEN, tid, NULL, NULL);
		return;
	}
	if (t->detaching && !t->deny_pending)
		detach(c, t, 0);
	else
		resume(tid, 0);
}

static void on_exited(struct sb_actx *c, pid_t tid, int status)
{
	struct sb_atracee *t = tracee_find(c, tid);

	if (!t)
		return;
	flush_pending(c, t, "");
	if (t->tid == t->tgid) {
		print_exit(c, tid, status);
		if (t->tgid == c->first_tgid)
			c->first_status = status;
		sb_pyloc_forget(t->tgid);
		tgid_remove(c, t->tgid);
	}
	tracee_drop(t);
}

static void on_wait(struct sb_actx *c, pid_t pid, int status)
{
	struct sb_atracee *t;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		on_exited(c, pid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	event = (status >> 16) & 0xffff;
	t = tracee_find(c, pid);
	if (!t) {
		/* A new child's first stop can come before its parent's event. */
		on_new_tracee(c, pid);
		if (!(t = tracee_find(c, pid))) {
			(void)ptrace(PTRACE_DETACH, pid, NULL, NULL);
			return;
		}
	}
	if (sig == (SIGTRAP | 0x80)) {
		on_syscall_stop(c, t);
		return;
	}
	if (event) {
		on_event_stop(c, pid, sig, event);
		return;
	}
	/* Signal-delivery-stop: the signal goes on to the program. */
	if (t->detaching && !t->deny_pending)
		detach(c, t, sig);
	else
		resume(pid, sig);
}

/* ---- seizing ------------------------------------------------------------------------------------- */

static int seize_one(struct sb_actx *c, pid_t tid, pid_t tgid, bool *added)
{
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)SB_A_OPTIONS) < 0) {
		int err = errno;
		long tracer = 0;

		if (err == ESRCH)
			return 0;	/* the thread ended before we got to it */
		if (err == EPERM && sb_aproc_status_field(tid, "TracerPid", &tracer) == 0 && tracer != 0 &&
		    tracer != getpid())
			return -EBUSY;
		return -err;
	}
	*added = true;
	if (tracee_add(c, tid, tgid) != 0) {
		(void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return -ENOMEM;
	}
	/* Into a ptrace-stop, from which PTRACE_SYSCALL starts the tracing. */
	(void)ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	return 0;
}

static int seize_process(struct sb_actx *c, pid_t pid)
{
	char dir[64];
	long tgid;
	bool any = false;

	if (sb_aproc_status_field(pid, "Tgid", &tgid) != 0)
		return -ESRCH;
	if (tgid == getpid())
		return -EINVAL;
	snprintf(dir, sizeof(dir), "/proc/%ld/task", tgid);
	for (int pass = 0; pass < SB_A_SCAN_PASSES; pass++) {
		bool added = false;
		struct dirent *e;
		DIR *d = opendir(dir);
		int rc = 0;

		if (!d)
			return any ? 0 : -ESRCH;
		while (rc == 0 && (e = readdir(d)) != NULL) {
			pid_t tid = (pid_t)atoi(e->d_name);

			if (tid > 0 && !tracee_find(c, tid))
				rc = seize_one(c, tid, (pid_t)tgid, &added);
		}
		closedir(d);
		if (rc)
			return rc;
		any = any || added;
		if (!added)
			break;
	}
	return any ? 0 : -ESRCH;
}

/* ---- the loop -------------------------------------------------------------------------------------- */

static long ms_since(const struct timespec *a)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - a->tv_sec) * 1000L + (now.tv_nsec - a->tv_nsec) / 1000000L;
}

/* Milliseconds to wait for the next stop. */
static long next_wait_ms(struct sb_actx *c)
{
	long left = SB_A_TICK_MS;

	if (c->detaching) {
		long d = SB_A_DETACH_MS - ms_since(&c->detach_start);
		return d < left ? (d > 0 ? d : 0) : left;
	}
	if (c->o->duration > 0) {
		long d = (long)(c->o->duration * 1000.0) - ms_since(&c->start);
		if (d < left)
			left = d > 0 ? d : 0;
	}
	return left;
}

static bool want_stop(struct sb_actx *c)
{
	if (c->o->stop && *c->o->stop)
		return true;
	return c->o->duration > 0 && ms_since(&c->start) >= (long)(c->o->duration * 1000.0);
}

static void wait_sigchld(long ms)
{
	sigset_t chld;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/* EAGAIN (time-out) and EINTR (the caller's SIGINT handler ran) both
	 * just send the loop round again. */
	(void)sigtimedwait(&chld, NULL, &ts);
}

/* 0 once no tracee is left; -ETIMEDOUT when some did not stop for the
 * detach in time (the kernel detaches them when this process exits). */
static int loop(struct sb_actx *c)
{
	while (tracees_live(c) > 0) {
		int status;
		pid_t pid;

		/* Looked at after every stop: one vDSO clock read. */
		if (!c->detaching && want_stop(c)) {
			learn_all_modules(c, "at the detach");
			begin_detach(c);
		}
		if (c->no_info && !c->detaching)
			begin_detach(c);
		if (c->detaching && ms_since(&c->detach_start) >= SB_A_DETACH_MS)
			return -ETIMEDOUT;
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid > 0) {
			on_wait(c, pid, status);
			continue;
		}
		if (pid < 0 && errno == ECHILD)
			break;
		if (pid < 0 && errno != EINTR)
			break;
		wait_sigchld(next_wait_ms(c));
	}
	return 0;
}

/* ---- the entry point ---------------------------------------------------------------------------------- */

static void ctx_free(struct sb_actx *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->t[i].call);
	free(c->t);
	free(c->tgids);
	free(c->logline);
	free(c->stack);
	c->stack = NULL;
	c->t = NULL;
	c->tgids = NULL;
	c->logline = NULL;
	c->n = c->cap = c->n_tgids = c->cap_tgids = 0;
}

/* Take what a failed seize left behind back off. */
static void undo(struct sb_actx *c)
{
	if (tracees_live(c) == 0)
		return;
	begin_detach(c);
	(void)loop(c);
}

static int attach_all(struct sb_actx *c, struct sb_attach_info *info)
{
	const struct sb_attach_opts *o = c->o;
	int rc;

	for (size_t i = 0; i < o->n_pids; i++) {
		rc = sb_attach_check(o->pids[i], info);
		if (rc == 0)
			rc = seize_process(c, o->pids[i]);
		if (rc == -EPERM) {
			info->pid = o->pids[i];
			info->ptrace_scope = read_ptrace_scope();
		}
		if (rc) {
			info->pid = o->pids[i];
			return rc;
		}
		if (i == 0) {
			long tgid = o->pids[0];

			(void)sb_aproc_status_field(o->pids[0], "Tgid", &tgid);
			c->first_tgid = (pid_t)tgid;
		}
	}
	/* The info of the first process describes the run (its executable). */
	if (o->n_pids > 1)
		(void)sb_attach_check(o->pids[0], info);
	return 0;
}

int sb_attach_run(const struct sb_attach_opts *o, int *status_out)
{
	struct sb_actx c = { .o = o, .first_status = -1 };
	struct sb_attach_info dummy;
	struct sb_attach_info *info = o->info ? o->info : &dummy;
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old_sa;
	sigset_t chld, old_mask;
	struct timespec zero = { 0, 0 };
	int rc;

	if (status_out)
		*status_out = -1;
	if (!o->pids || o->n_pids == 0)
		return -EINVAL;
	if (o->enforce && (!o->policy || !sb_aenforce_supported()))
		return o->policy ? -EOPNOTSUPP : -EINVAL;
	c.out = o->out ? o->out : stderr;
	c.resolve = o->policy || o->learn || o->log_fd >= 0;
	c.judge_policy = o->policy ? o->policy : o->learn_policy;
	c.stack = malloc(sizeof(*c.stack));
	if (!c.stack || (o->log_fd >= 0 && !(c.logline = malloc(SB_LOG_LINE_MAX)))) {
		ctx_free(&c);
		return -ENOMEM;
	}
	clock_gettime(CLOCK_MONOTONIC, &c.start);

	/* Stops are announced by SIGCHLD (no SA_NOCLDSTOP here), taken
	 * synchronously by this thread. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &chld, &old_mask);
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGCHLD, &dfl, &old_sa);

	rc = attach_all(&c, info);
	if (rc) {
		undo(&c);
	} else {
		learn_all_modules(&c, "when attached");
		rc = loop(&c);
	}

	while (sigtimedwait(&chld, NULL, &zero) == SIGCHLD)
		;	/* no stale SIGCHLD for the caller's handler */
	sigaction(SIGCHLD, &old_sa, NULL);
	pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	if (rc == 0 && c.no_info)
		rc = -ENOSYS;
	if (status_out)
		*status_out = c.first_status;
	if (o->stats)
		*o->stats = c.st;
	ctx_free(&c);
	return rc;
}
