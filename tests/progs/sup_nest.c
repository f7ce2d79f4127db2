/* An outer seccomp supervisor: install a filter with a listener (notifying
 * only acct(2), which nobody calls), keep the listener, and run PROG under it.
 * python-sb started this way must fail with EBUSY, said clearly (SPEC §3).
 *
 *   sup_nest PROG [ARGS...]      exits with PROG's status
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_acct, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	int listener, st;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: sup_nest PROG [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 2;
	listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0) {
		fprintf(stderr, "sup_nest: seccomp: %s\n", strerror(errno));
		return 77;
	}
	pid = fork();
	if (pid == 0) {
		close(listener);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	/* The listener stays open here as long as PROG runs. */
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
