/* Generalisation: from what the program did to the lines of a rule file
 * (reference §3, SPEC §5).
 *
 * Each family has its own rules, and they are exact requirements because
 * users diff learned files against upstream's: files become directories
 * spelled relative to the tool directories, the cwd, HOME or the temporary
 * directory; addresses become the names the program resolved; values that
 * came from the environment are written as ${VAR}; imports are classified;
 * API calls grouped by category.  Nothing here asks the policy: the recorder
 * already dropped what it allows.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn_int.h"
#include "log.h"

/* ---- what can be written --------------------------------------------- */

/* Learned values come from the program, which may be hostile: a directory
 * named "x\nexpose-rw=/", "a#b" (the rest becomes a comment), "${HOME}"
 * (expanded when the file loads), "a,b" or "a|b" (field separators) would
 * write another rule than the one learned.  Such values are not learned (a
 * warning names them); there is no escape syntax that the loader would undo. */
static bool safe_value(const char *s)
{
	size_t n = strlen(s);

	if (!n || s[0] == ' ' || s[n - 1] == ' ')
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || strchr("#\"'$,|\\", *p))
			return false;
	return true;
}

/* Names with a fixed alphabet: host names, modules, qualified functions. */
static bool name_of(const char *s, const char *extra)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && !strchr(extra, *s))
			return false;
	return true;
}

static void skip_warn(struct sb_diag *d, const char *what, const char *value)
{
	char shown[256];
	size_t o = 0;

	if (!d)
		return;
	for (const unsigned char *p = (const unsigned char *)value; *p && o + 5 < sizeof(shown); p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\')
			o += (size_t)snprintf(shown + o, sizeof(shown) - o, "\\x%02x", *p);
		else
			shown[o++] = (char)*p;
	}
	shown[o] = '\0';
	sb_diag_warn(d, "", 0, "not learned: %s '%s' cannot be written as a rule; add it by hand if it is needed",
		     what, shown);
}

/* A Python location fit for a comment line: control characters become '?'. */
static char *safe_comment(const char *why)
{
	char *c = strdup(why);

	for (unsigned char *p = (unsigned char *)c; c && *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

/* ---- blocks and lines ------------------------------------------------- */

const char *sb_learn_block_marker(enum lblock b)
{
	static const char *const names[LB__COUNT] = {
		[LB_ENVS] = "learning_guard_envs",	[LB_FILES] = "learning_guard_files",
		[LB_EXEC] = "learning_guard_exec",	[LB_SOCKET] = "learning_guard_socket",
		[LB_IMPORT] = "learning_guard_import",	[LB_API] = "learning_guard_api",
		[LB_EVAL] = "learning_guard_eval",
	};
	return names[b];
}

void sb_lrules_free(struct lrules *r)
{
	for (int b = 0; b < LB__COUNT; b++) {
		for (size_t i = 0; i < r->b[b].n; i++) {
			free(r->b[b].v[i].text);
			free(r->b[b].v[i].why);
		}
		free(r->b[b].v);
	}
	memset(r, 0, sizeof(*r));
}

size_t sb_lrules_count(const struct lrules *r)
{
	size_t n = 0;

	for (int b = 0; b < LB__COUNT; b++)
		for (size_t i = 0; i < r->b[b].n; i++)
			n += r->b[b].v[i].kind == LL_RULE;
	return n;
}

/* Append a line; `text` and `why` are copied.  why: the Python location. */
static int push_line(struct lblockv *bv, enum lline_kind kind, const char *text, const char *why)
{
	struct lline *ln;

	if (bv->n == bv->cap) {
		size_t cap = bv->cap ? bv->cap * 2 : 16;
		struct lline *nv = realloc(bv->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		bv->v = nv;
		bv->cap = cap;
	}
	ln = &bv->v[bv->n];
	memset(ln, 0, sizeof(*ln));
	ln->kind = kind;
	if (!(ln->text = strdup(text)))
		return -ENOMEM;
	if (why && *why) {
		char *c = safe_comment(why);

		if (!c || asprintf(&ln->why, "# why: %s", c) < 0) {
			ln->why = NULL;
			free(c);
			free(ln->text);
			return -ENOMEM;
		}
		free(c);
	}
	bv->n++;
	return 0;
}

int sb_lblock_push(struct lblockv *bv, enum lline_kind kind, const char *text, const char *why)
{
	return push_line(bv, kind, text, why);
}

/* A rule with the location of the first event that needed it. */
struct gline {
	char *text;		/* owned */
	const char *why;	/* borrowed from an item */
	unsigned long why_seq;
	bool metadata;		/* net: a cloud metadata service */
};

static int cmp_gline(const void *a, const void *b)
{
	return strcmp(((const struct gline *)a)->text, ((const struct gline *)b)->text);
}

/* Keep the earliest location. */
static void take_why(const char **why, unsigned long *seq, const char *w, unsigned long s)
{
	if (w && *w && (!*why || s < *seq)) {
		*why = w;
		*seq = s;
	}
}

/* qsort, which must not be handed a NULL array even for zero elements. */
static void sort_n(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- spelling --------------------------------------------------------- */

/* Known tool directories (reference §3), spelled ${VAR}/... when a path lies
 * under one; the longest value wins. */
static const char *const tool_vars[] = {
	"PYENV_ROOT", "VIRTUAL_ENV", "CONDA_HOME", "HF_HOME", "HF_DATASETS_CACHE", "HF_MODULES_CACHE",
	"HF_HUB_CACHE", "TRANSFORMERS_CACHE", "TORCH_HOME", "KERAS_HOME", "TFHUB_CACHE_DIR",
	"MXNET_HOME", "NLTK_DATA", "SPACY_DATA",
};

struct anchor {
	char *value;		/* owned, canonical directory */
	const char *spelling;	/* "${VIRTUAL_ENV}", ".", "~", "${TMPDIR:-/tmp}" */
	char buf[64];		/* storage for a ${VAR} spelling */
};

/* A directory from the environment, canonical and without a trailing '/';
 * NULL when unset, empty or the root (which would swallow every path). */
static char *anchor_value(const char *v)
{
	char *c;
	size_t n;

	if (!v || !*v)
		return NULL;
	c = realpath(v, NULL);
	if (!c && !(c = strdup(v)))
		return NULL;
	n = strlen(c);
	while (n > 1 && c[n - 1] == '/')
		c[--n] = '\0';
	if (c[0] != '/' || strcmp(c, "/") == 0) {
		free(c);
		return NULL;
	}
	return c;
}

/* The longest anchor containing `dir`, or NULL. */
static const struct anchor *best_anchor(const struct anchor *a, size_t n, const char *dir)
{
	const struct anchor *best = NULL;

	for (size_t i = 0; i < n; i++)
		if (a[i].value && sb_path_under(dir, a[i].value) &&
		    (!best || strlen(a[i].value) > strlen(best->value)))
			best = &a[i];
	return best;
}

static char *spell_with(const struct anchor *a, const char *dir)
{
	char *out;

	if (asprintf(&out, "%s%s", a->spelling, dir + strlen(a->value)) < 0)
		return NULL;
	return out;
}

static void free_anchors(struct anchor *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i].value);
}

static size_t tool_anchors(const struct sb_learn *l, struct anchor *a)
{
	size_t n = 0;

	for (size_t i = 0; i < sizeof(tool_vars) / sizeof(tool_vars[0]); i++) {
		a[n].value = anchor_value(sb_learn_getenv(l, tool_vars[i]));
		if (!a[n].value)
			continue;
		snprintf(a[n].buf, sizeof(a[n].buf), "${%s}", tool_vars[i]);
		a[n].spelling = a[n].buf;
		n++;
	}
	return n;
}

char *sb_learn_spell_dir(const struct sb_learn *l, const char *dir)
{
	struct anchor tools[sizeof(tool_vars) / sizeof(tool_vars[0])] = { 0 };
	struct anchor places[5] = { 0 };
	const struct anchor *best;
	size_t nt = tool_anchors(l, tools), np = 0;
	const char *tmpdir = sb_learn_getenv(l, "TMPDIR");
	char *out;

	if ((best = best_anchor(tools, nt, dir))) {
		out = spell_with(best, dir);
		goto done;
	}
	/* Then the places of the run, longest first: a project inside HOME is
	 * ./ from its own directory. */
	places[np].value = anchor_value(l->cwd);
	places[np++].spelling = ".";
	places[np].value = anchor_value(l->home);
	places[np++].spelling = "~";
	places[np].value = anchor_value(tmpdir);
	places[np++].spelling = "${TMPDIR:-/tmp}";
	places[np].value = anchor_value(sb_learn_getenv(l, "TMP"));
	places[np++].spelling = "${TMP:-/tmp}";
	places[np].value = anchor_value(sb_learn_getenv(l, "TEMP"));
	places[np++].spelling = "${TEMP:-/tmp}";
	/* Unset TMPDIR means /tmp, which the default spells. */
	if (!places[2].value && (!tmpdir || !*tmpdir))
		places[2].value = anchor_value("/tmp");
	if ((best = best_anchor(places, np, dir)))
		out = spell_with(best, dir);
	else
		out = strdup(dir);
done:
	free_anchors(tools, nt);
	free_anchors(places, np);
	return out;
}

/* ---- files ------------------------------------------------------------ */

static bool pseudo_fs(const char *p)
{
	return sb_path_under(p, "/proc") || sb_path_under(p, "/sys") || sb_path_under(p, "/dev");
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Cut the last component: "/a/b" -> "/a", "/a" -> "/". */
static void parent_in_place(char *p)
{
	char *slash = strrchr(p, '/');

	if (slash == p)
		p[1] = '\0';
	else if (slash)
		*slash = '\0';
}

int sb_learn_reduce_path(const struct sb_learn *l, const char *path, unsigned access, char **out)
{
	struct stat st;
	char *d;

	(void)l;
	*out = NULL;
	if (path[0] != '/' || pseudo_fs(path))
		return 0;
	if (!(d = strdup(path)))
		return -ENOMEM;
	if (stat(d, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			parent_in_place(d);
	} else if (access & SB_ACC_WRITE) {
		/* Created and removed during the run (a temporary directory):
		 * the nearest directory still there is where it happened. */
		do
			parent_in_place(d);
		while (strcmp(d, "/") != 0 && !is_dir(d));
	} else {
		/* A read of what is not there: enforced, ENOENT just the same. */
		free(d);
		return 0;
	}
	/* Never the whole file system from one file in it. */
	if (strcmp(d, "/") == 0 || pseudo_fs(d)) {
		free(d);
		return 0;
	}
	*out = d;
	return 1;
}

/* Every proper ancestor of every recorded path: a directory only looked at
 * (stat, readlink) on the way to one of those is a path walk (realpath() and
 * the import system walk every ancestor of what they touch). */
static int ancestors_of_paths(const struct sb_learn *l, struct lset *anc)
{
	char buf[PATH_MAX];
	struct litem *it;
	bool is_new;
	int rc;

	for (size_t i = 0; i < l->paths.n; i++) {
		snprintf(buf, sizeof(buf), "%s", l->paths.items[i].key);
		while (strcmp(buf, "/") != 0) {
			parent_in_place(buf);
			if ((rc = lset_add(anc, buf, &it, &is_new)))
				return rc;
			if (!is_new)
				break;	/* its own ancestors are in already */
		}
	}
	return 0;
}

static bool walked_through(const struct sb_learn *l, const struct lset *anc, const struct litem *it)
{
	const char *anchors[] = { l->cwd, l->home, l->python_prefix, l->python_base_prefix, l->python_exe };

	if (it->flags & LI_CONTENT || !is_dir(it->key))
		return false;
	for (size_t i = 0; i < sizeof(anchors) / sizeof(anchors[0]); i++)
		if (anchors[i] && sb_path_under(anchors[i], it->key))
			return true;
	return lset_find(anc, it->key) != NULL;
}

struct gdir {
	char *dir;	/* owned */
	bool write;
	bool emitted;
	const char *why;
	unsigned long why_seq;
};

static int cmp_gdir(const void *a, const void *b)
{
	return strcmp(((const struct gdir *)a)->dir, ((const struct gdir *)b)->dir);
}

/* Where `d` (taken) is in v, through the index; added when new. */
static int gdir_slot(struct lset *idx, struct gdir *v, size_t *n, char *d, size_t *slot)
{
	struct litem *it;
	bool is_new;
	int rc = lset_add(idx, d, &it, &is_new);

	if (rc) {
		free(d);
		return rc;
	}
	if (is_new) {
		it->bits = (unsigned)*n;
		v[*n].dir = d;
		(*n)++;
	} else {
		free(d);
	}
	*slot = it->bits;
	return 0;
}

/* One directory per access, merged (rw when any access wrote). */
static int collect_dirs(const struct sb_learn *l, struct gdir **out, size_t *n_out)
{
	struct lset anc = { 0 }, idx = { 0 };
	struct gdir *v = NULL;
	size_t n = 0, j;
	int rc = 0;

	if (l->paths.n && !(v = calloc(l->paths.n, sizeof(*v))))
		return -ENOMEM;
	if ((rc = ancestors_of_paths(l, &anc)))
		goto fail;
	for (size_t i = 0; i < l->paths.n; i++) {
		const struct litem *it = &l->paths.items[i];
		char *d;

		if (walked_through(l, &anc, it))
			continue;
		rc = sb_learn_reduce_path(l, it->key, it->bits, &d);
		if (rc < 0)
			goto fail;
		if (rc == 0)
			continue;
		if ((rc = gdir_slot(&idx, v, &n, d, &j)))
			goto fail;
		v[j].write |= (it->bits & SB_ACC_WRITE) != 0;
		take_why(&v[j].why, &v[j].why_seq, it->why, it->why_seq);
	}
	lset_free(&anc);
	lset_free(&idx);
	sort_n(v, n, sizeof(*v), cmp_gdir);
	*out = v;
	*n_out = n;
	return 0;
fail:
	lset_free(&anc);
	lset_free(&idx);
	for (size_t i = 0; i < n; i++)
		free(v[i].dir);
	free(v);
	return rc;
}

/* Drop a directory whose nearest emitted ancestor already grants the same
 * mode: with longest-match rules, that ancestor is what decides for it (and
 * it takes over the location that needed the dropped one).  The home
 * directory never swallows what is under it (reference §3).  Sorted, an
 * ancestor comes before its descendants, so it is decided first. */
static int collapse_nested(const struct sb_learn *l, struct gdir *v, size_t n)
{
	struct lset emitted = { 0 };
	char buf[PATH_MAX];
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		struct gdir *nearest = NULL;
		struct litem *it;
		bool is_new;

		snprintf(buf, sizeof(buf), "%s", v[i].dir);
		while (!nearest && strcmp(buf, "/") != 0) {
			parent_in_place(buf);
			if ((it = lset_find(&emitted, buf)))
				nearest = &v[it->bits];
		}
		v[i].emitted = !(nearest && nearest->write == v[i].write &&
				 !(l->home && strcmp(nearest->dir, l->home) == 0));
		if (!v[i].emitted) {
			take_why(&nearest->why, &nearest->why_seq, v[i].why, v[i].why_seq);
			continue;
		}
		if (!(rc = lset_add(&emitted, v[i].dir, &it, &is_new)))
			it->bits = (unsigned)i;
	}
	lset_free(&emitted);
	return rc;
}

static int gen_files(const struct sb_learn *l, struct lblockv *bv, struct sb_diag *diag)
{
	struct gdir *v = NULL;
	struct gline *g = NULL;
	size_t n = 0, ng = 0;
	int rc = collect_dirs(l, &v, &n);

	if (rc)
		return rc;
	if ((rc = collapse_nested(l, v, n)))
		goto out;
	if (n && !(g = calloc(n, sizeof(*g)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char *sp;

		if (!v[i].emitted)
			continue;
		if (!safe_value(v[i].dir)) {
			skip_warn(diag, "the directory", v[i].dir);
			continue;
		}
		if (!(sp = sb_learn_spell_dir(l, v[i].dir))) {
			rc = -ENOMEM;
			goto out;
		}
		rc = asprintf(&g[ng].text, "expose-%s=%s", v[i].write ? "rw" : "ro", sp);
		free(sp);
		if (rc < 0) {
			rc = -ENOMEM;
			goto out;
		}
		g[ng].why = v[i].why;
		g[ng++].why_seq = v[i].why_seq;
	}
	rc = 0;
	sort_n(g, ng, sizeof(*g), cmp_gline);
	for (size_t i = 0; i < ng && !rc; i++)
		rc = push_line(bv, LL_RULE, g[i].text, g[i].why);
out:
	for (size_t i = 0; i < ng; i++)
		free(g[i].text);
	free(g);
	for (size_t i = 0; i < n; i++)
		free(v[i].dir);
	free(v);
	return rc;
}

/* ---- exec ------------------------------------------------------------- */

/* Absolute, or ${VIRTUAL_ENV}/bin/tool under a tool directory: those move
 * between machines, the system's binaries do not, and ./ or ~/ would make
 * the rule depend on where python-sb starts. */
static char *spell_exec(const struct sb_learn *l, const char *path)
{
	struct anchor tools[sizeof(tool_vars) / sizeof(tool_vars[0])] = { 0 };
	size_t nt = tool_anchors(l, tools);
	const struct anchor *best = best_anchor(tools, nt, path);
	char *out = best ? spell_with(best, path) : strdup(path);

	free_anchors(tools, nt);
	return out;
}

static int gen_exec(const struct sb_learn *l, struct lblockv *bv, struct sb_diag *diag)
{
	struct gline *g = NULL;
	size_t ng = 0;
	int rc = 0;

	if (l->exec.n && !(g = calloc(l->exec.n, sizeof(*g))))
		return -ENOMEM;
	for (size_t i = 0; i < l->exec.n; i++) {
		const struct litem *it = &l->exec.items[i];
		char *sp;

		if (!safe_value(it->key)) {
			skip_warn(diag, "the program", it->key);
			continue;
		}
		/* Gone since it ran (a temporary script, a replayed journal):
		 * the loader refuses an exec= of a missing file. */
		if (access(it->key, F_OK) != 0) {
			skip_warn(diag, "the program (it no longer exists)", it->key);
			continue;
		}
		sp = spell_exec(l, it->key);

		if (!sp || asprintf(&g[ng].text, "exec=%s", sp) < 0) {
			free(sp);
			rc = -ENOMEM;
			goto out;
		}
		free(sp);
		g[ng].why = it->why;
		g[ng++].why_seq = it->why_seq;
	}
	sort_n(g, ng, sizeof(*g), cmp_gline);
	for (size_t i = 0; i < ng && !rc; i++)
		rc = push_line(bv, LL_RULE, g[i].text, g[i].why);
out:
	for (size_t i = 0; i < ng; i++)
		free(g[i].text);
	free(g);
	return rc;
}

/* ---- network ---------------------------------------------------------- */

struct hostname {
	int family;
	uint8_t addr[16];
	char *name;	/* owned */
};

struct names {
	struct hostname *v;
	size_t n, cap;
};

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i].name);
	free(ns->v);
}

static int names_add(struct names *ns, int family, const void *addr, const char *name)
{
	size_t alen = family == AF_INET6 ? 16 : 4;

	for (size_t i = 0; i < ns->n; i++)
		if (ns->v[i].family == family && memcmp(ns->v[i].addr, addr, alen) == 0)
			return 0;	/* the first name wins */
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 16;
		struct hostname *nv = realloc(ns->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		ns->v = nv;
		ns->cap = cap;
	}
	memset(&ns->v[ns->n], 0, sizeof(ns->v[0]));
	ns->v[ns->n].family = family;
	memcpy(ns->v[ns->n].addr, addr, alen);
	if (!(ns->v[ns->n].name = strdup(name)))
		return -ENOMEM;
	ns->n++;
	return 0;
}

static const char *names_find(const struct names *ns, int family, const uint8_t *addr)
{
	size_t alen = family == AF_INET6 ? 16 : 4;

	for (size_t i = 0; i < ns->n; i++)
		if (ns->v[i].family == family && memcmp(ns->v[i].addr, addr, alen) == 0)
			return ns->v[i].name;
	return NULL;
}

/* Names the program resolved, in the order it did, then the hosts file's:
 * an address that came from a name is written with that name, which the
 * policy resolves (and pins) again at load time. */
static int load_names(const struct sb_learn *l, struct names *ns)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	/* The dns set keeps insertion order, which is the order of sight. */
	for (size_t i = 0; i < l->dns.n && !rc; i++)
		if (name_of(l->dns.items[i].aux, "-."))	/* else the address is written */
			rc = names_add(ns, l->dns.items[i].net.family, l->dns.items[i].net.addr, l->dns.items[i].aux);
	if (rc)
		return rc;
	if (!(f = fopen(l->hosts_path ? l->hosts_path : "/etc/hosts", "re")))
		return 0;
	while (getline(&line, &cap, f) > 0 && !rc) {
		char *save = NULL, *ip, *name;
		uint8_t a[16];

		line[strcspn(line, "#")] = '\0';
		if (!(ip = strtok_r(line, " \t\r\n", &save)) || !(name = strtok_r(NULL, " \t\r\n", &save)))
			continue;
		if (!name_of(name, "-."))
			continue;
		if (inet_pton(AF_INET, ip, a) == 1)
			rc = names_add(ns, AF_INET, a, name);
		else if (inet_pton(AF_INET6, ip, a) == 1)
			rc = names_add(ns, AF_INET6, a, name);
	}
	free(line);
	fclose(f);
	return rc;
}

/* The first (by name) variable of the launching environment whose value is
 * `value`; with `port_only`, only names containing "port". */
static const char *env_with_value(const struct sb_learn *l, const char *value, bool port_only)
{
	const char *best = NULL;
	size_t best_len = 0;

	for (char **e = l->env; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t klen;
		char key[256];

		if (!eq || eq == *e || strcmp(eq + 1, value) != 0)
			continue;
		klen = (size_t)(eq - *e);
		if (klen >= sizeof(key))
			continue;
		memcpy(key, *e, klen);
		key[klen] = '\0';
		if (!name_of(key, "") || isdigit((unsigned char)key[0]) || (port_only && !strcasestr(key, "port")))
			continue;
		/* Smallest name first, so the choice does not depend on the
		 * order of the environment. */
		if (!best || strncmp(*e, best, klen < best_len ? klen : best_len) < 0 ||
		    (strncmp(*e, best, klen < best_len ? klen : best_len) == 0 && klen < best_len)) {
			best = *e;
			best_len = klen;
		}
	}
	return best;
}

/* "${NAME}" for an environment entry "NAME=value". */
static char *var_ref(const char *entry)
{
	const char *eq = strchr(entry, '=');
	char *out;

	if (asprintf(&out, "${%.*s}", (int)(eq - entry), entry) < 0)
		return NULL;
	return out;
}

static char *net_dest(const struct sb_learn *l, const struct names *ns, const struct lnet *n)
{
	static const uint8_t zero[16];
	char ip[INET6_ADDRSTRLEN], *out;
	const char *name, *var;

	if ((n->dir & SB_DIR_IN) && memcmp(n->addr, zero, n->family == AF_INET6 ? 16 : 4) == 0)
		return strdup("*");
	if (!inet_ntop(n->family, n->addr, ip, sizeof(ip)))
		return NULL;
	name = names_find(ns, n->family, n->addr);
	if ((var = env_with_value(l, name ? name : ip, false)))
		return var_ref(var);
	if (name)
		return strdup(name);
	if (asprintf(&out, "%s/%s", ip, n->family == AF_INET6 ? "128" : "32") < 0)
		return NULL;
	return out;
}

struct ngroup {
	char *dest;	/* owned */
	unsigned proto, dir;
	bool metadata;	/* a cloud metadata service (sb_ip_is_metadata) */
	char **ports;	/* owned strings: "443" or "${PORT}" */
	size_t n_ports;
	const char *why;
	unsigned long why_seq;
};

static int cmp_port(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	bool dx = isdigit((unsigned char)x[0]), dy = isdigit((unsigned char)y[0]);

	if (dx && dy)
		return atol(x) < atol(y) ? -1 : atol(x) > atol(y);
	if (dx != dy)
		return dx ? -1 : 1;
	return strcmp(x, y);
}

static int group_add_port(struct ngroup *g, const char *port)
{
	char **np;

	for (size_t i = 0; i < g->n_ports; i++)
		if (strcmp(g->ports[i], port) == 0)
			return 0;
	if (!(np = realloc(g->ports, (g->n_ports + 1) * sizeof(*np))))
		return -ENOMEM;
	g->ports = np;
	if (!(g->ports[g->n_ports] = strdup(port)))
		return -ENOMEM;
	g->n_ports++;
	return 0;
}

static bool net_is_metadata(const struct lnet *n)
{
	char ip[INET6_ADDRSTRLEN];
	const void *a = n->addr;
	int family = n->family;

	if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)n->addr)) {
		family = AF_INET;
		a = n->addr + 12;
	}
	return (n->dir & SB_DIR_OUT) && inet_ntop(family, a, ip, sizeof(ip)) && sb_ip_is_metadata(ip);
}

static int net_groups(const struct sb_learn *l, const struct names *ns, struct ngroup *g, size_t *ng)
{
	for (size_t i = 0; i < l->net.n; i++) {
		const struct litem *it = &l->net.items[i];
		char port[8], *dest = net_dest(l, ns, &it->net);
		const char *pvar;
		char *pref = NULL;
		size_t j;
		int rc;

		if (!dest)
			return -ENOMEM;
		for (j = 0; j < *ng; j++)
			if (strcmp(g[j].dest, dest) == 0 && g[j].proto == it->net.proto && g[j].dir == it->net.dir)
				break;
		if (j == *ng) {
			g[j].dest = dest;
			g[j].proto = it->net.proto;
			g[j].dir = it->net.dir;
			(*ng)++;
		} else {
			free(dest);
		}
		snprintf(port, sizeof(port), "%u", it->net.port);
		if ((pvar = env_with_value(l, port, true)) && !(pref = var_ref(pvar)))
			return -ENOMEM;
		rc = group_add_port(&g[j], pref ? pref : port);
		free(pref);
		if (rc)
			return rc;
		take_why(&g[j].why, &g[j].why_seq, it->why, it->why_seq);
		g[j].metadata |= net_is_metadata(&it->net);
	}
	return 0;
}

static int gen_socket(const struct sb_learn *l, struct lblockv *bv)
{
	struct names ns = { 0 };
	struct ngroup *g = NULL;
	struct gline *gl = NULL;
	size_t ng = 0;
	int rc;

	if (!l->net.n)
		return 0;
	if ((rc = load_names(l, &ns)))
		goto out;
	rc = -ENOMEM;
	if (!(g = calloc(l->net.n, sizeof(*g))) || !(gl = calloc(l->net.n, sizeof(*gl))))
		goto out;
	if ((rc = net_groups(l, &ns, g, &ng)))
		goto out;
	for (size_t i = 0; i < ng; i++) {
		struct sbuf b = { 0 };

		sort_n(g[i].ports, g[i].n_ports, sizeof(char *), cmp_port);
		sbuf_printf(&b, "net=ALLOW|%s|%s|", g[i].proto == SB_PROTO_UDP ? "UDP" : "TCP", g[i].dest);
		for (size_t p = 0; p < g[i].n_ports; p++)
			sbuf_printf(&b, "%s%s", p ? "," : "", g[i].ports[p]);
		sbuf_add(&b, g[i].dir == SB_DIR_IN ? "|IN" : "|OUT");
		if (b.oom) {
			free(b.s);
			rc = -ENOMEM;
			goto out;
		}
		gl[i].text = b.s;
		gl[i].why = g[i].why;
		gl[i].why_seq = g[i].why_seq;
		gl[i].metadata = g[i].metadata;
	}
	sort_n(gl, ng, sizeof(*gl), cmp_gline);
	for (size_t i = 0; i < ng && !rc; i++) {
		/* Learned from what the program did, which a manipulated model
		 * may have chosen: the reviewer must see what this one is. */
		if (gl[i].metadata)
			rc = push_line(bv, LL_NOTE, "# careful: a cloud metadata service, it hands out this "
						    "machine's credentials; keep only if the program needs them", NULL);
		if (!rc)
			rc = push_line(bv, LL_RULE, gl[i].text, gl[i].why);
	}
out:
	for (size_t i = 0; g && i < ng; i++) {
		free(g[i].dest);
		for (size_t p = 0; p < g[i].n_ports; p++)
			free(g[i].ports[p]);
		free(g[i].ports);
		if (gl)
			free(gl[i].text);
	}
	free(g);
	free(gl);
	names_free(&ns);
	return rc;
}

/* ---- environment ------------------------------------------------------ */

static int cmp_item_key(const void *a, const void *b)
{
	return strcmp((*(const struct litem *const *)a)->key, (*(const struct litem *const *)b)->key);
}

/* Items of a set sorted by key (borrowed pointers). */
static const struct litem **sorted_items(const struct lset *s)
{
	const struct litem **v = calloc(s->n ? s->n : 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		v[i] = &s->items[i];
	sort_n(v, s->n, sizeof(*v), cmp_item_key);
	return v;
}

static int gen_env(const struct sb_learn *l, struct lblockv *bv)
{
	const struct litem **v = sorted_items(&l->env_names);
	int rc = v ? 0 : -ENOMEM;

	for (size_t i = 0; v && i < l->env_names.n && !rc; i++) {
		char *line;

		if (!name_of(v[i]->key, "") || isdigit((unsigned char)v[i]->key[0]))
			continue;	/* the recorder keeps only names ${} can spell */
		if (v[i]->bits & 1u)
			continue;	/* written by the program (learn.c ENV_WRITTEN) */
		if (asprintf(&line, "env=%s=${%s}", v[i]->key, v[i]->key) < 0) {
			rc = -ENOMEM;
			break;
		}
		rc = push_line(bv, LL_RULE, line, v[i]->why);
		free(line);
	}
	free(v);
	return rc;
}

/* ---- imports ---------------------------------------------------------- */

struct strlist {
	char **v;	/* owned, sorted */
	size_t n;
};

struct imp_lists {
	struct strlist l[3];	/* dangerous, standard, deprecated */
};

static const char *const imp_files[3] = {
	"dangerous-modules.txt", "stdlib-modules.txt", "deprecated-modules.txt",
};

static int load_list(const char *path, struct strlist *out)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *s = line, **nv;

		s[strcspn(s, "#\r\n \t")] = '\0';
		if (!*s)
			continue;
		if (!(nv = realloc(out->v, (out->n + 1) * sizeof(*nv))) || !(nv[out->n] = strdup(s))) {
			if (nv)
				out->v = nv;
			rc = -ENOMEM;
			break;
		}
		out->v = nv;
		out->n++;
	}
	free(line);
	fclose(f);
	if (out->n)
		sort_n(out->v, out->n, sizeof(char *), cmp_str);
	return rc;
}

void sb_imp_lists_free(struct imp_lists *il)
{
	if (!il)
		return;
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; i < il->l[k].n; i++)
			free(il->l[k].v[i]);
		free(il->l[k].v);
	}
	free(il);
}

int sb_imp_lists_load(const struct sb_learn *l, struct imp_lists **out, struct sb_diag *diag)
{
	struct imp_lists *il = calloc(1, sizeof(*il));
	int rc = 0;

	*out = NULL;
	if (!il)
		return -ENOMEM;
	for (int k = 0; k < 3; k++) {
		char *path = NULL;

		rc = sb_learn_data_path(l, imp_files[k], &path);
		if (rc == -ENOMEM)
			break;
		if (rc == 0)
			rc = load_list(path, &il->l[k]);
		if (rc == -ENOMEM) {
			free(path);
			break;
		}
		if (rc && diag)
			sb_diag_warn(diag, "", 0, "cannot read the module list %s: %s; imports are "
				     "classified without it", path ? path : imp_files[k], strerror(-rc));
		free(path);
		rc = 0;
	}
	if (rc) {
		sb_imp_lists_free(il);
		return rc;
	}
	*out = il;
	return 0;
}

static bool in_list(const struct strlist *s, const char *name)
{
	return s->n && bsearch(&name, s->v, s->n, sizeof(char *), cmp_str) != NULL;
}

enum imp_class sb_imp_classify(const struct imp_lists *il, const char *module)
{
	if (in_list(&il->l[0], module))
		return IMP_DANGEROUS;
	/* Before the standard list: the deprecated modules are in it too. */
	if (in_list(&il->l[2], module))
		return IMP_DEPRECATED;
	if (in_list(&il->l[1], module) || module[0] == '_')
		return IMP_STANDARD;
	return IMP_EXTERNAL;
}

int sb_wrap_imports(char *const *names, size_t n, size_t width, char ***lines, size_t *n_lines)
{
	char **out = calloc(n ? n : 1, sizeof(*out));
	struct sbuf b = { 0 };
	size_t nl = 0, used = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		if (used && used + 2 + len > width) {
			out[nl++] = b.s;
			b = (struct sbuf){ 0 };
			used = 0;
		}
		if (!used)
			sbuf_add(&b, "python-import=");
		else
			sbuf_add(&b, ", ");
		sbuf_add(&b, names[i]);
		used += (used ? 2 : 0) + len;
		if (b.oom)
			break;
	}
	if (used)
		out[nl++] = b.s;
	if (b.oom) {
		for (size_t i = 0; i < nl; i++)
			free(out[i]);
		free(out);
		return -ENOMEM;
	}
	*lines = out;
	*n_lines = nl;
	return 0;
}

/* The earliest location among the modules of one wrapped line. */
static const char *wrapped_why(const struct litem *const *items, size_t from, size_t to)
{
	const char *why = NULL;
	unsigned long seq = 0;

	for (size_t i = from; i < to; i++)
		take_why(&why, &seq, items[i]->why, items[i]->why_seq);
	return why;
}

static int gen_import_class(struct lblockv *bv, const char *header, const struct litem **items,
			    size_t n, bool wrap)
{
	char **names, **lines = NULL;
	size_t nl = 0, at = 0;
	int rc;

	if (!n)
		return 0;
	if (!(names = calloc(n, sizeof(*names))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		names[i] = items[i]->key;
	rc = sb_wrap_imports(names, n, wrap ? 70 : 0, &lines, &nl);
	free(names);
	if (rc)
		return rc;
	rc = push_line(bv, LL_HEADER, header, NULL);
	for (size_t i = 0; i < nl; i++) {
		/* Count the modules on this line to find their locations. */
		size_t count = 1;

		for (const char *c = lines[i]; (c = strchr(c, ',')); c++)
			count++;
		if (!rc)
			rc = push_line(bv, LL_RULE, lines[i], wrapped_why(items, at, at + count));
		at += count;
		free(lines[i]);
	}
	free(lines);
	return rc;
}

static int gen_import(const struct sb_learn *l, struct lblockv *bv, struct sb_diag *diag)
{
	static const char *const headers[IMP__COUNT] = {
		[IMP_DANGEROUS] = "# \u26a0 Dangerous!",
		[IMP_STANDARD] = "# Standard Python",
		[IMP_DEPRECATED] = "# \u26a0 Deprecated Python module",
		[IMP_EXTERNAL] = "# External modules (Are you sure about the origin?)",
	};
	const struct litem **v = NULL, **cls[IMP__COUNT] = { 0 };
	size_t n[IMP__COUNT] = { 0 };
	struct imp_lists *il = NULL;
	int rc;

	if (!l->imports.n)
		return 0;
	if ((rc = sb_imp_lists_load(l, &il, diag)))
		return rc;
	rc = -ENOMEM;
	if (!(v = sorted_items(&l->imports)))
		goto out;
	for (int c = 0; c < IMP__COUNT; c++)
		if (!(cls[c] = calloc(l->imports.n, sizeof(*cls[c]))))
			goto out;
	for (size_t i = 0; i < l->imports.n; i++) {
		enum imp_class c;

		if (!name_of(v[i]->key, "-")) {
			skip_warn(diag, "the module", v[i]->key);
			continue;
		}
		c = sb_imp_classify(il, v[i]->key);
		cls[c][n[c]++] = v[i];
	}
	rc = 0;
	/* External modules one per line: each deserves its own review. */
	for (int c = 0; c < IMP__COUNT && !rc; c++)
		rc = gen_import_class(bv, headers[c], cls[c], n[c], c != IMP_EXTERNAL);
out:
	for (int c = 0; c < IMP__COUNT; c++)
		free(cls[c]);
	free(v);
	sb_imp_lists_free(il);
	return rc;
}

/* ---- python-api ------------------------------------------------------- */

/* Used when rules/python-api.in cannot be read; the same texts. */
static const char *const builtin_help[SB_API__COUNT] = {
	[SB_API_PROCESS_EXEC] = "runs code outside the patched interpreter",
	[SB_API_PROCESS_CONTROL] = "kills processes, exhausts host resources",
	[SB_API_PRIVILEGES] = "changes process identity or root",
	[SB_API_THREADS] = "concurrency primitives",
	[SB_API_NATIVE] = "native code and arbitrary memory access",
	[SB_API_INTROSPECTION] = "can be used to undo the patches",
	[SB_API_DYNAMIC_CODE] = "evaluates text as code, bypassing the eval guard",
	[SB_API_DESERIALIZATION] = "rebuilds arbitrary objects from bytes",
};

/* The registry (rules/python-api.in): help texts, warnings, and the
 * functions of each category, to tell when learned functions cover one. */
struct api_registry {
	char *help[SB_API__COUNT];	/* owned or NULL */
	int warned[SB_API__COUNT];	/* -1 unknown, 0, 1 */
	struct strlist funcs[SB_API__COUNT];
};

static void registry_free(struct api_registry *r)
{
	for (int c = 0; c < SB_API__COUNT; c++) {
		free(r->help[c]);
		for (size_t i = 0; i < r->funcs[c].n; i++)
			free(r->funcs[c].v[i]);
		free(r->funcs[c].v);
	}
}

static int registry_line(struct api_registry *r, char *line)
{
	char *save = NULL, *a = strtok_r(line, " \t\r\n", &save), *b, *rest;
	int cat;

	if (!a || a[0] == '#' || !(b = strtok_r(NULL, " \t\r\n", &save)))
		return 0;
	if (strcmp(a, "category") == 0) {
		char *mode = strtok_r(NULL, " \t", &save);

		if ((cat = sb_api_category_from_name(b)) < 0 || !mode)
			return 0;
		rest = strtok_r(NULL, "\r\n", &save);
		r->warned[cat] = strcmp(mode, "warned") == 0;
		free(r->help[cat]);
		r->help[cat] = rest ? strdup(rest) : NULL;
		return rest && !r->help[cat] ? -ENOMEM : 0;
	}
	if ((cat = sb_api_category_from_name(a)) < 0)
		return 0;
	{
		struct strlist *fl = &r->funcs[cat];
		char **nv = realloc(fl->v, (fl->n + 1) * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		fl->v = nv;
		if (!(fl->v[fl->n] = strdup(b)))
			return -ENOMEM;
		fl->n++;
	}
	return 0;
}

/* A missing registry is not an error: built-in texts, functions one by one. */
static int registry_load(const struct sb_learn *l, struct api_registry *r)
{
	char *path = NULL, *line = NULL;
	size_t cap = 0;
	FILE *f;
	int rc;

	memset(r, 0, sizeof(*r));
	for (int c = 0; c < SB_API__COUNT; c++)
		r->warned[c] = -1;
	if ((rc = sb_learn_data_path(l, "python-api.in", &path)) == -ENOMEM)
		return rc;
	f = path ? fopen(path, "re") : NULL;
	free(path);
	if (!f)
		return 0;
	rc = 0;
	while (!rc && getline(&line, &cap, f) > 0)
		rc = registry_line(r, line);
	free(line);
	fclose(f);
	for (int c = 0; c < SB_API__COUNT; c++)
		if (r->funcs[c].n)
			sort_n(r->funcs[c].v, r->funcs[c].n, sizeof(char *), cmp_str);
	return rc;
}

const char *sb_api_category_help(int cat)
{
	return cat >= 0 && cat < SB_API__COUNT ? builtin_help[cat] : "";
}

bool sb_api_category_warned(int cat)
{
	return cat == SB_API_PROCESS_EXEC || cat == SB_API_PRIVILEGES || cat == SB_API_NATIVE ||
	       cat == SB_API_DYNAMIC_CODE || cat == SB_API_DESERIALIZATION;
}

/* Do the learned functions of `cat` cover all of its registered ones? */
static bool covers_category(const struct api_registry *reg, const struct sb_learn *l, int cat)
{
	const struct strlist *fl = &reg->funcs[cat];

	if (!fl->n)
		return false;
	for (size_t i = 0; i < fl->n; i++) {
		const struct litem *it = lset_find(&l->api, fl->v[i]);

		if (!it || (int)it->bits != cat)
			return false;
	}
	return true;
}

static int gen_api_category(const struct sb_learn *l, const struct api_registry *reg,
			    struct lblockv *bv, int cat, const struct litem **v)
{
	const char *why = NULL;
	unsigned long why_seq = 0;
	bool warned = reg->warned[cat] >= 0 ? reg->warned[cat] : sb_api_category_warned(cat);
	char *header, *line;
	bool any = false;
	int rc;

	for (size_t i = 0; i < l->api.n; i++)
		if (v[i] && (int)v[i]->bits == cat) {
			any = true;
			take_why(&why, &why_seq, v[i]->why, v[i]->why_seq);
		}
	if (!(l->cats & (1u << cat)) && !any)
		return 0;
	if (asprintf(&header, "# %s%s: %s", warned ? "\u26a0 " : "", sb_api_category_name(cat),
		     reg->help[cat] ? reg->help[cat] : sb_api_category_help(cat)) < 0)
		return -ENOMEM;
	rc = push_line(bv, LL_HEADER, header, NULL);
	free(header);
	if (rc)
		return rc;
	/* Seen at the system-call level (only the category opens those calls),
	 * or every function of the category learned: the category line. */
	if ((l->cats & (1u << cat)) || covers_category(reg, l, cat)) {
		if (l->cats & (1u << cat))
			take_why(&why, &why_seq, l->cat_why[cat], l->cat_why_seq[cat]);
		if (asprintf(&line, "python-api=ALLOW:%s", sb_api_category_name(cat)) < 0)
			return -ENOMEM;
		rc = push_line(bv, LL_RULE, line, why);
		free(line);
		return rc;
	}
	for (size_t i = 0; i < l->api.n && !rc; i++) {
		if (!v[i] || (int)v[i]->bits != cat)
			continue;
		if (asprintf(&line, "python-api=ALLOW:%s", v[i]->key) < 0)
			return -ENOMEM;
		rc = push_line(bv, LL_RULE, line, v[i]->why);
		free(line);
	}
	return rc;
}

/* Is `name` a function of the registry (any category)?  Without a
 * registry every name is taken as it comes. */
static bool registered(const struct api_registry *reg, const char *name)
{
	bool any = false;

	for (int c = 0; c < SB_API__COUNT; c++) {
		const struct strlist *fl = &reg->funcs[c];

		any |= fl->n > 0;
		if (fl->n && bsearch(&name, fl->v, fl->n, sizeof(char *), cmp_str))
			return true;
	}
	return !any;
}

static int gen_api(const struct sb_learn *l, struct lblockv *bv, struct sb_diag *diag)
{
	struct api_registry reg;
	const struct litem **v;
	int rc;

	if (!l->api.n && !l->cats)
		return 0;
	if ((rc = registry_load(l, &reg)) || !(v = sorted_items(&l->api))) {
		registry_free(&reg);
		return rc ? rc : -ENOMEM;
	}
	/* Unwritable names are dropped from the list (and from coverage), and so
	 * are functions the registry does not list: the loader refuses them. */
	for (size_t i = 0; i < l->api.n; i++)
		if (!name_of(v[i]->key, ".") || !registered(&reg, v[i]->key)) {
			skip_warn(diag, "the function", v[i]->key);
			v[i] = NULL;
		}
	for (int cat = 0; cat < SB_API__COUNT && !rc; cat++)
		rc = gen_api_category(l, &reg, bv, cat, v);
	/* Functions the agent could not place in a category. */
	for (size_t i = 0; i < l->api.n && !rc; i++) {
		char *line;

		if (!v[i] || sb_api_category_name((int)v[i]->bits))
			continue;
		if (asprintf(&line, "python-api=ALLOW:%s", v[i]->key) < 0) {
			rc = -ENOMEM;
			break;
		}
		rc = push_line(bv, LL_RULE, line, v[i]->why);
		free(line);
	}
	free(v);
	registry_free(&reg);
	return rc;
}

/* ---- all -------------------------------------------------------------- */

int sb_learn_generate(struct sb_learn *l, struct lrules *out, struct sb_diag *diag)
{
	int rc;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&l->lock);
	if (!(rc = gen_env(l, &out->b[LB_ENVS])) && !(rc = gen_files(l, &out->b[LB_FILES], diag)) &&
	    !(rc = gen_exec(l, &out->b[LB_EXEC], diag)) && !(rc = gen_socket(l, &out->b[LB_SOCKET])) &&
	    !(rc = gen_import(l, &out->b[LB_IMPORT], diag)) && !(rc = gen_api(l, &out->b[LB_API], diag)))
		rc = sb_learn_gen_eval(l, &out->b[LB_EVAL]);
	pthread_mutex_unlock(&l->lock);
	if (rc)
		sb_lrules_free(out);
	return rc;
}
