/* Lexing of rule files: comments, template placeholders, `include`, the
 * command-line rules, and ${VAR} / ${VAR:-default} substitution (reference §2.1). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pol_int.h"

#define POL_MAX_FILE (16u << 20)	/* a rule file is text; refuse absurd sizes */
#define POL_MAX_SUBST_DEPTH 32

static int read_text(const char *path, char **out)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, rc = 0;

	/* O_NONBLOCK: an include naming a FIFO must not hang the loader. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= POL_MAX_FILE) {
				rc = -EFBIG;
				goto out;
			}
			char *n = realloc(buf, cap ? cap * 2 : 8192);
			if (!n) {
				rc = -ENOMEM;
				goto out;
			}
			buf = n;
			cap = cap ? cap * 2 : 8192;
		}
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	*out = buf;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

/* Strip, then cut a '#' comment that is outside single or double quotes; an
 * escaped quote inside quotes does not close them.  In place; returns the
 * start of the cleaned text. */
static char *clean_line(char *s)
{
	char quote = 0;

	while (isspace((unsigned char)*s))
		s++;
	for (char *p = s; *p; p++) {
		if (!quote && (*p == '"' || *p == '\'')) {
			quote = *p;
		} else if (quote && *p == quote) {
			if (p == s || p[-1] != '\\')
				quote = 0;
		} else if (!quote && *p == '#') {
			*p = 0;
			break;
		}
	}
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = 0;
	return s;
}

static void split_key(struct pol_line *l)
{
	const char *eq = strchr(l->ref.text, '=');

	l->keylen = eq ? (size_t)(eq - l->ref.text) : strlen(l->ref.text);
	l->value = eq ? eq + 1 : "";
}

static int add_line(struct pol_ctx *c, const char *file, const char *abs_file, unsigned ln,
		    const char *text, bool cli)
{
	struct pol_line *l = pol_new_line(c);

	if (!l)
		return -ENOMEM;
	l->ref.file = file;
	l->ref.line = ln;
	l->ref.text = pol_strdup(&c->p->arena, text);
	l->abs_file = abs_file;
	l->cli = cli;
	if (!l->ref.text)
		return -ENOMEM;
	split_key(l);
	return 0;
}

/* `include "path"` / `include? "path"`: returns the quoted path (in place) or NULL. */
static char *match_include(char *s, bool *optional)
{
	size_t n;

	if (strncmp(s, "include", 7))
		return NULL;
	s += 7;
	*optional = *s == '?';
	if (*optional)
		s++;
	if (!isspace((unsigned char)*s))
		return NULL;
	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	/* Greedy like the upstream regex: from the first to the last quote. */
	if (n < 3 || s[0] != '"' || s[n - 1] != '"')
		return NULL;
	s[n - 1] = 0;
	return s + 1;
}

static bool seen_file(struct pol_ctx *c, const char *canon)
{
	for (size_t i = 0; i < c->seen_files.n; i++)
		if (!strcmp(*POL_VEC_AT(&c->seen_files, char *, i), canon))
			return true;
	return false;
}

static int remember_file(struct pol_ctx *c, const char *canon, bool protect)
{
	char **slot = pol_vec_push(&c->seen_files);

	if (!slot)
		return -ENOMEM;
	*slot = pol_strdup(&c->p->arena, canon);
	if (!*slot)
		return -ENOMEM;
	if (protect) {
		const char **f = pol_vec_push(&c->p->files);
		if (!f)
			return -ENOMEM;
		*f = *slot;
	}
	return 0;
}

static int read_file_lines(struct pol_ctx *c, const char *abs, const char *text);

static int do_include(struct pol_ctx *c, const struct pol_line *at, const char *including_abs,
		      const char *path, bool optional)
{
	char *abs = NULL, *canon = NULL, *text = NULL, *dir = NULL;
	int rc = 0;

	if (strchr(path, '/')) {
		abs = pol_abspath(path, c->cwd, c->home);
	} else {
		dir = strdup(including_abs);
		if (!dir)
			return -ENOMEM;
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = 0;
		abs = pol_abspath(path, dir, c->home);
	}
	if (!abs) {
		rc = -ENOMEM;
		goto out;
	}
	canon = realpath(abs, NULL);
	if (!canon) {
		/* A missing include is ignored: profiles may name optional files. */
		if (errno != ENOENT && errno != ENOTDIR && !optional)
			pol_err(c, at, "In '%s', cannot read the included file '%s': %s.", at->ref.text, path,
				strerror(errno));
		goto out;
	}
	if (seen_file(c, canon))
		goto out;
	rc = read_text(canon, &text);
	if (rc == -ENOMEM)
		goto out;
	if (rc < 0) {
		if (!optional)
			pol_err(c, at, "In '%s', cannot read the included file '%s': %s.", at->ref.text, path,
				strerror(-rc));
		rc = 0;
		goto out;
	}
	rc = remember_file(c, canon, true);
	if (!rc)
		rc = read_file_lines(c, canon, text);
out:
	free(dir);
	free(abs);
	free(canon);
	free(text);
	return rc;
}

static int read_file_lines(struct pol_ctx *c, const char *abs, const char *text)
{
	const char *file = pol_display_path(&c->p->arena, abs, c->cwd, c->home);
	const char *abs_file = pol_strdup(&c->p->arena, abs);
	char *copy = strdup(text);
	char *save = NULL;
	unsigned ln = 0;
	int rc = 0;

	if (!file || !abs_file || !copy) {
		free(copy);
		return -ENOMEM;
	}
	/* strtok_r would merge empty lines and shift numbers: split by hand. */
	for (char *s = copy; s && !rc; s = save) {
		char *nl = strchr(s, '\n');
		bool optional;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		ln++;
		char *t = clean_line(s);
		if (!*t || *t == '{')
			continue;
		const char *orig = strncmp(t, "include", 7) ? NULL : pol_strdup(&c->p->arena, t);
		char *inc = orig ? match_include(t, &optional) : NULL;
		if (inc) {
			struct pol_line at = { .ref = { .file = file, .line = ln, .text = orig } };
			rc = do_include(c, &at, abs, inc, optional);
			continue;
		}
		rc = add_line(c, file, abs_file, ln, t, false);
	}
	free(copy);
	return rc;
}

int pol_read_all(struct pol_ctx *c, const char *config_abs, bool exists, const char *template_path)
{
	const char *base = exists ? config_abs : template_path;
	char *text = NULL;
	int rc;

	/* Command-line rules come first, as upstream builds its line list. */
	for (size_t i = 0; i < c->o->n_cli_rules; i++) {
		const char *r = c->o->cli_rules[i];
		char *tmp = NULL;

		if (!r)
			continue;
		if (!strchr(r, '=') && asprintf(&tmp, "%s=", r) < 0)
			return -ENOMEM;
		rc = add_line(c, ".", "", 0, tmp ? tmp : r, true);
		free(tmp);
		if (rc)
			return rc;
	}
	if (!base) {
		pol_err(c, NULL, "No rule file and no template to start learning from.");
		return 0;
	}
	/* The active rule file is protected even before learning creates it. */
	rc = remember_file(c, config_abs, true);
	if (rc)
		return rc;
	rc = read_text(base, &text);
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		struct pol_line at = { .ref = { .file = pol_display_path(&c->p->arena, base, c->cwd, c->home) } };
		if (!at.ref.file)
			return -ENOMEM;
		pol_err(c, &at, "Cannot read %s '%s': %s.", exists ? "the rule file" : "the template", base,
			strerror(-rc));
		return 0;
	}
	if (!exists && strcmp(base, config_abs) && (rc = remember_file(c, base, false)))
		goto out;
	rc = read_file_lines(c, base, text);
out:
	free(text);
	return rc;
}

/* ---- ${} substitution ------------------------------------------------- */

static bool is_name0(char ch)
{
	return isalpha((unsigned char)ch) || ch == '_';
}

static bool is_name(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_';
}

/* Parse one ${...} form at s[*pos] == '$'.  Appends its value to out when
 * `emit`.  The value of a variable is copied, never rescanned. */
static bool exp_form(const char *s, size_t *pos, char *const *envp, struct pol_buf *out, int depth, bool emit)
{
	size_t i = *pos + 2, name0 = i;
	const char *val;
	bool use_default;

	if (!is_name0(s[i]))
		return false;
	while (is_name(s[i]))
		i++;
	val = pol_getenv(envp, s + name0, i - name0);
	if (s[i] == '}') {
		if (emit && val)
			pol_buf_puts(out, val);
		*pos = i + 1;
		return true;
	}
	if (s[i] != ':' || s[i + 1] != '-')
		return false;
	i += 2;
	use_default = !val || !*val;
	while (s[i] && s[i] != '}') {
		if (s[i] == '$' && s[i + 1] == '{') {
			if (depth >= POL_MAX_SUBST_DEPTH || !exp_form(s, &i, envp, out, depth + 1, emit && use_default))
				return false;
			continue;
		}
		if (emit && use_default)
			pol_buf_printf(out, "%c", s[i]);
		i++;
	}
	if (s[i] != '}')
		return false;
	if (emit && !use_default)
		pol_buf_puts(out, val);
	*pos = i + 1;
	return true;
}

/* The bad form for the message: from "${" to its matching '}' (or the end). */
static char *bad_form(const char *s)
{
	int depth = 0;
	size_t i = 0;

	for (; s[i]; i++) {
		if (s[i] == '{')
			depth++;
		else if (s[i] == '}' && --depth == 0) {
			i++;
			break;
		}
	}
	return strndup(s, i);
}

char *pol_expand(const char *in, char *const *envp, char **bad, bool *any_subst)
{
	struct pol_buf out = { 0 };
	size_t i = 0;

	*bad = NULL;
	if (any_subst)
		*any_subst = false;
	pol_buf_puts(&out, "");
	while (in[i]) {
		if (in[i] == '$' && in[i + 1] == '{') {
			size_t at = i;

			if (any_subst)
				*any_subst = true;
			if (!exp_form(in, &i, envp, &out, 0, true)) {
				free(out.s);
				*bad = bad_form(in + at);
				return NULL;
			}
			continue;
		}
		pol_buf_printf(&out, "%c", in[i]);
		i++;
	}
	if (out.oom) {
		free(out.s);
		return NULL;
	}
	return out.s;
}

void pol_substitute_lines(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);
		char *bad = NULL, *x;

		/* env= and unenv= values are expanded when the environment is built. */
		if (l->claimed || pol_key_is(l, "env") || pol_key_is(l, "unenv") || !strstr(l->ref.text, "${"))
			continue;
		x = pol_expand(l->ref.text, c->o->envp, &bad, NULL);
		if (!x) {
			if (!bad) {
				pol_oom(c);
				return;
			}
			pol_err(c, l, "In '%s', invalid substitution '%s': use ${NAME} or ${NAME:-default}.",
				l->ref.text, bad);
			free(bad);
			l->claimed = true;
			continue;
		}
		l->ref.text = pol_strdup(&c->p->arena, x);
		free(x);
		if (!l->ref.text) {
			pol_oom(c);
			return;
		}
		split_key(l);
	}
}
