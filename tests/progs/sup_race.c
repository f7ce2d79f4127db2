/* A thread flips a path buffer between an allowed and a secret file while
 * the main thread opens, renames or hard-links through that buffer
 * (SPEC §9: "no decision ever reaches the kernel after a race changed the
 * object").
 *
 *   sup_race open|rename|link ALLOWED SECRET SECONDS [DEST]
 *
 * ALLOWED and SECRET must have the same length (the flip is one memcpy).
 * The secret file's content starts with "SECRET".  Prints
 * "race <mode> tries=N ok=N refused=N leaks=N" and exits 1 on any leak, 3 when
 * the race never produced both outcomes (the test would prove nothing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[4096];
static const char *paths[2];
static atomic_bool stop;

static void *flipper(void *arg)
{
	size_t len = strlen(paths[0]) + 1;
	unsigned i = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		memcpy(buf, paths[i++ & 1], len);
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static bool is_secret_fd(int fd)
{
	char c[8] = { 0 };

	return pread(fd, c, 6, 0) == 6 && memcmp(c, "SECRET", 6) == 0;
}

static bool is_secret_path(const char *p)
{
	int fd = open(p, O_RDONLY);
	bool s;

	if (fd < 0)
		return false;
	s = is_secret_fd(fd);
	close(fd);
	return s;
}

int main(int argc, char **argv)
{
	unsigned long tries = 0, ok = 0, refused = 0, leaks = 0, eacces = 0;
	const char *mode, *dest;
	struct timespec t0, t;
	pthread_t th;
	double secs;

	if (argc < 5) {
		fprintf(stderr, "usage: sup_race open|rename|link ALLOWED SECRET SECONDS [DEST]\n");
		return 2;
	}
	mode = argv[1];
	paths[0] = argv[2];
	paths[1] = argv[3];
	secs = atof(argv[4]);
	dest = argc > 5 ? argv[5] : NULL;
	if (strlen(paths[0]) != strlen(paths[1]) || strlen(paths[0]) >= sizeof(buf) ||
	    (strcmp(mode, "open") && !dest)) {
		fprintf(stderr, "sup_race: bad arguments\n");
		return 2;
	}
	strcpy(buf, paths[0]);
	if (pthread_create(&th, NULL, flipper, NULL)) {
		perror("pthread_create");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		tries++;
		if (!strcmp(mode, "open")) {
			int fd = open(buf, O_RDONLY);

			if (fd < 0) {
				refused++;
				eacces += errno == EACCES;	/* the kernel layer's answer */
			} else {
				ok++;
				leaks += is_secret_fd(fd);
				close(fd);
			}
		} else if (!strcmp(mode, "rename")) {
			/* ALLOWED lives in a writable directory: put it back after. */
			if (rename(buf, dest) < 0) {
				refused++;
			} else {
				ok++;
				if (is_secret_path(dest))
					leaks++;
				else
					rename(dest, paths[0]);
			}
		} else {
			if (link(buf, dest) < 0) {
				refused++;
			} else {
				ok++;
				leaks += is_secret_path(dest);
				unlink(dest);
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!leaks && (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	printf("race %s tries=%lu ok=%lu refused=%lu leaks=%lu eacces=%lu\n", mode, tries, ok, refused, leaks,
	       eacces);
	if (leaks)
		return 1;
	return ok && refused ? 0 : 3;
}
