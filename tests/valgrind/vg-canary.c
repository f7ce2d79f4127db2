/* The harness's own proof (make check-valgrind runs it first): under
 * python-sb-vg, `vg-canary leak` must make scan-logs report a leak and
 * `vg-canary uninit` a memcheck error, each on its own, or the valgrind set
 * could not fail.  Both also check that the shim performs a call valgrind
 * 3.19 lacks (pidfd_open). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
# define SYS_pidfd_open 434
#endif

static int __attribute__((noinline)) decide(const int *v)
{
	return *v > 0 ? 1 : 2;
}

int main(int argc, char **argv)
{
	long fd = syscall(SYS_pidfd_open, getpid(), 0);
	int *block;

	if (argc != 2 || fd < 0) {
		perror("vg-canary leak|uninit: pidfd_open (is sb-vg-shim.so preloaded?)");
		return 1;
	}
	close((int)fd);
	block = malloc(64 * sizeof(int));
	if (!block)
		return 1;
	if (strcmp(argv[1], "uninit") == 0) {
		printf("%d\n", decide(&block[3]));	/* never written */
		free(block);
	} else {
		block[0] = 1;
		printf("%d\n", decide(&block[0]));
		block = NULL;	/* the only pointer: definitely lost */
	}
	return 0;
}
