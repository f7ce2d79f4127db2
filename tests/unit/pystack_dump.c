/* Test helper: print the Python stacks of a live process as JSON.
 *
 *   pystack_dump PID               every Python thread (walked from the tstate list)
 *   pystack_dump PID TID...        those threads, through sb_pyproc_stack()
 *   pystack_dump --loc PID TID     sb_pyloc_for() (the supervisor's entry point)
 *   pystack_dump --dump [--native] PID    sb_stack_dump() text
 *   pystack_dump --bench N PID TID        µs per sb_pyproc_stack() call
 *   pystack_dump --loc-seq PID TID        one sb_pyloc_for() per line on stdin
 *                                         ("forget": sb_pyloc_forget), one cache
 *   pystack_dump --stress T N PID TID     T threads x N sb_pyloc_for(); prints
 *                                         the distinct answers
 *
 * An unsupported interpreter prints {"supported": false, ...} and exits 0:
 * that is a result ("unknown"), not a failure. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pyframes.h"
#include "pyproc.h"

static cJSON *stack_json(const struct sb_pystack *s)
{
	cJSON *o = cJSON_CreateObject(), *frames = cJSON_AddArrayToObject(o, "frames");
	char loc[512];

	for (size_t i = 0; i < s->n; i++) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "file", s->f[i].file);
		cJSON_AddStringToObject(f, "func", s->f[i].func);
		cJSON_AddNumberToObject(f, "line", s->f[i].line);
		cJSON_AddBoolToObject(f, "dynamic", (s->f[i].flags & SB_PYFRAME_DYNAMIC) != 0);
		cJSON_AddBoolToObject(f, "library", (s->f[i].flags & SB_PYFRAME_LIBRARY) != 0);
		cJSON_AddBoolToObject(f, "unreadable", (s->f[i].flags & SB_PYFRAME_UNREADABLE) != 0);
		cJSON_AddItemToArray(frames, f);
	}
	cJSON_AddBoolToObject(o, "from_eval", s->from_eval);
	cJSON_AddStringToObject(o, "importing", s->importing);
	cJSON_AddNumberToObject(o, "user_frame", s->user_frame);
	cJSON_AddNumberToObject(o, "depth", (double)s->depth);
	cJSON_AddNumberToObject(o, "elided", (double)s->elided);
	cJSON_AddBoolToObject(o, "truncated", s->truncated);
	sb_pystack_format_loc(s, loc, sizeof(loc));
	cJSON_AddStringToObject(o, "loc", loc);
	return o;
}

static int print_json(cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);

	if (!text)
		return 1;
	puts(text);
	free(text);
	cJSON_Delete(o);
	return 0;
}

static int unsupported(pid_t pid, int rc)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "pid", pid);
	cJSON_AddBoolToObject(o, "supported", false);
	cJSON_AddStringToObject(o, "error", strerror(-rc));
	return print_json(o);
}

static cJSON *proc_json(pid_t pid, const struct sb_pyproc *p)
{
	cJSON *o = cJSON_CreateObject();
	unsigned v = sb_pyproc_version(p);
	char ver[32];

	snprintf(ver, sizeof(ver), "%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
	cJSON_AddNumberToObject(o, "pid", pid);
	cJSON_AddBoolToObject(o, "supported", true);
	cJSON_AddStringToObject(o, "version", ver);
	return o;
}

static int all_threads(pid_t pid)
{
	struct sb_pyproc *p;
	uint64_t tstates[256];
	pid_t tids[256];
	size_t n;
	int rc = sb_pyproc_open(pid, &p);

	if (rc == -ENOENT || rc == -EAGAIN)
		return unsupported(pid, rc);
	if (rc < 0) {
		fprintf(stderr, "pystack_dump: %d: %s\n", (int)pid, strerror(-rc));
		return 1;
	}
	cJSON *o = proc_json(pid, p), *threads = cJSON_AddArrayToObject(o, "threads");
	sb_pyproc_list_threads(p, tstates, tids, 256, &n);
	for (size_t i = 0; i < n; i++) {
		struct sb_pystack s;
		sb_pyproc_walk_tstate(p, tstates[i], &s, &p->walk);
		cJSON *t = stack_json(&s);
		cJSON_AddNumberToObject(t, "tid", tids[i]);
		cJSON_AddItemToArray(threads, t);
	}
	sb_pyproc_free(p);
	return print_json(o);
}

static int some_threads(pid_t pid, char **tidv, int n)
{
	struct sb_pyproc *p;
	int rc = sb_pyproc_open(pid, &p);

	if (rc == -ENOENT || rc == -EAGAIN)
		return unsupported(pid, rc);
	if (rc < 0) {
		fprintf(stderr, "pystack_dump: %d: %s\n", (int)pid, strerror(-rc));
		return 1;
	}
	cJSON *o = proc_json(pid, p), *threads = cJSON_AddArrayToObject(o, "threads");
	for (int i = 0; i < n; i++) {
		struct sb_pystack s;
		pid_t tid = (pid_t)atoi(tidv[i]);
		rc = sb_pyproc_stack(p, tid, &s);
		if (rc < 0) {
			fprintf(stderr, "pystack_dump: %d/%d: %s\n", (int)pid, (int)tid, strerror(-rc));
			sb_pyproc_free(p);
			cJSON_Delete(o);
			return 1;
		}
		cJSON *t = stack_json(&s);
		cJSON_AddNumberToObject(t, "tid", tid);
		cJSON_AddItemToArray(threads, t);
	}
	sb_pyproc_free(p);
	return print_json(o);
}

static int loc(pid_t pid, pid_t tid)
{
	char l[256], imp[128];
	bool from_eval;
	int rc = sb_pyloc_for(pid, tid, l, sizeof(l), &from_eval, imp, sizeof(imp));
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "rc", rc);
	cJSON_AddStringToObject(o, "loc", l);
	cJSON_AddBoolToObject(o, "from_eval", from_eval);
	cJSON_AddStringToObject(o, "importing", imp);
	sb_pyloc_reset();
	return print_json(o);
}

static int loc_seq(pid_t pid, pid_t tid)
{
	char line[64];

	while (fgets(line, sizeof(line), stdin)) {
		char l[256], imp[128];
		bool from_eval;
		int rc;

		if (strncmp(line, "forget", 6) == 0) {
			sb_pyloc_forget(pid);
			puts("{}");
		} else {
			rc = sb_pyloc_for(pid, tid, l, sizeof(l), &from_eval, imp, sizeof(imp));
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "rc", rc);
			cJSON_AddStringToObject(o, "loc", l);
			cJSON_AddBoolToObject(o, "from_eval", from_eval);
			cJSON_AddStringToObject(o, "importing", imp);
			print_json(o);
		}
		fflush(stdout);
	}
	sb_pyloc_reset();
	return 0;
}

struct stress {
	pthread_t th;
	pid_t pid, tid;
	int n, bad, errors;
	char first[256];
};

static void *stress_thread(void *arg)
{
	struct stress *s = arg;

	for (int i = 0; i < s->n; i++) {
		char l[256], imp[128];
		bool from_eval;
		int rc = sb_pyloc_for(s->pid, s->tid, l, sizeof(l), &from_eval, imp, sizeof(imp));
		if (rc < 0) {
			s->errors++;
			continue;
		}
		if (i == 0)
			memcpy(s->first, l, sizeof(l));
		else if (strcmp(l, s->first) != 0)
			s->bad++;
		if (i % 97 == 0)
			sb_pyloc_forget(s->pid);	/* races the other threads' references */
	}
	return NULL;
}

static int stress(int nthreads, int n, pid_t pid, pid_t tid)
{
	struct stress s[16];
	int bad = 0, errors = 0;

	if (nthreads < 1 || nthreads > 16)
		return 2;
	for (int i = 0; i < nthreads; i++) {
		s[i] = (struct stress){ .pid = pid, .tid = tid, .n = n };
		pthread_create(&s[i].th, NULL, stress_thread, &s[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(s[i].th, NULL);
		bad += s[i].bad + (strcmp(s[i].first, s[0].first) != 0);
		errors += s[i].errors;
	}
	printf("{\"loc\":\"%s\",\"mismatches\":%d,\"errors\":%d}\n", s[0].first, bad, errors);
	sb_pyloc_reset();
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int bench(int n, pid_t pid, pid_t tid)
{
	struct sb_pyproc *p;
	struct sb_pystack s;
	double *t, t0 = now_us();
	int rc = sb_pyproc_open(pid, &p);
	double open_us = now_us() - t0;

	if (rc < 0 || n <= 0)
		return 1;
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return 1;
	for (int i = 0; i < n; i++) {
		double a = now_us();
		sb_pyproc_stack(p, tid, &s);
		t[i] = now_us() - a;
	}
	double first = t[0];
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("{\"open_us\":%.1f,\"frames\":%zu,\"depth\":%zu,\"first_us\":%.2f,\"median_us\":%.2f,"
	       "\"p90_us\":%.2f,\"max_us\":%.2f}\n", open_us, s.n, s.depth, first, t[n / 2], t[n * 9 / 10], t[n - 1]);
	free(t);
	sb_pyproc_free(p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "--dump") == 0) {
		bool native = strcmp(argv[2], "--native") == 0;
		char *text;
		int rc;
		if (native && argc < 4)
			return 2;
		rc = sb_stack_dump((pid_t)atoi(argv[native ? 3 : 2]), native, &text);
		if (rc < 0) {
			printf("error: %s\n", strerror(-rc));
			return rc == -ENOENT ? 0 : 1;
		}
		fputs(text, stdout);
		free(text);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "--loc") == 0)
		return loc((pid_t)atoi(argv[2]), (pid_t)atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "--loc-seq") == 0)
		return loc_seq((pid_t)atoi(argv[2]), (pid_t)atoi(argv[3]));
	if (argc == 6 && strcmp(argv[1], "--stress") == 0)
		return stress(atoi(argv[2]), atoi(argv[3]), (pid_t)atoi(argv[4]), (pid_t)atoi(argv[5]));
	if (argc == 5 && strcmp(argv[1], "--bench") == 0)
		return bench(atoi(argv[2]), (pid_t)atoi(argv[3]), (pid_t)atoi(argv[4]));
	if (argc == 2)
		return all_threads((pid_t)atoi(argv[1]));
	if (argc > 2)
		return some_threads((pid_t)atoi(argv[1]), argv + 2, argc - 2);
	fprintf(stderr, "usage: pystack_dump PID [TID...] | --loc PID TID | --dump [--native] PID | --bench N PID TID\n");
	return 2;
}
