/* Merging learned lines into the rule file (reference §3 "Merge").
 *
 * A new file starts from the template; an existing one is copied to
 * <name>.old (then .old_1, .old_2...) and edited.  The lines of each block go
 * just before its "# </learning_guard_xxx>" end marker, under a dated
 * "# Add rules (...)" header and followed by a blank line; a line the file
 * already has verbatim is skipped; a block whose marker is missing goes at
 * the end.  The file is replaced atomically (a temporary file in the same
 * directory, fsync, rename, fsync of the directory) with the old file's
 * permissions, so a crash leaves either the old or the new file, never half
 * of one.  Nothing is written when nothing is new.
 */
#include "fdio.h"
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "learn_int.h"

#define TEMPLATE_NAME "py-sandboxes.template"

/* Used when no template can be found: the markers are what matters. */
static const char builtin_template[] =
	"# py-sandboxes rule file, written by python-sb in learning mode.\n"
	"# Review every line: a learning run lets the program write its own permissions.\n"
	"\n"
	"# <learning_guard_envs>\n# </learning_guard_envs>\n\n"
	"# <learning_guard_files>\n# </learning_guard_files>\n\n"
	"# <learning_guard_socket>\n# </learning_guard_socket>\n\n"
	"# <learning_guard_import>\n# </learning_guard_import>\n\n"
	"# <learning_guard_api>\n# </learning_guard_api>\n\n"
	"# <learning_guard_eval>\n# </learning_guard_eval>\n\n"
	"# <learning_remote_result>\n# </learning_remote_result>\n";

/* ---- lines ------------------------------------------------------------ */

struct lines {
	char **v;	/* owned */
	size_t n, cap;
};

static void lines_free(struct lines *ls)
{
	for (size_t i = 0; i < ls->n; i++)
		free(ls->v[i]);
	free(ls->v);
	memset(ls, 0, sizeof(*ls));
}

static int lines_push(struct lines *ls, const char *s, size_t n)
{
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? ls->cap * 2 : 64;
		char **nv = realloc(ls->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		ls->v = nv;
		ls->cap = cap;
	}
	if (!(ls->v[ls->n] = strndup(s, n)))
		return -ENOMEM;
	ls->n++;
	return 0;
}

/* Split on '\n' as upstream does (a final newline gives a last empty line,
 * so joining with '\n' restores the text exactly). */
static int lines_split(const char *text, struct lines *out)
{
	const char *p = text, *nl;
	int rc;

	while ((nl = strchr(p, '\n'))) {
		if ((rc = lines_push(out, p, (size_t)(nl - p))))
			return rc;
		p = nl + 1;
	}
	return lines_push(out, p, strlen(p));
}

/* `s` without surrounding blanks, in buf. */
static const char *trimmed(const char *s, char *buf, size_t cap)
{
	size_t n;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	snprintf(buf, cap, "%s", s);
	n = strlen(buf);
	while (n && (buf[n - 1] == ' ' || buf[n - 1] == '\t' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return buf;
}

/* Does the file already hold `rule` (alone on a line, or before a comment)? */
static bool file_has(const struct lines *ls, const char *rule)
{
	char buf[PATH_MAX + 1024];
	size_t n = strlen(rule);

	for (size_t i = 0; i < ls->n; i++) {
		const char *t = trimmed(ls->v[i], buf, sizeof(buf));

		if (strncmp(t, rule, n) != 0)
			continue;
		t += n;
		while (*t == ' ' || *t == '\t')
			t++;
		if (*t == '\0' || *t == '#')
			return true;
	}
	return false;
}

static bool is_end_marker(const char *line, const char *name)
{
	char buf[256], want[128];

	snprintf(want, sizeof(want), "# </%s>", name);
	return strcmp(trimmed(line, buf, sizeof(buf)), want) == 0;
}

static bool has_marker(const struct lines *ls, const char *name)
{
	for (size_t i = 0; i < ls->n; i++)
		if (is_end_marker(ls->v[i], name))
			return true;
	return false;
}

/* ---- choosing what is new --------------------------------------------- */

/* The lines of one block that the file lacks, with their comments; a group
 * header goes only when one of its rules does. */
static int filter_block(const struct lblockv *bv, const struct lines *file, struct lines *out)
{
	const char *header = NULL, *note = NULL;
	int rc = 0;

	for (size_t i = 0; i < bv->n && !rc; i++) {
		const struct lline *ln = &bv->v[i];

		if (ln->kind == LL_HEADER) {
			header = ln->text;
			continue;
		}
		if (ln->kind == LL_NOTE) {
			note = ln->text;
			continue;
		}
		if (file_has(file, ln->text)) {
			note = NULL;
			continue;
		}
		if (header) {
			rc = lines_push(out, header, strlen(header));
			header = NULL;
		}
		if (!rc && note) {
			rc = lines_push(out, note, strlen(note));
			note = NULL;
		}
		if (!rc)
			rc = lines_push(out, ln->text, strlen(ln->text));
		if (!rc && ln->why)
			rc = lines_push(out, ln->why, strlen(ln->why));
	}
	return rc;
}

/* An expose-rw= learned for a directory the file exposes read-only: the
 * loader refuses the same directory twice with two modes, so the old line is
 * kept as a comment. */
static int supersede_ro(struct lines *file, const struct lines *added, const char *stamp)
{
	char buf[PATH_MAX + 1024], want[PATH_MAX + 64];

	for (size_t a = 0; a < added->n; a++) {
		if (strncmp(added->v[a], "expose-rw=", 10) != 0)
			continue;
		snprintf(want, sizeof(want), "expose-ro=%s", added->v[a] + 10);
		for (size_t i = 0; i < file->n; i++) {
			char *repl;

			if (strcmp(trimmed(file->v[i], buf, sizeof(buf)), want) != 0)
				continue;
			if (asprintf(&repl, "# %s   # superseded by %s learned on %s", want, added->v[a],
				     stamp) < 0)
				return -ENOMEM;
			free(file->v[i]);
			file->v[i] = repl;
		}
	}
	return 0;
}

/* ---- composing -------------------------------------------------------- */

struct compose {
	struct lines add[LB__COUNT];	/* new lines per block */
	bool done[LB__COUNT];
	char header[64];		/* "# Add rules (YYYY/MM/DD at HH:MM)" */
	char stamp[32];			/* "YYYY/MM/DD at HH:MM" */
};

static void compose_free(struct compose *c)
{
	for (int b = 0; b < LB__COUNT; b++)
		lines_free(&c->add[b]);
}

static void emit_block(struct sbuf *out, const struct compose *c, int b)
{
	sbuf_add(out, c->header);
	sbuf_add(out, "\n");
	for (size_t i = 0; i < c->add[b].n; i++) {
		sbuf_add(out, c->add[b].v[i]);
		sbuf_add(out, "\n");
	}
	sbuf_add(out, "\n");
}

/* The new text: every block before its end marker, the rest at the end. */
static int compose_text(const struct lines *file, struct compose *c, char **text)
{
	struct sbuf out = { 0 };
	bool tail = false;

	for (size_t i = 0; i < file->n; i++) {
		for (int b = 0; b < LB__COUNT; b++)
			if (!c->done[b] && c->add[b].n && is_end_marker(file->v[i], sb_learn_block_marker(b))) {
				emit_block(&out, c, b);
				c->done[b] = true;
			}
		sbuf_add(&out, file->v[i]);
		if (i + 1 < file->n)
			sbuf_add(&out, "\n");
	}
	for (int b = 0; b < LB__COUNT; b++) {
		if (c->done[b] || !c->add[b].n)
			continue;
		if (!tail) {
			/* Upstream: one header, then each block's lines. */
			if (out.len && out.s[out.len - 1] != '\n')
				sbuf_add(&out, "\n");
			sbuf_add(&out, c->header);
			sbuf_add(&out, "\n");
			tail = true;
		}
		for (size_t i = 0; i < c->add[b].n; i++) {
			sbuf_add(&out, c->add[b].v[i]);
			sbuf_add(&out, "\n");
		}
		sbuf_add(&out, "\n");
	}
	if (out.oom) {
		free(out.s);
		return -ENOMEM;
	}
	*text = out.s ? out.s : strdup("");
	return *text ? 0 : -ENOMEM;
}

/* ---- files ------------------------------------------------------------ */

static int read_file(const char *path, char **out)
{
	FILE *f = fopen(path, "re");
	struct sbuf b = { 0 };
	char chunk[8192];
	size_t n;
	int rc = 0;

	*out = NULL;
	if (!f)
		return -errno;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sbuf_addn(&b, chunk, n);
	if (ferror(f))
		rc = -EIO;
	fclose(f);
	if (!rc && b.oom)
		rc = -ENOMEM;
	if (rc) {
		free(b.s);
		return rc;
	}
	*out = b.s ? b.s : strdup("");
	return *out ? 0 : -ENOMEM;
}

/* The process umask without changing it (umask(2) would, for every thread). */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[128];
	unsigned m = 022;

	if (!f)
		return 022;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	fclose(f);
	return (mode_t)m;
}

static int fsync_dir_of(const char *path)
{
	char *copy = strdup(path);
	int fd, rc = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL)
		rc = -errno;
	close(fd);
	return rc;
}

/* Write `data` to `path` through a temporary file in the same directory;
 * `old` (NULL for a new file) gives the mode and owner to keep. */
static int write_atomic(const char *path, const char *data, const struct stat *old)
{
	char *copy = strdup(path), *tmp = NULL;
	mode_t mode = old ? old->st_mode & 07777 : 0666 & ~current_umask();
	int fd = -1, rc;

	if (!copy)
		return -ENOMEM;
	rc = asprintf(&tmp, "%s/.%s.XXXXXX", dirname(copy), strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	free(copy);
	if (rc < 0)
		return -ENOMEM;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	/* Ownership first: chown clears set-id bits that fchmod then restores. */
	if (old && fchown(fd, old->st_uid, old->st_gid) < 0 && errno != EPERM) {
		rc = -errno;
		goto out;
	}
	if (fchmod(fd, mode) < 0 || (rc = sb_write_all(fd, data, strlen(data))) < 0 || fsync(fd) < 0) {
		rc = rc ? rc : -errno;
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		rc = -errno;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		rc = -errno;
		goto out;
	}
	free(tmp);
	return fsync_dir_of(path);
out:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return rc;
}

/* <path>.old, else <path>.old_1, .old_2... (the first free one). */
static char *backup_name(const char *path)
{
	char *name;

	for (unsigned i = 0;; i++) {
		int rc = i ? asprintf(&name, "%s.old_%u", path, i) : asprintf(&name, "%s.old", path);

		if (rc < 0)
			return NULL;
		if (access(name, F_OK) < 0 && errno == ENOENT)
			return name;
		free(name);
	}
}

/* Copy the old file's bytes and mode; O_EXCL: never clobber a backup. */
static int write_backup(const char *name, const char *data, const struct stat *st)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, st->st_mode & 07777);
	int rc;

	if (fd < 0)
		return -errno;
	/* open() applied the umask; the backup keeps the original's mode. */
	rc = fchmod(fd, st->st_mode & 07777) < 0 ? -errno : 0;
	if (!rc)
		rc = sb_write_all(fd, data, strlen(data));
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (rc)
		unlink(name);
	return rc;
}

/* ---- message ---------------------------------------------------------- */

/* Relative to the launching directory when inside it, as upstream prints. */
static const char *shown(const struct sb_learn *l, const char *path)
{
	size_t n = strlen(l->cwd);

	if (strncmp(path, l->cwd, n) == 0 && path[n] == '/' && n > 1)
		return path + n + 1;
	return path;
}

static bool has_learn_line(const char *text)
{
	struct lines ls = { 0 };
	char buf[PATH_MAX + 64];
	bool found = false;

	if (lines_split(text, &ls))
		return false;
	for (size_t i = 0; i < ls.n && !found; i++) {
		const char *t = trimmed(ls.v[i], buf, sizeof(buf));

		found = strncmp(t, "learn=", 6) == 0 && strcmp(t + 6, "false") != 0;
	}
	lines_free(&ls);
	return found;
}

static int make_message(const struct sb_learn *l, const char *path, const char *backup,
			const char *text, char **message)
{
	struct sbuf m = { 0 };

	sbuf_printf(&m, "Write all learning rules in '%s'.", shown(l, path));
	if (has_learn_line(text))
		sbuf_add(&m, " Remove the 'learn' parameter to use the sandboxes.");
	if (backup)
		sbuf_printf(&m, "\nThe old version is here '%s'.", shown(l, backup));
	sbuf_add(&m, "\nCheck and update this file to validate the rules.");
	if (m.oom) {
		free(m.s);
		return -ENOMEM;
	}
	*message = m.s;
	return 0;
}

/* ---- entry points ----------------------------------------------------- */

/* The base text: the existing file, else the template, else the built-in
 * skeleton (with a warning: the learned lines must not be lost). */
static int base_text(const struct sb_learn *l, const char *path, const char *template_path,
		     struct stat *st, bool *exists, char **text, struct sb_diag *diag)
{
	char *tpl = NULL;
	int rc;

	*exists = stat(path, st) == 0;
	if (*exists) {
		if (!S_ISREG(st->st_mode)) {
			sb_diag_error(diag, path, 0, "cannot write the learned rules: not a regular file");
			return -EINVAL;
		}
		if ((rc = read_file(path, text)))
			sb_diag_error(diag, path, 0, "cannot read it to merge the learned rules: %s",
				      strerror(-rc));
		return rc;
	}
	if (template_path)
		tpl = strdup(template_path);
	else if ((rc = sb_learn_data_path(l, TEMPLATE_NAME, &tpl)) == -ENOMEM)
		return rc;
	if (tpl && (rc = read_file(tpl, text)) == 0) {
		free(tpl);
		return 0;
	}
	sb_diag_warn(diag, tpl ? tpl : "", 0, "cannot read the template (%s): the learned file "
		     "gets the learning markers only", tpl ? strerror(-rc) : TEMPLATE_NAME " not found");
	free(tpl);
	*text = strdup(builtin_template);
	return *text ? 0 : -ENOMEM;
}

static void date_header(struct compose *c)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(c->stamp, sizeof(c->stamp), "%Y/%m/%d at %H:%M", &tm);
	snprintf(c->header, sizeof(c->header), "# Add rules (%s)", c->stamp);
}

/* New lines per block; exec= lines join the files block unless the file has
 * its own learning_guard_exec block. */
static int choose_lines(const struct lrules *r, const struct lines *file, struct compose *c)
{
	bool exec_block = has_marker(file, sb_learn_block_marker(LB_EXEC));
	int rc = 0;

	for (int b = 0; b < LB__COUNT && !rc; b++) {
		int to = b == LB_EXEC && !exec_block ? LB_FILES : b;

		rc = filter_block(&r->b[b], file, &c->add[to]);
	}
	return rc;
}

static size_t total(const struct compose *c)
{
	size_t n = 0;

	for (int b = 0; b < LB__COUNT; b++)
		n += c->add[b].n;
	return n;
}

/* A symbolic link to the rule file is followed: the link stays a link. */
static char *target_of(const char *path)
{
	struct stat st;
	char *real;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && (real = realpath(path, NULL)))
		return real;
	return strdup(path);
}

/* `path` is the file to rewrite (a link's target), `shown_path` the name
 * the user gave, for the message. */
static int merge_and_write(struct sb_learn *l, const char *path, const char *shown_path,
			   const struct lrules *r, const char *template_path, char **message,
			   struct sb_diag *diag)
{
	struct compose c = { 0 };
	struct lines file = { 0 };
	struct stat st;
	bool exists;
	char *base = NULL, *text = NULL, *backup = NULL;
	int rc;

	if ((rc = base_text(l, path, template_path, &st, &exists, &base, diag)))
		return rc;
	if ((rc = lines_split(base, &file)) || (rc = choose_lines(r, &file, &c)))
		goto out;
	if (!total(&c))
		goto out;	/* everything learned is in the file already */
	date_header(&c);
	if ((rc = supersede_ro(&file, &c.add[LB_FILES], c.stamp)) || (rc = compose_text(&file, &c, &text)))
		goto out;
	if (exists) {
		rc = -ENOMEM;
		if (!(backup = backup_name(path)))
			goto out;
		if ((rc = write_backup(backup, base, &st))) {
			sb_diag_error(diag, backup, 0, "cannot write the backup: %s", strerror(-rc));
			goto out;
		}
	}
	if ((rc = write_atomic(path, text, exists ? &st : NULL))) {
		sb_diag_error(diag, path, 0, "cannot write the learned rules: %s", strerror(-rc));
		goto out;
	}
	rc = make_message(l, shown_path, backup, text, message);
out:
	compose_free(&c);
	lines_free(&file);
	free(base);
	free(text);
	free(backup);
	return rc;
}

int sb_learn_write(struct sb_learn *l, const char *path, const char *template_path,
		   char **message, struct sb_diag *diag)
{
	struct lrules r;
	char *target;
	int rc;

	*message = NULL;
	if ((rc = sb_learn_generate(l, &r, diag)))
		return rc;
	if (!sb_lrules_count(&r)) {
		sb_lrules_free(&r);
		return 0;
	}
	if (!(target = target_of(path))) {
		sb_lrules_free(&r);
		return -ENOMEM;
	}
	pthread_mutex_lock(&l->lock);
	rc = merge_and_write(l, target, path, &r, template_path, message, diag);
	pthread_mutex_unlock(&l->lock);
	free(target);
	sb_lrules_free(&r);
	return rc;
}

int sb_learn_lines(struct sb_learn *l, char **text, struct sb_diag *diag)
{
	struct lrules r;
	struct sbuf b = { 0 };
	int rc;

	*text = NULL;
	if ((rc = sb_learn_generate(l, &r, diag)))
		return rc;
	for (int blk = 0; blk < LB__COUNT; blk++)
		for (size_t i = 0; i < r.b[blk].n; i++) {
			sbuf_add(&b, r.b[blk].v[i].text);
			sbuf_add(&b, "\n");
			if (r.b[blk].v[i].why) {
				sbuf_add(&b, r.b[blk].v[i].why);
				sbuf_add(&b, "\n");
			}
		}
	sb_lrules_free(&r);
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*text = b.s ? b.s : strdup("");
	return *text ? 0 : -ENOMEM;
}
