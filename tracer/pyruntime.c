/* Locating the CPython runtime of a process (python-frames.md §3):
 * /proc/PID/maps -> libpython or the executable -> ELF symbols -> load bias
 * -> Py_Version -> layout (built-in table or _Py_DebugOffsets). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pyproc.h"
#include "sbelf.h"

#define SB_MAPS_LINE 4608	/* PATH_MAX + the fixed columns */
#define SB_MAX_CANDIDATES 8

struct candidate {
	uint64_t start, end;
	unsigned long inode;
	bool libpython;
	char path[PATH_MAX];
};

static bool is_libpython(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "libpython", 9) == 0 && strstr(base, ".so") != NULL;
}

/* Parse one maps line; false for lines that are not offset-0 file mappings. */
static bool parse_maps_line(const char *line, struct candidate *c)
{
	unsigned long long start, end, off;
	unsigned long inode;
	char perms[8];
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %lu %n", &start, &end, perms, &off, &inode, &pos) < 5 ||
	    pos == 0)
		return false;
	if (off != 0 || inode == 0 || line[pos] != '/')
		return false;
	c->start = start;
	c->end = end;
	c->inode = inode;
	snprintf(c->path, sizeof(c->path), "%s", line + pos);
	c->path[strcspn(c->path, "\n")] = '\0';
	c->libpython = is_libpython(c->path);
	return true;
}

/* libpython mappings and the executable's first mapping; libpython first
 * (with --enable-shared the executable has no _PyRuntime of its own). */
static int find_candidates(pid_t pid, struct candidate *out, size_t cap, size_t *n)
{
	char path[64], exe[PATH_MAX], line[SB_MAPS_LINE];
	ssize_t el;
	FILE *f;
	size_t k = 0;
	bool partial = false;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	el = readlink(path, exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : (errno == EACCES || errno == EPERM ? -EPERM : -errno);
	while (fgets(line, sizeof(line), f)) {
		struct candidate c;
		bool was_partial = partial;

		/* The rest of an over-long line is not the start of a mapping. */
		partial = strchr(line, '\n') == NULL;
		if (was_partial || !parse_maps_line(line, &c))
			continue;
		if (!c.libpython && strcmp(c.path, exe) != 0)
			continue;
		bool dup = false;
		for (size_t i = 0; i < k; i++)
			dup |= out[i].inode == c.inode && strcmp(out[i].path, c.path) == 0;
		if (dup || k == cap)
			continue;
		out[k++] = c;
	}
	fclose(f);
	/* Stable partition: libpython before the executable. */
	for (size_t i = 1; i < k; i++) {
		struct candidate t = out[i];
		size_t j = i;
		while (j > 0 && t.libpython && !out[j - 1].libpython) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = t;
	}
	*n = k;
	return 0;
}

/* The exact mapped file (map_files needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE), else the path inside the target's root, checked
 * against the mapped inode (the file may have been replaced since). */
static int open_mapped(pid_t pid, const struct candidate *c)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, c->start, c->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, c->path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != c->inode) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int read_version(struct sb_pyproc *p, const struct sb_elf_syms *s, uint64_t map_start,
			uint32_t *version)
{
	uint64_t v = 0;
	char cookie[8];

	*version = 0;
	if (s->py_version) {
		int rc = sb_mem_get(&p->mem, sb_elf_runtime_addr(s, map_start, s->py_version), &v);
		if (rc < 0)
			return rc;
		*version = (uint32_t)v;
		return 0;
	}
	/* No Py_Version symbol: 3.10 and older, or a binary stripped of its
	 * symbol tables.  Only 3.13+ can still be recognised (its debug
	 * offsets carry the version). */
	if (sb_mem_read(&p->mem, p->runtime, cookie, sizeof(cookie)) == 0 &&
	    memcmp(cookie, "xdebugpy", 8) == 0 && sb_mem_get(&p->mem, p->runtime + 8, &v) == 0 &&
	    v <= UINT32_MAX)
		*version = (uint32_t)v;
	return 0;
}

static int choose_layout(struct sb_pyproc *p, uint32_t version)
{
	unsigned char blob[SB_PY_DEBUG_OFFSETS_MAX];
	size_t got;
	int rc;

	if (sb_pyversion_major(version) != 3 || sb_pyversion_minor(version) < 11)
		return -ENOENT;
	if (sb_pyversion_minor(version) <= 12)
		return sb_pylayout_builtin(version, &p->lay);
	rc = sb_mem_read_some(&p->mem, p->runtime, blob, sizeof(blob), &got);
	if (rc < 0)
		return rc;
	rc = sb_pylayout_from_debug_offsets(blob, got, version, &p->lay);
	/* Invalid or unknown debug offsets: not a layout we can trust. */
	return rc == -ENOMEM ? rc : (rc < 0 ? -ENOENT : 0);
}

static int try_candidate(struct sb_pyproc *p, const struct candidate *c, bool *needs_libpython)
{
	/* Zeroed: sb_elf_python_syms() leaves it untouched when it fails early. */
	struct sb_elf_syms s = { 0 };
	uint32_t version;
	int fd, rc;

	fd = open_mapped(p->pid, c);
	if (fd < 0)
		return fd == -EACCES || fd == -EPERM ? -EPERM : -ENOENT;
	rc = sb_elf_python_syms(fd, &s);
	close(fd);
	*needs_libpython |= s.needs_libpython;
	if (rc < 0)
		return rc == -ENOMEM ? rc : -ENOENT;
	p->runtime = sb_elf_runtime_addr(&s, c->start, s.runtime);
	p->code_type = s.code_type ? sb_elf_runtime_addr(&s, c->start, s.code_type) : 0;
	rc = read_version(p, &s, c->start, &version);
	if (rc < 0)
		return rc;
	rc = choose_layout(p, version);
	if (rc < 0)
		return rc;
	snprintf(p->image, sizeof(p->image), "%s", c->path);
	return 0;
}

static bool same_pid_namespace(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat("/proc/self/ns/pid", &a) < 0 || stat(path, &b) < 0)
		return false;	/* unknown: translate through NSpid */
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

int sb_pyproc_open(pid_t pid, struct sb_pyproc **out)
{
	struct candidate *cand = NULL;
	struct sb_pyproc *p;
	size_t n = 0;
	bool needs_libpython = false, have_libpython = false;
	int rc;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	cand = calloc(SB_MAX_CANDIDATES, sizeof(*cand));
	if (!p || !cand) {
		rc = -ENOMEM;
		goto out;
	}
	p->pid = pid;
	p->mem.fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	rc = sb_mem_open(&p->mem, pid);
	if (rc < 0)
		goto out;
	rc = find_candidates(pid, cand, SB_MAX_CANDIDATES, &n);
	if (rc < 0)
		goto out;
	rc = -ENOENT;
	for (size_t i = 0; i < n && rc < 0; i++) {
		have_libpython |= cand[i].libpython;
		rc = try_candidate(p, &cand[i], &needs_libpython);
		if (rc == -ESRCH || rc == -ENOMEM)
			break;
	}
	/* A shared-library build seen while the dynamic loader is still at
	 * work: the runtime is not mapped yet. */
	if (rc == -ENOENT && needs_libpython && !have_libpython)
		rc = -EAGAIN;
	if (rc < 0)
		goto out;
	p->same_pidns = same_pid_namespace(pid);
	*out = p;
	p = NULL;
out:
	free(cand);
	sb_pyproc_free(p);
	return rc;
}

void sb_pyproc_free(struct sb_pyproc *p)
{
	if (!p)
		return;
	sb_mem_close(&p->mem);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

unsigned sb_pyproc_version(const struct sb_pyproc *p)
{
	return p->lay.version;
}
