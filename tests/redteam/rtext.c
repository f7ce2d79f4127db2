/* A C extension module built at test time (tests/redteam/rt.py): native code
 * that neither the agent nor any Python-level guard sees.  Each function
 * returns what it got, as text, for the harness to look for canaries in. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static PyObject *errno_text(const char *what)
{
	return PyUnicode_FromFormat("%s ERR %s", what, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
}

static PyObject *rt_read(PyObject *self, PyObject *args)
{
	const char *path;
	char buf[4096];
	ssize_t n;
	int fd;

	(void)self;
	if (!PyArg_ParseTuple(args, "s", &path))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno_text("ext open");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return errno_text("ext read");
	buf[n] = '\0';
	return PyUnicode_FromFormat("ext READ %s", buf);
}

static PyObject *rt_connect(PyObject *self, PyObject *args)
{
	const char *ip;
	int port, s, rc;
	struct sockaddr_in a = { .sin_family = AF_INET };

	(void)self;
	if (!PyArg_ParseTuple(args, "si", &ip, &port))
		return NULL;
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, ip, &a.sin_addr);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return errno_text("ext socket");
	rc = connect(s, (struct sockaddr *)&a, sizeof(a));
	if (rc == 0)
		(void)!send(s, "RT-EXT-CONNECT", 14, MSG_NOSIGNAL);
	close(s);
	return rc ? errno_text("ext connect") : PyUnicode_FromString("ext connected");
}

static PyObject *rt_spawn(PyObject *self, PyObject *args)
{
	const char *prog, *marker;
	pid_t pid;
	int st = 0;

	(void)self;
	if (!PyArg_ParseTuple(args, "ss", &prog, &marker))
		return NULL;
	pid = fork();
	if (pid == 0) {
		char *argv[] = { (char *)prog, (char *)marker, NULL };

		execv(prog, argv);
		_exit(127);
	}
	if (pid < 0)
		return errno_text("ext fork");
	waitpid(pid, &st, 0);
	return PyUnicode_FromFormat("ext child status %d", st);
}

static PyMethodDef methods[] = {
	{ "read", rt_read, METH_VARARGS, "read a file with open(2)" },
	{ "connect", rt_connect, METH_VARARGS, "connect(2) to ip:port and send a marker" },
	{ "spawn", rt_spawn, METH_VARARGS, "fork(2) and execv(2) a program" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "rtext", NULL, -1, methods, NULL, NULL, NULL, NULL };

PyMODINIT_FUNC PyInit_rtext(void)
{
	return PyModule_Create(&module);
}
