/* Policy helpers: arena, vectors, globs, paths, diagnostics. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pol_int.h"

/* ---- arena ------------------------------------------------------------ */

struct pol_chunk {
	struct pol_chunk *next;
	size_t used, size;
	max_align_t data[];
};

#define POL_CHUNK_MIN 16384

void *pol_alloc(struct pol_arena *a, size_t n)
{
	struct pol_chunk *c = a->head;
	size_t al = _Alignof(max_align_t);
	size_t need = (n + al - 1) / al * al;

	if (!need)
		need = al;
	if (!c || c->size - c->used < need) {
		size_t size = need > POL_CHUNK_MIN ? need : POL_CHUNK_MIN;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		/* A big one-off block goes behind the head so the head keeps its room. */
		if (a->head && need > POL_CHUNK_MIN) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	void *p = (char *)c->data + c->used;
	c->used += need;
	memset(p, 0, need);
	return p;
}

char *pol_strndup(struct pol_arena *a, const char *s, size_t n)
{
	char *d = pol_alloc(a, n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

char *pol_strdup(struct pol_arena *a, const char *s)
{
	return s ? pol_strndup(a, s, strlen(s)) : NULL;
}

char *pol_printf(struct pol_arena *a, const char *fmt, ...)
{
	va_list ap;
	char *tmp = NULL, *r;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	r = pol_strndup(a, tmp, (size_t)n);
	free(tmp);
	return r;
}

void pol_arena_free(struct pol_arena *a)
{
	struct pol_chunk *c = a->head;

	while (c) {
		struct pol_chunk *n = c->next;

		free(c);
		c = n;
	}
	a->head = NULL;
}

/* ---- vectors and buffers ---------------------------------------------- */

void *pol_vec_push(struct pol_vec *vec)
{
	if (vec->n == vec->cap) {
		size_t ncap = vec->cap ? vec->cap * 2 : 8;
		void *n = realloc(vec->v, ncap * vec->elsz);

		if (!n)
			return NULL;
		vec->v = n;
		vec->cap = ncap;
	}
	void *slot = (char *)vec->v + vec->n * vec->elsz;
	memset(slot, 0, vec->elsz);
	vec->n++;
	return slot;
}

void pol_vec_free(struct pol_vec *vec)
{
	free(vec->v);
	vec->v = NULL;
	vec->n = vec->cap = 0;
}

static void buf_vprintf(struct pol_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	if (b->oom)
		return;
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		goto oom;
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;

		while (ncap < b->len + (size_t)n + 1)
			ncap *= 2;
		char *s = realloc(b->s, ncap);
		if (!s)
			goto oom;
		b->s = s;
		b->cap = ncap;
	}
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	b->len += (size_t)n;
	return;
oom:
	b->oom = true;
}

void pol_buf_printf(struct pol_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void pol_buf_puts(struct pol_buf *b, const char *s)
{
	pol_buf_printf(b, "%s", s);
}

/* ---- globs ------------------------------------------------------------ */

/* Match one bracket expression at *pp against c; advances *pp past it.
 * Returns 1 match, 0 no match, -1 malformed (then '[' is a literal). */
static int glob_class(const char **pp, unsigned char c)
{
	const char *p = *pp + 1;
	bool neg = false, hit = false;

	if (*p == '!' || *p == '^') {
		neg = true;
		p++;
	}
	/* A ']' right after the opening is a literal member. */
	bool first = true;
	while (*p && (first || *p != ']')) {
		unsigned char lo = (unsigned char)*p, hi;

		first = false;
		if (lo == '\\' && p[1])
			lo = (unsigned char)*++p;
		p++;
		hi = lo;
		if (*p == '-' && p[1] && p[1] != ']') {
			p++;
			hi = (unsigned char)*p;
			if (hi == '\\' && p[1])
				hi = (unsigned char)*++p;
			p++;
		}
		if (lo <= c && c <= hi)
			hit = true;
	}
	if (*p != ']')
		return -1;
	*pp = p + 1;
	return hit != neg;
}

bool pol_glob_match(const char *pat, const char *s, size_t n)
{
	const char *p = pat, *star_p = NULL;
	size_t i = 0, star_i = 0;

	/* Iterative matching with one backtrack point: enough for `*` that may
	 * cross '/', and linear in practice. */
	while (i < n || *p) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			star_p = p;
			star_i = i;
			continue;
		}
		if (i < n && *p) {
			unsigned char c = (unsigned char)s[i];
			const char *q = p;
			int m;

			if (*q == '?') {
				m = 1;
				q++;
			} else if (*q == '[' && (m = glob_class(&q, c)) >= 0) {
				/* q advanced past the class */
			} else {
				if (*q == '\\' && q[1])
					q++;
				m = (unsigned char)*q == c;
				q++;
			}
			if (m) {
				p = q;
				i++;
				continue;
			}
		}
		if (star_p && star_i < n) {
			p = star_p;
			i = ++star_i;
			continue;
		}
		return false;
	}
	return true;
}

bool pol_star_match(const char *pat, const char *s, size_t n)
{
	const char *p = pat, *star_p = NULL;
	size_t i = 0, star_i = 0;

	while (i < n || *p) {
		if (*p == '*') {
			while (*p == '*')
				p++;
			star_p = p;
			star_i = i;
			continue;
		}
		if (i < n && *p && *p == s[i] && s[i] != '\n') {
			p++;
			i++;
			continue;
		}
		/* `*` does not cross a newline (upstream env globs). */
		if (star_p && star_i < n && s[star_i] != '\n') {
			p = star_p;
			i = ++star_i;
			continue;
		}
		return false;
	}
	return true;
}

double pol_similarity(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row;
	double r;

	if (!la && !lb)
		return 1.0;
	if (la > 256 || lb > 256)
		return 0.0;
	row = calloc(lb + 1, sizeof(*row));
	if (!row)
		return 0.0;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = 0;

		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];

			row[j] = a[i - 1] == b[j - 1] ? diag + 1 : (row[j] > row[j - 1] ? row[j] : row[j - 1]);
			diag = up;
		}
	}
	r = 2.0 * (double)row[lb] / (double)(la + lb);
	free(row);
	return r;
}

/* ---- paths ------------------------------------------------------------ */

char *pol_abspath(const char *path, const char *cwd, const char *home)
{
	char *joined = NULL, *out;
	size_t n, o = 0;

	if (path[0] == '~' && (path[1] == '/' || !path[1]) && home)
		n = (size_t)asprintf(&joined, "%s/%s", home, path + 1);
	else if (path[0] == '/')
		n = (size_t)asprintf(&joined, "%s", path);
	else
		n = (size_t)asprintf(&joined, "%s/%s", cwd ? cwd : "/", path);
	if ((ssize_t)n < 0)
		return NULL;
	out = malloc(n + 2);
	if (!out) {
		free(joined);
		return NULL;
	}
	/* Fold "//", "/./" and "/../" lexically. */
	for (const char *s = joined; *s;) {
		while (*s == '/')
			s++;
		if (!*s)
			break;
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (len == 1 && s[0] == '.') {
			/* nothing */
		} else if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			out[o++] = '/';
			memcpy(out + o, s, len);
			o += len;
		}
		s += len;
	}
	if (!o)
		out[o++] = '/';
	out[o] = 0;
	free(joined);
	return out;
}

static bool under(const char *path, const char *dir, size_t *rest)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/') {
		*rest = 1;
		return true;
	}
	if (strncmp(path, dir, n) || (path[n] && path[n] != '/'))
		return false;
	*rest = path[n] ? n + 1 : n;
	return true;
}

char *pol_display_path(struct pol_arena *a, const char *abs, const char *cwd, const char *home)
{
	size_t rest;

	if (cwd && under(abs, cwd, &rest))
		return pol_strdup(a, abs[rest] ? abs + rest : ".");
	if (home && home[0] && strcmp(home, "/") && under(abs, home, &rest))
		return abs[rest] ? pol_printf(a, "~/%s", abs + rest) : pol_strdup(a, "~");
	return pol_strdup(a, abs);
}

/* ---- context helpers -------------------------------------------------- */

void pol_oom(struct pol_ctx *c)
{
	if (!c->sys_err)
		c->sys_err = -ENOMEM;
}

static void vdiag(struct pol_ctx *c, enum sb_diag_level lvl, const struct pol_line *l,
		  const char *fmt, va_list ap)
{
	if (sb_diag_vadd(c->d, lvl, l ? l->ref.file : "", l ? l->ref.line : 0, fmt, ap) < 0)
		pol_oom(c);
}

void pol_err(struct pol_ctx *c, const struct pol_line *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, SB_DIAG_ERROR, l, fmt, ap);
	va_end(ap);
}

void pol_warn(struct pol_ctx *c, const struct pol_line *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, SB_DIAG_WARNING, l, fmt, ap);
	va_end(ap);
}

const char *pol_ruleref(struct pol_ctx *c, const struct sb_rule_ref *r)
{
	const char *s;

	if (!r->line)
		s = !strcmp(r->file, ".") ? "<arg>" : r->file;
	else
		s = pol_printf(&c->p->arena, "%s(%u)", r->file, r->line);
	if (!s) {
		pol_oom(c);
		return "?";
	}
	return s;
}

bool pol_key_is(const struct pol_line *l, const char *key)
{
	size_t n = strlen(key);

	return l->keylen == n && !strncmp(l->ref.text, key, n) && l->ref.text[n] == '=';
}

const char *pol_getenv(char *const *envp, const char *name, size_t n)
{
	if (!envp)
		return NULL;
	for (char *const *e = envp; *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

struct pol_line *pol_new_line(struct pol_ctx *c)
{
	struct pol_line **slot, *l = pol_alloc(&c->p->arena, sizeof(*l));

	if (!l || !(slot = pol_vec_push(&c->lines)))
		return NULL;
	*slot = l;
	return l;
}
