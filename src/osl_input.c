/* What the kernel layers take from the policy: exposures, executables, TCP
 * ports; plus small helpers shared by the layers. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "osl_int.h"

/* ---- string lists ------------------------------------------------------- */

void osl_strv_add(struct osl_strv *s, const char *str)
{
	char *d;

	if (s->oom)
		return;
	if (s->n + 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 16;
		char **nv = realloc(s->v, ncap * sizeof(*nv));

		if (!nv) {
			s->oom = true;
			return;
		}
		s->v = nv;
		s->cap = ncap;
	}
	d = strdup(str);
	if (!d) {
		s->oom = true;
		return;
	}
	s->v[s->n++] = d;
	s->v[s->n] = NULL;
}

void osl_strv_addf(struct osl_strv *s, const char *fmt, ...)
{
	va_list ap;
	char *tmp;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&tmp, fmt, ap);
	va_end(ap);
	if (n < 0) {
		s->oom = true;
		return;
	}
	osl_strv_add(s, tmp);
	free(tmp);
}

void osl_strv_free(struct osl_strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

bool osl_strv_has(const struct osl_strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], str))
			return true;
	return false;
}

bool osl_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

char *osl_which(const char *name, const char *path_env)
{
	const char *p = path_env ? path_env : getenv("PATH");

	if (strchr(name, '/'))
		return access(name, X_OK) ? NULL : realpath(name, NULL);
	if (!p)
		p = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	for (;;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *cand;

		if (n && asprintf(&cand, "%.*s/%s", (int)n, p, name) >= 0) {
			char *canon = access(cand, X_OK) ? NULL : realpath(cand, NULL);

			free(cand);
			if (canon)
				return canon;
		}
		if (!e)
			return NULL;
		p = e + 1;
	}
}

/* ---- gathering ---------------------------------------------------------------- */

static int add_path(struct osl_input *in, const char *path, unsigned access)
{
	if (in->n_paths == in->cap_paths) {
		size_t ncap = in->cap_paths ? in->cap_paths * 2 : 32;
		struct sb_ll_in_path *n = realloc(in->paths, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		in->paths = n;
		in->cap_paths = ncap;
	}
	/* The path strings live in exec_targets / the policy, both outlive `in`. */
	in->paths[in->n_paths].path = path;
	in->paths[in->n_paths++].access = access;
	return 0;
}

static int add_ports(struct sb_ll_in_ports **v, size_t *n, size_t *cap, uint16_t lo, uint16_t hi)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct sb_ll_in_ports *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	(*v)[*n].lo = lo;
	(*v)[(*n)++].hi = hi;
	return 0;
}

/* The PT_INTERP of an ELF file (the dynamic loader execve opens with exec
 * intent), into buf; "" when none. */
static int elf_interp(int fd, char *buf, size_t len)
{
	unsigned char id[EI_NIDENT];
	uint64_t phoff, off = 0, sz = 0;
	unsigned phnum, phentsize;
	bool is64;

	buf[0] = 0;
	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG))
		return 0;
	is64 = id[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			return -EIO;
		phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
	} else {
		Elf32_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			return -EIO;
		phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
	}
	for (unsigned i = 0; i < phnum && i < 256; i++) {
		Elf64_Phdr p64;
		Elf32_Phdr p32;
		off_t at = (off_t)(phoff + (uint64_t)i * phentsize);

		if (is64 ? pread(fd, &p64, sizeof(p64), at) != (ssize_t)sizeof(p64)
			 : pread(fd, &p32, sizeof(p32), at) != (ssize_t)sizeof(p32))
			return -EIO;
		if ((is64 ? p64.p_type : p32.p_type) != PT_INTERP)
			continue;
		off = is64 ? p64.p_offset : p32.p_offset;
		sz = is64 ? p64.p_filesz : p32.p_filesz;
		break;
	}
	if (!sz)
		return 0;
	if (sz >= len)
		return -ENAMETOOLONG;
	if (pread(fd, buf, sz, (off_t)off) != (ssize_t)sz)
		return -EIO;
	buf[sz] = 0;
	return 0;
}

/* The interpreter named by a "#!" line, into buf; "" when none. */
static int shebang_interp(int fd, char *buf, size_t len)
{
	char line[PATH_MAX + 3];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	char *s, *e;

	buf[0] = 0;
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return 0;
	line[n] = 0;
	s = line + 2 + strspn(line + 2, " \t");
	e = s + strcspn(s, " \t\n");
	if (e == s || (size_t)(e - s) >= len)
		return 0;
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = 0;
	return 0;
}

int osl_input_add_exec(struct osl_input *in, const char *path, int depth)
{
	char *canon = realpath(path, NULL);
	char loader[PATH_MAX];
	int fd, rc;

	if (!canon)
		return -errno;
	if (path[0] == '/' && !osl_strv_has(&in->exec_spellings, path))
		osl_strv_add(&in->exec_spellings, path);
	if (osl_strv_has(&in->exec_targets, canon)) {
		free(canon);
		return 0;
	}
	osl_strv_add(&in->exec_targets, canon);
	free(canon);
	if (in->exec_targets.oom || in->exec_spellings.oom)
		return -ENOMEM;
	canon = in->exec_targets.v[in->exec_targets.n - 1];
	rc = add_path(in, canon, SB_ACC_EXEC);
	if (rc || depth >= 3)
		return rc;
	fd = open(canon, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* unreadable: execve would fail anyway */
	rc = elf_interp(fd, loader, sizeof(loader));
	if (!rc && !loader[0])
		rc = shebang_interp(fd, loader, sizeof(loader));
	close(fd);
	if (rc || !loader[0] || loader[0] != '/')
		return rc == -EIO || rc == -ENAMETOOLONG ? 0 : rc;	/* not a loader we can name */
	rc = osl_input_add_exec(in, loader, depth + 1);
	return rc == -ENOENT ? 0 : rc;
}

/* The deepest directory of a glob with no glob character in it. */
static char *glob_base_dir(const char *pattern)
{
	char dir[PATH_MAX];
	size_t n = strcspn(pattern, "*?[");

	if (n >= sizeof(dir))
		return NULL;
	memcpy(dir, pattern, n);
	dir[n] = 0;
	while (n > 1 && dir[n - 1] != '/')
		dir[--n] = 0;
	if (n > 1)
		dir[--n] = 0;	/* drop the trailing slash */
	return realpath(dir, NULL);
}

#define OSL_MAX_GLOB_EXECS 4096

/* An exec= glob is expanded now: Landlock EXECUTE goes to each matching
 * file, so a file created later is not executable (stricter, never wider).
 * With too many matches, the base directory gets EXECUTE (wider: noted). */
static int add_exec_glob(struct osl_input *in, const char *pattern)
{
	glob_t g;
	int rc = 0;

	memset(&g, 0, sizeof(g));
	switch (glob(pattern, GLOB_NOSORT, NULL, &g)) {
	case 0:
		break;
	case GLOB_NOMATCH:
		return 0;
	case GLOB_NOSPACE:
		return -ENOMEM;
	default:
		return -EIO;
	}
	if (g.gl_pathc > OSL_MAX_GLOB_EXECS) {
		char *dir = glob_base_dir(pattern);

		globfree(&g);
		if (!dir)
			return 0;
		if (!osl_strv_has(&in->exec_dirs, dir))
			osl_strv_add(&in->exec_dirs, dir);
		free(dir);
		if (in->exec_dirs.oom)
			return -ENOMEM;
		return add_path(in, in->exec_dirs.v[in->exec_dirs.n - 1], SB_ACC_EXEC);
	}
	for (size_t i = 0; !rc && i < g.gl_pathc; i++) {
		struct stat st;

		if (stat(g.gl_pathv[i], &st) || !S_ISREG(st.st_mode) || !(st.st_mode & 0111))
			continue;
		rc = osl_input_add_exec(in, g.gl_pathv[i], 0);
		if (rc == -ENOENT || rc == -EACCES)
			rc = 0;
	}
	globfree(&g);
	return rc;
}

static int add_exec_rule(const char *pattern, bool glob, void *data)
{
	struct osl_input *in = data;
	int rc;

	if (glob)
		return add_exec_glob(in, pattern);
	rc = osl_input_add_exec(in, pattern, 0);
	return rc == -ENOENT || rc == -EACCES ? 0 : rc;
}

static int count_rule(const char *pattern, bool glob, void *data)
{
	(void)pattern;
	(void)glob;
	++*(size_t *)data;
	return 0;
}

static bool is_loopback(const struct sb_net_rule *r)
{
	static const uint8_t v6_lo[16] = { [15] = 1 };
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (r->family == AF_INET)
		return r->plen >= 8 && r->addr[0] == 127;
	if (r->plen == 128 && !memcmp(r->addr, v6_lo, 16))
		return true;
	return r->plen >= 104 && !memcmp(r->addr, v4mapped, 12) && r->addr[12] == 127;
}

static int gather_net(const struct sb_policy *p, struct osl_input *in)
{
	const struct sb_net_rule *rules;
	size_t n = sb_policy_net_rules(p, &rules);

	for (size_t i = 0; i < n; i++) {
		const struct sb_net_rule *r = &rules[i];

		/* Landlock is a second wall: a port any ALLOW rule opens stays open;
		 * DENY rules and addresses are the supervisor's. */
		if (r->deny || !r->n_ports)
			continue;
		if (!is_loopback(r))
			in->net_needs_host = true;
		if (r->protos & SB_PROTO_UDP)
			in->udp_rules = true;
		if (!(r->protos & SB_PROTO_TCP))
			continue;
		for (size_t k = 0; k < r->n_ports; k++) {
			int rc = 0;

			if (r->dirs & SB_DIR_IN)
				rc = add_ports(&in->bind, &in->n_bind, &in->cap_bind, r->ports[k].lo, r->ports[k].hi);
			if (!rc && (r->dirs & SB_DIR_OUT))
				rc = add_ports(&in->connect, &in->n_connect, &in->cap_connect,
					       r->ports[k].lo, r->ports[k].hi);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int osl_input_gather(const struct sb_policy *p, const char *python_exe, struct osl_input *in)
{
	const struct sb_expose *ex;
	const char *const *files;
	size_t n = sb_policy_exposures(p, &ex), nf = sb_policy_files(p, &files);
	int rc;

	memset(in, 0, sizeof(*in));
	for (size_t i = 0; i < n; i++) {
		rc = add_path(in, ex[i].path, ex[i].write ? SB_ACC_READ | SB_ACC_WRITE : SB_ACC_READ);
		if (rc)
			return rc;
		if (!ex[i].write)
			continue;
		for (size_t f = 0; f < nf; f++)
			if (osl_path_under(files[f], ex[i].path) && !osl_strv_has(&in->protected_in_rw, files[f]))
				osl_strv_add(&in->protected_in_rw, files[f]);
	}
	if (in->protected_in_rw.oom)
		return -ENOMEM;
	/* The interpreter's own first execve is always allowed (SPEC §3). */
	rc = osl_input_add_exec(in, python_exe, 0);
	if (rc)
		return rc;
	in->exec_granted = sb_policy_api_granted(p, SB_API_PROCESS_EXEC);
	if (in->exec_granted) {
		size_t n_rules = 0;

		sb_policy_foreach_exec(p, count_rule, &n_rules);
		/* process-exec without exec= rules: any readable file may run. */
		in->exec_anywhere = n_rules == 0;
		rc = sb_policy_foreach_exec(p, add_exec_rule, in);
		if (rc)
			return rc;
	}
	in->n_ignores = sb_policy_n_ignores(p);
	return gather_net(p, in);
}

void osl_input_free(struct osl_input *in)
{
	free(in->paths);
	free(in->bind);
	free(in->connect);
	osl_strv_free(&in->exec_targets);
	osl_strv_free(&in->exec_spellings);
	osl_strv_free(&in->exec_dirs);
	osl_strv_free(&in->protected_in_rw);
	memset(in, 0, sizeof(*in));
}
