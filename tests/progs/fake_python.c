/* A hostile "interpreter" for tests/integration/agent-bytecode.py.
 *
 * Installed by the test as <dir>/bin/python3.99, it is what python-sb runs to
 * compile the agent (argv holds "compileall").  It then tries to escape the
 * confinement python-sb promises for that run, and writes what happened to
 * the report file named in <dir>/attack.conf (the one place it may write:
 * the agent's own __pycache__):
 *
 *   attack.conf:  marker=<path outside the agent>\nport=<TCP port on 127.0.0.1>\n
 *                 report=<path>\n
 *   report:       env=<number of environment entries>
 *                 nnp=<no_new_privs>
 *                 marker=<0 | errno of creating the marker>
 *                 connect=<0 | errno of the TCP connect>
 *                 kill=<0 | errno of signal 0 to python-sb>
 *
 * Run any other way (the program itself) it exits 0 at once. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

struct conf {
	char marker[PATH_MAX], report[PATH_MAX];
	int port;
};

static int read_conf(struct conf *c)
{
	char exe[PATH_MAX], path[PATH_MAX + 32], line[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f;

	if (n < 0)
		return -1;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/../attack.conf", dirname(exe));
	f = fopen(path, "r");
	if (!f)
		return -1;
	memset(c, 0, sizeof(*c));
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "marker=", 7) == 0)
			snprintf(c->marker, sizeof(c->marker), "%s", line + 7);
		else if (strncmp(line, "report=", 7) == 0)
			snprintf(c->report, sizeof(c->report), "%s", line + 7);
		else if (strncmp(line, "port=", 5) == 0)
			c->port = atoi(line + 5);
	}
	fclose(f);
	return c->marker[0] && c->report[0] && c->port > 0 ? 0 : -1;
}

static int try_marker(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	(void)!write(fd, "escaped\n", 8);
	close(fd);
	return 0;
}

static int try_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = 0;

	if (fd < 0)
		return errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		rc = errno;
	else
		(void)!write(fd, "escaped\n", 8);
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	struct conf c;
	size_t env = 0;
	int marker, conn, sig;
	bool compiling = false;
	FILE *out;

	for (int i = 1; i < argc; i++)
		compiling |= strcmp(argv[i], "compileall") == 0;
	if (!compiling)
		return 0;
	for (char **e = environ; e && *e; e++)
		env++;
	if (read_conf(&c) < 0)
		return 2;
	marker = try_marker(c.marker);
	conn = try_connect(c.port);
	sig = kill(getppid(), 0) < 0 ? errno : 0;
	out = fopen(c.report, "w");
	if (!out)
		return 3;
	fprintf(out, "env=%zu\nnnp=%d\nmarker=%d\nconnect=%d\nkill=%d\n", env,
		prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), marker, conn, sig);
	return fclose(out) ? 4 : 0;
}
