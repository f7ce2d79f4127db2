/* Races against the supervisor's check-then-act (part of rt_native.so).
 *
 * A second thread rewrites what the main thread's system call points to
 * (a path, a sockaddr, the page the path lives on, a symlink) while the main
 * thread calls it in a loop for SECONDS.  Whatever the main thread gets is
 * printed ("race READ ..."); the harness looks for the canaries.  Two paths
 * that are flipped must have the same length (one memcpy).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt_native.h"


struct flip {
	char *buf;		/* what the system call reads */
	const void *a, *b;	/* the two values written in turn */
	size_t len;
	atomic_bool stop;
};

static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void line(const char *fmt, ...)
{
	char s[4200];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s, sizeof(s) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(s) - 2)
		n = (int)sizeof(s) - 2;
	s[n++] = '\n';
	(void)!write(1, s, (size_t)n);
}

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *flipper(void *arg)
{
	struct flip *f = arg;
	unsigned i = 0;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		memcpy(f->buf, (i++ & 1) ? f->b : f->a, f->len);
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static int flip_start(struct flip *f, pthread_t *th, char *buf, const void *a, const void *b, size_t len)
{
	f->buf = buf;
	f->a = a;
	f->b = b;
	f->len = len;
	atomic_store(&f->stop, false);
	memcpy(buf, a, len);
	if (pthread_create(th, NULL, flipper, f)) {
		line("race ERR pthread_create %s", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
		return -1;
	}
	return 0;
}

static void flip_stop(struct flip *f, pthread_t th)
{
	atomic_store(&f->stop, true);
	pthread_join(th, NULL);
}

/* Print a descriptor's content when it is not the allowed file's. */
static bool report_fd(const char *what, int fd, const char *allowed_text)
{
	char c[4096];
	ssize_t n = pread(fd, c, sizeof(c) - 1, 0);

	if (n <= 0)
		return false;
	c[n] = '\0';
	if (allowed_text && !strncmp(c, allowed_text, strlen(allowed_text)))
		return false;
	for (ssize_t i = 0; i < n; i++)
		if (c[i] == '\0' || c[i] == '\n')
			c[i] = ' ';	/* environ is NUL-separated */
	line("%s READ %s", what, c);
	return true;
}

static int same_len(const char *a, const char *b)
{
	if (strlen(a) != strlen(b) || strlen(a) >= 4096) {
		line("race ERR paths differ in length: %s %s", a, b);
		return 0;
	}
	return 1;
}

static char pbuf[4096];

RT_API int rt_race_open(const char *allowed, const char *secret, const char *allowed_text, double seconds)
{
	unsigned long tries = 0, ok = 0, leaks = 0;
	struct flip f;
	pthread_t th;
	double end = mono() + seconds;

	if (!same_len(allowed, secret) || flip_start(&f, &th, pbuf, allowed, secret, strlen(allowed) + 1))
		return 0;
	while (mono() < end && leaks < 5) {
		int fd = open(pbuf, O_RDONLY | O_CLOEXEC);

		tries++;
		if (fd >= 0) {
			ok++;
			leaks += report_fd("race open", fd, allowed_text);
			close(fd);
		}
	}
	flip_stop(&f, th);
	line("race open tries=%lu ok=%lu", tries, ok);
	return 0;
}

/* rename (how 0) or link (how 1) through the flipping source buffer. */
RT_API int rt_race_move(const char *allowed, const char *secret, const char *dst, const char *allowed_text,
			double seconds, int how)
{
	unsigned long tries = 0, ok = 0, leaks = 0;
	struct flip f;
	pthread_t th;
	double end = mono() + seconds;

	if (!same_len(allowed, secret) || flip_start(&f, &th, pbuf, allowed, secret, strlen(allowed) + 1))
		return 0;
	while (mono() < end && leaks < 5) {
		int rc = how ? link(pbuf, dst) : rename(pbuf, dst), fd;

		tries++;
		if (rc < 0)
			continue;
		ok++;
		fd = open(dst, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			leaks += report_fd(how ? "race link" : "race rename", fd, allowed_text);
			close(fd);
		}
		/* Put the allowed file back (rename) or drop the new name (link). */
		if (how)
			unlink(dst);
		else if (rename(dst, allowed) < 0)
			break;
	}
	flip_stop(&f, th);
	line("race %s tries=%lu ok=%lu", how ? "link" : "rename", tries, ok);
	return 0;
}

struct swap_args {
	const char *link, *tmp, *a, *b;
	atomic_bool stop;
};

static void *swapper(void *arg)
{
	struct swap_args *s = arg;
	unsigned i = 0;

	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		unlink(s->tmp);
		if (symlink((i++ & 1) ? s->b : s->a, s->tmp) == 0)
			rename(s->tmp, s->link);
	}
	return NULL;
}

/* A symlink replaced again and again between a public and a secret target;
 * the main thread opens PATH (the link itself, or a path through it). */
RT_API int rt_race_symlink(const char *link, const char *tmp, const char *target_a, const char *target_b,
			   const char *path, const char *allowed_text, double seconds)
{
	struct swap_args s = { .link = link, .tmp = tmp, .a = target_a, .b = target_b };
	unsigned long tries = 0, ok = 0, leaks = 0;
	double end = mono() + seconds;
	pthread_t th;

	atomic_store(&s.stop, false);
	if (pthread_create(&th, NULL, swapper, &s))
		return line("race ERR pthread_create"), 0;
	while (mono() < end && leaks < 5) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		tries++;
		if (fd >= 0) {
			ok++;
			leaks += report_fd("race symlink", fd, allowed_text);
			close(fd);
		}
	}
	atomic_store(&s.stop, true);
	pthread_join(th, NULL);
	line("race symlink tries=%lu ok=%lu", tries, ok);
	return 0;
}

/* chdir through a flipping buffer, then a relative open. */
RT_API int rt_race_chdir(const char *allowed_dir, const char *secret_dir, const char *name,
			 const char *allowed_text, double seconds)
{
	unsigned long tries = 0, ok = 0, leaks = 0;
	int home = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	double end = mono() + seconds;
	struct flip f;
	pthread_t th;

	if (home < 0 || !same_len(allowed_dir, secret_dir) ||
	    flip_start(&f, &th, pbuf, allowed_dir, secret_dir, strlen(allowed_dir) + 1))
		return 0;
	while (mono() < end && leaks < 5) {
		tries++;
		if (chdir(pbuf) == 0) {
			int fd = open(name, O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				ok++;
				leaks += report_fd("race chdir", fd, allowed_text);
				close(fd);
			}
		}
		if (fchdir(home) < 0)
			break;
	}
	flip_stop(&f, th);
	close(home);
	line("race chdir tries=%lu ok=%lu", tries, ok);
	return 0;
}

/* O_PATH opens are decided then CONTINUEd: flip the buffer between a public
 * directory and the hidden one, then try every use of the descriptor that
 * could reach content (openat from it, /proc/self/fd/N/name, fchdir then a
 * relative open, a listing through /proc/self/fd/N). */
RT_API int rt_race_opath(const char *allowed_dir, const char *secret_dir, const char *name,
			 const char *allowed_text, double seconds)
{
	unsigned long tries = 0, got = 0, leaks = 0;
	int home = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	double end = mono() + seconds;
	struct flip f;
	pthread_t th;

	if (home < 0 || !same_len(allowed_dir, secret_dir) ||
	    flip_start(&f, &th, pbuf, allowed_dir, secret_dir, strlen(allowed_dir) + 1))
		return 0;
	while (mono() < end && leaks < 5) {
		int d = open(pbuf, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;
		char p[512];

		tries++;
		if (d < 0)
			continue;
		got++;
		if ((fd = openat(d, name, O_RDONLY | O_CLOEXEC)) >= 0) {
			leaks += report_fd("race opath openat", fd, allowed_text);
			close(fd);
		}
		snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", d, name);
		if ((fd = open(p, O_RDONLY | O_CLOEXEC)) >= 0) {
			leaks += report_fd("race opath procfd", fd, allowed_text);
			close(fd);
		}
		if (fchdir(d) == 0 && (fd = open(name, O_RDONLY | O_CLOEXEC)) >= 0) {
			leaks += report_fd("race opath fchdir", fd, allowed_text);
			close(fd);
		}
		if (fchdir(home) < 0)
			break;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", d);
		if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			char buf[4096];
			long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));

			for (long off = 0; off < n;) {
				unsigned short reclen;

				memcpy(&reclen, buf + off + 16, sizeof(reclen));
				if (strcmp(buf + off + 19, ".") && strcmp(buf + off + 19, "..") &&
				    strcmp(buf + off + 19, name))
					line("race opath listing %s", buf + off + 19);
				off += reclen;
			}
			close(fd);
		}
		close(d);
	}
	flip_stop(&f, th);
	close(home);
	line("race opath tries=%lu got=%lu", tries, got);
	return 0;
}

struct prot_args {
	char *page;
	atomic_bool stop;
};

static void *protector(void *arg)
{
	struct prot_args *p = arg;
	unsigned i = 0;

	while (!atomic_load_explicit(&p->stop, memory_order_relaxed))
		mprotect(p->page, 4096, (i++ & 1) ? PROT_READ : PROT_NONE);
	mprotect(p->page, 4096, PROT_READ | PROT_WRITE);
	return NULL;
}

/* The page holding the secret's path flips between unreadable and readable:
 * a supervisor that answered CONTINUE after failing to read it would let
 * the kernel open the secret. */
RT_API int rt_race_mprotect(const char *secret, double seconds)
{
	struct prot_args p;
	unsigned long tries = 0, ok = 0, efault = 0;
	double end = mono() + seconds;
	pthread_t th;

	p.page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p.page == MAP_FAILED)
		return line("race ERR mmap"), 0;
	snprintf(p.page, 4096, "%s", secret);
	atomic_store(&p.stop, false);
	if (pthread_create(&th, NULL, protector, &p))
		return line("race ERR pthread_create"), 0;
	while (mono() < end && ok < 5) {
		int fd = open(p.page, O_RDONLY | O_CLOEXEC);

		tries++;
		if (fd >= 0) {
			ok++;
			report_fd("race mprotect", fd, NULL);
			close(fd);
		} else if (errno == EFAULT) {
			efault++;
		}
	}
	atomic_store(&p.stop, true);
	pthread_join(th, NULL);
	line("race mprotect tries=%lu ok=%lu efault=%lu", tries, ok, efault);
	return 0;
}

/* execve through a flipping buffer, in forked children (each exec that
 * works ends the child).  The allowed program must exit quietly. */
RT_API int rt_race_exec(const char *allowed, const char *forbidden, const char *marker, double seconds)
{
	unsigned long forks = 0;
	double end = mono() + seconds;

	if (!same_len(allowed, forbidden))
		return 0;
	while (mono() < end) {
		pid_t pid = fork();

		if (pid == 0) {
			char *argv[] = { (char *)"rt", (char *)marker, NULL };
			struct flip f;
			pthread_t th;
			double stop = mono() + 0.2;

			if (flip_start(&f, &th, pbuf, allowed, forbidden, strlen(allowed) + 1))
				_exit(1);
			while (mono() < stop)
				execve(pbuf, argv, environ);
			_exit(0);
		}
		if (pid < 0) {
			line("race exec ERR fork %s", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
			break;
		}
		forks++;
		waitpid(pid, NULL, 0);
		if (access(marker, F_OK) == 0)
			break;
	}
	line("race exec forks=%lu", forks);
	return 0;
}

/* connect through a flipping sockaddr (allowed port / canary port). */
RT_API int rt_race_connect(const char *ip, int allowed_port, int canary_port, double seconds)
{
	static struct sockaddr_in sa;
	struct sockaddr_in a = { .sin_family = AF_INET }, b;
	unsigned long tries = 0, ok = 0;
	double end = mono() + seconds;
	struct flip f;
	pthread_t th;

	inet_pton(AF_INET, ip, &a.sin_addr);
	b = a;
	a.sin_port = htons((uint16_t)allowed_port);
	b.sin_port = htons((uint16_t)canary_port);
	if (flip_start(&f, &th, (char *)&sa, &a, &b, sizeof(sa)))
		return 0;
	while (mono() < end) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (s < 0)
			break;
		tries++;
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			ok++;
			(void)!send(s, "RT-RACE-CONNECT", 15, MSG_NOSIGNAL);
		}
		close(s);
	}
	flip_stop(&f, th);
	line("race connect tries=%lu ok=%lu", tries, ok);
	return 0;
}
