/* The learning journal: a crash-proof copy of what the recorder learned.
 *
 * python-sb writes the rule file at the end of the run, which covers every
 * way the *program* can end (the supervisor outlives it) and the signals
 * python-sb itself forwards.  Only a SIGKILL of python-sb (or a crash) would
 * lose the run; with a journal open, each new item is appended as one JSON
 * line the moment it is learned, so the next learning run replays it
 * (sb_learn_replay, in learn.c).  write(2) puts the line in the page cache,
 * which survives the death of the process; fsync in batches protects against
 * a machine crash as well without paying one disk flush per item.  The
 * flush runs on a thread of its own: it can take tens of milliseconds on a
 * busy disk, and the store functions call us with the learner's lock held,
 * on the supervisor's event thread, which meanwhile would stop draining the
 * ring of events (and a full ring makes the program wait).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "learn_int.h"
#include "log.h"
#include "thread.h"

/* A flush after this many lines, or this long after the previous one. */
#define JOURNAL_BATCH 64
#define JOURNAL_PERIOD_MS 500

struct jflush {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int fd;			/* owned: a duplicate of the journal's */
	bool want, stop;
};

static void *jflush_main(void *arg)
{
	struct jflush *f = arg;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->want && !f->stop)
			pthread_cond_wait(&f->cond, &f->lock);
		if (!f->want)
			break;	/* stopped, nothing left to flush */
		f->want = false;
		pthread_mutex_unlock(&f->lock);
		(void)fdatasync(f->fd);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* NULL when it cannot be started: the caller then flushes inline. */
static struct jflush *jflush_new(int fd)
{
	struct jflush *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->fd < 0) {
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	if (sb_thread_start(&f->thread, 0, jflush_main, f)) {
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		close(f->fd);
		free(f);
		return NULL;
	}
	return f;
}

static void jflush_kick(struct jflush *f)
{
	pthread_mutex_lock(&f->lock);
	f->want = true;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

/* Stop, after the flush asked for unless `drop` (the file goes away). */
static void jflush_free(struct jflush *f, bool drop)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	if (drop)
		f->want = false;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	close(f->fd);
	free(f);
}

char *sb_learn_journal_name(const char *rule_file)
{
	char *a = strdup(rule_file), *b = strdup(rule_file), *out = NULL;
	const char *base;

	if (a && b) {
		base = basename(b);
		/* Hidden like the rule file: ".py-sandboxes" -> ".py-sandboxes.journal". */
		if (asprintf(&out, "%s/%s%s.journal", dirname(a), base[0] == '.' ? "" : ".", base) < 0)
			out = NULL;
	}
	free(a);
	free(b);
	return out;
}

int sb_learn_journal_open(struct sb_learn *l, const char *path)
{
	int fd;
	char *p = strdup(path);

	if (!p)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		free(p);
		return -errno;
	}
	pthread_mutex_lock(&l->lock);
	jflush_free(l->jflush, false);
	if (l->jfd >= 0)
		close(l->jfd);
	free(l->jpath);
	l->jfd = fd;
	l->jpath = p;
	l->jflush = jflush_new(fd);
	l->jpending = 0;
	clock_gettime(CLOCK_MONOTONIC, &l->jlast);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

int sb_learn_journal_close(struct sb_learn *l, bool remove)
{
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	if (l->jfd < 0)
		goto out;
	jflush_free(l->jflush, remove);
	l->jflush = NULL;
	if (remove && unlink(l->jpath) < 0 && errno != ENOENT)
		rc = -errno;
	if (!remove && fsync(l->jfd) < 0)
		rc = -errno;
	close(l->jfd);
	l->jfd = -1;
	free(l->jpath);
	l->jpath = NULL;
out:
	pthread_mutex_unlock(&l->lock);
	return rc;
}

static void journal_sync_maybe(struct sb_learn *l)
{
	struct timespec now;
	long ms;

	l->jpending++;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (now.tv_sec - l->jlast.tv_sec) * 1000 + (now.tv_nsec - l->jlast.tv_nsec) / 1000000;
	if (l->jpending < JOURNAL_BATCH && ms < JOURNAL_PERIOD_MS)
		return;
	if (l->jflush)
		jflush_kick(l->jflush);
	else
		(void)fdatasync(l->jfd);
	l->jpending = 0;
	l->jlast = now;
}

/* Called with l->lock held, from the store functions. */
void sb_learn_journal_item(struct sb_learn *l, const char *kind, const struct litem *it)
{
	char line[PATH_MAX * 2 + 1024], hex[33];
	size_t len = 0, n;
	bool net = strcmp(kind, "net") == 0 || strcmp(kind, "dns") == 0;
	int r = 0;

	if (l->jfd < 0 || l->replaying)
		return;
	len = (size_t)snprintf(line, sizeof(line), "{\"k\":\"%s\"", kind);
	if (net) {
		n = it->net.family == AF_INET6 ? 16 : 4;
		for (size_t i = 0; i < n; i++)
			sprintf(hex + 2 * i, "%02x", it->net.addr[i]);
		len += (size_t)snprintf(line + len, sizeof(line) - len,
					",\"fam\":%d,\"addr\":\"%s\",\"port\":%u,\"proto\":%u,\"dir\":%u",
					it->net.family, hex, it->net.port, it->net.proto, it->net.dir);
	}
	if (!net || strcmp(kind, "dns") == 0) {
		len += (size_t)snprintf(line + len, sizeof(line) - len, ",\"key\":");
		r |= sb_json_put_str(line, sizeof(line), &len, strcmp(kind, "dns") == 0 ? it->aux : it->key);
	}
	len += (size_t)snprintf(line + len, sizeof(line) - len, ",\"bits\":%u,\"c\":%d", it->bits,
				(it->flags & LI_CONTENT) ? 1 : 0);
	if (it->why) {
		len += (size_t)snprintf(line + len, sizeof(line) - len, ",\"why\":");
		r |= sb_json_put_str(line, sizeof(line), &len, it->why);
	}
	if (r || len + 3 > sizeof(line))
		return;	/* cannot happen with PATH_MAX-bounded keys */
	memcpy(line + len, "}\n", 3);
	len += 2;
	/* One write per line: O_APPEND makes it land whole after the others. */
	if (write(l->jfd, line, len) == (ssize_t)len)
		journal_sync_maybe(l);
}
