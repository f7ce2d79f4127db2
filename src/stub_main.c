/* python-sb --_sb-stub: our filter innermost under bwrap and firejail.
 *
 * The wrapper runs this binary as the program; the supervisor writes the BPF
 * program it built on the inherited socket (a header, then the
 * instructions), the stub installs it (spawn.c's installer), hands the
 * listener back (wrap_stub.c: one byte with our credentials, the fd number,
 * then a wait for the go-ahead), restores the signals the spawn ignored for
 * the wrapper, and execs the interpreter.  Between the filter and the exec
 * only write/read/close and rt_sigaction run: nothing the filter notifies,
 * so the supervisor's first notification from us is that execve.
 */
#include "fdio.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "oslayer.h"
#include "stub_main.h"
#include "sup_priv.h"

#define STUB_MAGIC 0x31425453u	/* "STB1" */

struct stub_hdr {
	uint32_t magic;
	uint32_t len;		/* instructions */
	uint64_t sig_dfl;
};

extern char **environ;

int sb_stub_send_filter(int sock, const struct sb_filter *f, uint64_t sig_dfl)
{
	struct stub_hdr h = { STUB_MAGIC, f->len, sig_dfl };
	int rc = sb_send_all(sock, &h, sizeof(h));

	return rc ? rc : sb_send_all(sock, f->insns, (size_t)f->len * sizeof(*f->insns));
}

static int recv_filter(int sock, struct sb_filter *f, uint64_t *sig_dfl)
{
	struct stub_hdr h;
	int rc = sb_read_all(sock, &h, sizeof(h));

	if (rc)
		return rc;
	if (h.magic != STUB_MAGIC || h.len == 0 || h.len > 0xffff)
		return -EPROTO;
	f->insns = calloc(h.len, sizeof(*f->insns));
	if (!f->insns)
		return -ENOMEM;
	f->len = (unsigned short)h.len;
	*sig_dfl = h.sig_dfl;
	return sb_read_all(sock, f->insns, (size_t)h.len * sizeof(*f->insns));
}

int sb_stub_main(int argc, char **argv)
{
	struct sb_filter f = { NULL, 0 };
	const char *exe = NULL, *step = "reading the command line";
	char **py_argv = NULL;
	uint64_t sig_dfl = 0;
	bool killable = false;
	int sock = -1, listener, rc;

	rc = sb_oslayer_stub_parse(argc, argv, &sock, &exe, &py_argv);
	if (!rc && fcntl(sock, F_SETFD, FD_CLOEXEC) < 0)
		rc = -errno;
	if (!rc) {
		step = "receiving the filter";
		rc = recv_filter(sock, &f, &sig_dfl);
	}
	if (!rc) {
		step = "installing the filter";
		listener = sb_spawn_install_filter(&f, &killable);
		rc = listener < 0 ? listener : 0;
	}
	sb_filter_free(&f);
	if (!rc) {
		step = "handing the listener over";
		rc = sb_oslayer_send_listener_ex(sock, listener, killable ? SB_OSL_LISTENER_KILLABLE : 0);
		close(listener);
	}
	if (rc) {
		fprintf(stderr, "python-sb: the sandbox stub failed %s: %s\n", step, strerror(-rc));
		return 255;
	}
	close(sock);
	for (int sig = 1; sig <= 64; sig++)
		if (sig_dfl & (UINT64_C(1) << (sig - 1)))
			signal(sig, SIG_DFL);
	execve(exe, py_argv, environ);
	fprintf(stderr, "python-sb: cannot run %s: %s\n", exe, strerror(errno));
	return 127;
}
