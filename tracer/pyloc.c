/* A process-wide cache of sb_pyproc per pid for the supervisor's workers.
 *
 * Slots are found under one mutex; the expensive parts (opening a process,
 * walking a stack) run outside it, on a reference.  A slot whose process is
 * not Python keeps its /proc/PID/mem descriptor as a probe: reading address
 * 0 fails with EIO while the same image lives and returns EOF once the
 * process exec'd or died, which is when it is worth looking again. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem.h"
#include "pyproc.h"

#define SB_PYLOC_SLOTS 64

struct pyloc_ref {
	struct sb_pyproc *p;	/* owned */
	unsigned refs;		/* holders besides the slot */
	bool detached;		/* no longer in a slot: freed by the last holder */
};

struct pyloc_slot {
	pid_t pid;		/* 0: free */
	struct pyloc_ref *ref;	/* NULL: negative entry */
	struct sb_mem probe;	/* negative entry: the image that was not Python */
	uint64_t used;
};

static pthread_mutex_t pyloc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pyloc_slot pyloc_slots[SB_PYLOC_SLOTS];
static uint64_t pyloc_clock;

/* Caller holds pyloc_lock. */
static void ref_put_locked(struct pyloc_ref *r)
{
	if (r->refs > 0)
		r->refs--;
	if (r->detached && r->refs == 0) {
		sb_pyproc_free(r->p);
		free(r);
	}
}

static void slot_clear_locked(struct pyloc_slot *s)
{
	if (s->ref) {
		s->ref->detached = true;
		s->ref->refs++;
		ref_put_locked(s->ref);
	}
	sb_mem_close(&s->probe);
	memset(s, 0, sizeof(*s));
	s->probe.fd = -1;
}

static bool same_image(const struct sb_mem *m)
{
	char c;

	if (m->fd < 0)
		return false;
	return pread(m->fd, &c, 1, 0) < 0 && errno == EIO;
}

static struct pyloc_slot *slot_find_locked(pid_t pid)
{
	for (size_t i = 0; i < SB_PYLOC_SLOTS; i++)
		if (pyloc_slots[i].pid == pid)
			return &pyloc_slots[i];
	return NULL;
}

static struct pyloc_slot *slot_victim_locked(void)
{
	struct pyloc_slot *v = &pyloc_slots[0];

	for (size_t i = 0; i < SB_PYLOC_SLOTS; i++) {
		if (pyloc_slots[i].pid == 0)
			return &pyloc_slots[i];
		if (pyloc_slots[i].used < v->used)
			v = &pyloc_slots[i];
	}
	slot_clear_locked(v);
	return v;
}

/* A referenced sb_pyproc for pid, or NULL when pid is not (yet) Python. */
static int acquire(pid_t pid, struct pyloc_ref **out)
{
	struct pyloc_slot *s;
	struct sb_pyproc *p = NULL;
	struct sb_mem probe = { .pid = pid, .fd = -1 };
	int rc;

	*out = NULL;
	pthread_mutex_lock(&pyloc_lock);
	s = slot_find_locked(pid);
	if (s && s->ref) {
		s->used = ++pyloc_clock;
		s->ref->refs++;
		*out = s->ref;
		pthread_mutex_unlock(&pyloc_lock);
		return 0;
	}
	if (s && same_image(&s->probe)) {
		s->used = ++pyloc_clock;
		pthread_mutex_unlock(&pyloc_lock);
		return -ENOENT;
	}
	pthread_mutex_unlock(&pyloc_lock);

	rc = sb_pyproc_open(pid, &p);
	if (rc == -ENOENT)
		sb_mem_open(&probe, pid);
	else if (rc < 0)
		return rc;	/* -EAGAIN, -ESRCH, -EPERM: not worth remembering */

	pthread_mutex_lock(&pyloc_lock);
	s = slot_find_locked(pid);
	if (s && s->ref && p) {
		/* Another worker opened it meanwhile: use theirs. */
		sb_pyproc_free(p);
		p = NULL;
	} else {
		if (s)
			slot_clear_locked(s);
		else
			s = slot_victim_locked();
		s->pid = pid;
		s->probe = probe;
		probe.fd = -1;
		if (p) {
			s->ref = calloc(1, sizeof(*s->ref));
			if (!s->ref) {
				sb_pyproc_free(p);
				memset(s, 0, sizeof(*s));
				s->probe.fd = -1;
				pthread_mutex_unlock(&pyloc_lock);
				return -ENOMEM;
			}
			s->ref->p = p;
		}
	}
	s->used = ++pyloc_clock;
	if (s->ref) {
		s->ref->refs++;
		*out = s->ref;
		rc = 0;
	}
	pthread_mutex_unlock(&pyloc_lock);
	sb_mem_close(&probe);
	return rc;
}

static void release(struct pyloc_ref *r)
{
	pthread_mutex_lock(&pyloc_lock);
	ref_put_locked(r);
	pthread_mutex_unlock(&pyloc_lock);
}

/* The process image behind a slot is gone: drop the slot if it still
 * holds that reference. */
static void invalidate(pid_t pid, struct pyloc_ref *r)
{
	struct pyloc_slot *s;

	pthread_mutex_lock(&pyloc_lock);
	s = slot_find_locked(pid);
	if (s && s->ref == r)
		slot_clear_locked(s);
	pthread_mutex_unlock(&pyloc_lock);
}

static void empty_stack(struct sb_pystack *out)
{
	memset(out, 0, offsetof(struct sb_pystack, f));
	out->importing[0] = '\0';
	out->user_frame = -1;
	out->from_eval = false;
	out->depth = out->elided = 0;
	out->truncated = false;
}

int sb_pyloc_stack(pid_t pid, pid_t tid, struct sb_pystack *out)
{
	struct pyloc_ref *r;
	int rc;

	empty_stack(out);
	/* Twice at most: the second time after an execve made the first
	 * descriptor read EOF. */
	for (int attempt = 0; attempt < 2; attempt++) {
		rc = acquire(pid, &r);
		if (rc == -ENOENT || rc == -EAGAIN)
			return 0;	/* not Python (yet): unknown */
		if (rc < 0)
			return rc;
		rc = sb_pyproc_stack(r->p, tid, out);
		if (rc == -ESRCH)
			invalidate(pid, r);
		release(r);
		if (rc != -ESRCH)
			return rc;
		empty_stack(out);
	}
	return rc;
}

int sb_pyloc_for(pid_t pid, pid_t tid, char *loc, size_t cap, bool *from_eval,
		 char *importing, size_t icap)
{
	struct sb_pystack st, *s = &st;
	int rc;

	if (cap)
		loc[0] = '\0';
	if (importing && icap)
		importing[0] = '\0';
	*from_eval = false;
	rc = sb_pyloc_stack(pid, tid, s);
	if (rc == 0) {
		sb_pystack_format_loc(s, loc, cap);
		*from_eval = s->from_eval;
		if (importing && icap) {
			size_t len = strnlen(s->importing, sizeof(s->importing) - 1);
			if (len >= icap)
				len = icap - 1;
			memcpy(importing, s->importing, len);
			importing[len] = '\0';
		}
	}
	return rc;
}

void sb_pyloc_forget(pid_t pid)
{
	struct pyloc_slot *s;

	pthread_mutex_lock(&pyloc_lock);
	s = slot_find_locked(pid);
	if (s)
		slot_clear_locked(s);
	pthread_mutex_unlock(&pyloc_lock);
}

void sb_pyloc_reset(void)
{
	pthread_mutex_lock(&pyloc_lock);
	for (size_t i = 0; i < SB_PYLOC_SLOTS; i++)
		if (pyloc_slots[i].pid)
			slot_clear_locked(&pyloc_slots[i]);
	pthread_mutex_unlock(&pyloc_lock);
}
