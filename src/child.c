/* Short-lived helper processes (see child.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"

long long sb_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A pidfd turns "exited or deadline" into one poll.  python-sb needs 5.14,
 * so pidfd_open fails only for lack of descriptors: then the child is
 * waited for as plain waitpid would. */
int sb_child_reap(pid_t pid, long long deadline, bool kill_now, int *status)
{
	int pidfd = kill_now ? -1 : pidfd_open(pid, 0);

	if (pidfd >= 0) {
		struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
		long long left;
		int r;

		do {
			left = deadline - sb_now_ms();
			r = poll(&pfd, 1, left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left);
		} while (r < 0 && errno == EINTR);
		close(pidfd);
		kill_now = r <= 0;
	}
	if (kill_now)
		kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return kill_now ? -ETIMEDOUT : 0;
}
