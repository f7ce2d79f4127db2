/* The learner's memory: deduplicated sets of what the program needed, and the
 * launching context (environment, directories) the generator spells paths
 * with.  Nothing here asks the policy: the recorder (learn.c) filtered the
 * events already, and the tests fill the sets directly.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn_int.h"

/* ---- small helpers ---------------------------------------------------- */

bool sb_path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return path[0] == '/';
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void sbuf_grow(struct sbuf *b, size_t more)
{
	size_t want = b->len + more + 1;
	char *ns;

	if (b->oom || want <= b->cap)
		return;
	if (want < 256)
		want = 256;
	if (want < b->cap * 2)
		want = b->cap * 2;
	ns = realloc(b->s, want);
	if (!ns) {
		b->oom = true;
		return;
	}
	b->s = ns;
	b->cap = want;
}

void sbuf_addn(struct sbuf *b, const char *s, size_t n)
{
	sbuf_grow(b, n);
	if (b->oom)
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void sbuf_add(struct sbuf *b, const char *s)
{
	sbuf_addn(b, s, strlen(s));
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	sbuf_grow(b, (size_t)n);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* ---- sets ------------------------------------------------------------- */

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static size_t lset_slot(const struct lset *s, const char *key)
{
	size_t mask = s->icap - 1, i = hash_str(key) & mask;

	while (s->index[i] && strcmp(s->items[s->index[i] - 1].key, key) != 0)
		i = (i + 1) & mask;
	return i;
}

struct litem *lset_find(const struct lset *s, const char *key)
{
	size_t i;

	if (!s->icap)
		return NULL;
	i = lset_slot(s, key);
	return s->index[i] ? &s->items[s->index[i] - 1] : NULL;
}

static int lset_rehash(struct lset *s, size_t icap)
{
	uint32_t *old = s->index;
	size_t old_cap = s->icap;

	s->index = calloc(icap, sizeof(*s->index));
	if (!s->index) {
		s->index = old;
		return -ENOMEM;
	}
	s->icap = icap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			s->index[lset_slot(s, s->items[old[i] - 1].key)] = old[i];
	free(old);
	return 0;
}

int lset_add(struct lset *s, const char *key, struct litem **out, bool *is_new)
{
	struct litem *it;
	size_t slot;

	*is_new = false;
	if ((it = lset_find(s, key))) {
		*out = it;
		return 0;
	}
	/* Load factor at most one half: probes stay short. */
	if ((s->n + 1) * 2 > s->icap && lset_rehash(s, s->icap ? s->icap * 2 : 64))
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct litem *ni = realloc(s->items, cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		s->items = ni;
		s->cap = cap;
	}
	it = &s->items[s->n];
	memset(it, 0, sizeof(*it));
	if (!(it->key = strdup(key)))
		return -ENOMEM;
	slot = lset_slot(s, key);
	s->index[slot] = (uint32_t)(s->n + 1);
	s->n++;
	*out = it;
	*is_new = true;
	return 0;
}

void lset_free(struct lset *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->items[i].key);
		free(s->items[i].why);
		free(s->items[i].aux);
	}
	free(s->items);
	free(s->index);
	memset(s, 0, sizeof(*s));
}

/* ---- the learner ------------------------------------------------------ */

const char *sb_learn_getenv(const struct sb_learn *l, const char *name)
{
	size_t n = strlen(name);

	for (char **e = l->env; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* Canonical form of a directory named by the user or the environment: the
 * events carry canonical paths, so comparisons need the same spelling. */
static char *canon_or_copy(const char *path)
{
	char *c;

	if (!path || !*path)
		return NULL;
	c = realpath(path, NULL);
	return c ? c : strdup(path);
}

static int copy_env(struct sb_learn *l, char *const *envp)
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	l->env = calloc(n + 1, sizeof(*l->env));
	if (!l->env)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(l->env[i] = strdup(envp[i])))
			return -ENOMEM;
	return 0;
}

static int set_python(struct sb_learn *l, const struct sb_learn_opts *o)
{
	struct stat st;

	if (o->python_exe && !(l->python_exe = canon_or_copy(o->python_exe)))
		return -ENOMEM;
	if (o->python_prefix && *o->python_prefix) {
		/* Accept the executable here too: its launch must not become an
		 * exec= line, but a file is no tree to skip. */
		if (stat(o->python_prefix, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (!l->python_exe && !(l->python_exe = canon_or_copy(o->python_prefix)))
				return -ENOMEM;
		} else if (!(l->python_prefix = canon_or_copy(o->python_prefix))) {
			return -ENOMEM;
		}
	}
	if (o->python_base_prefix && *o->python_base_prefix &&
	    !(l->python_base_prefix = canon_or_copy(o->python_base_prefix)))
		return -ENOMEM;
	return 0;
}

int sb_learn_new(const struct sb_learn_opts *opts, struct sb_learn **out)
{
	struct sb_learn *l;
	char buf[PATH_MAX];
	const char *home;
	int rc;

	*out = NULL;
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	l->jfd = -1;
	l->policy = opts->policy;
	l->keep_refusals = opts->audit;
	rc = copy_env(l, opts->envp);
	if (rc)
		goto fail;
	rc = -ENOMEM;
	if (opts->cwd)
		l->cwd = canon_or_copy(opts->cwd);
	else if (getcwd(buf, sizeof(buf)))
		l->cwd = canon_or_copy(buf);
	if (!l->cwd)
		goto fail;
	home = sb_learn_getenv(l, "HOME");
	if (home && *home && !(l->home = canon_or_copy(home)))
		goto fail;
	if ((rc = set_python(l, opts)) != 0)
		goto fail;
	rc = -ENOMEM;
	if (opts->hosts_path && !(l->hosts_path = strdup(opts->hosts_path)))
		goto fail;
	if (opts->datadir && !(l->datadir = strdup(opts->datadir)))
		goto fail;
	*out = l;
	return 0;
fail:
	sb_learn_free(l);
	return rc;
}

void sb_learn_free(struct sb_learn *l)
{
	if (!l)
		return;
	if (l->jfd >= 0)
		sb_learn_journal_close(l, false);
	lset_free(&l->paths);
	lset_free(&l->net);
	lset_free(&l->dns);
	lset_free(&l->env_names);
	lset_free(&l->imports);
	lset_free(&l->api);
	lset_free(&l->exec);
	lset_free(&l->eval);
	lset_free(&l->audit);
	for (int i = 0; i < SB_API__COUNT; i++)
		free(l->cat_why[i]);
	for (char **e = l->env; e && *e; e++)
		free(*e);
	free(l->env);
	free(l->cwd);
	free(l->home);
	free(l->python_prefix);
	free(l->python_base_prefix);
	free(l->python_exe);
	free(l->hosts_path);
	free(l->datadir);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

int sb_learn_data_path(const struct sb_learn *l, const char *name, char **out)
{
	const char *dirs[] = { l->datadir, SB_DATADIR "/rules", SB_DATADIR, SB_SRCDIR "/rules" };
	char *p;

	*out = NULL;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i])
			continue;
		if (asprintf(&p, "%s/%s", dirs[i], name) < 0)
			return -ENOMEM;
		if (access(p, R_OK) == 0) {
			*out = p;
			return 0;
		}
		free(p);
		/* An explicit directory is the only place looked at (tests). */
		if (i == 0)
			return -ENOENT;
	}
	return -ENOENT;
}

/* ---- storing ---------------------------------------------------------- */

/* Keep the first Python location that needed the item. */
static int note_why(struct sb_learn *l, struct litem *it, const char *why, bool *changed)
{
	if (!why || !*why || it->why)
		return 0;
	if (!(it->why = strdup(why)))
		return -ENOMEM;
	it->why_seq = ++l->order;
	*changed = true;
	return 0;
}

/* Common tail of every store: number a new item, keep its location, and
 * journal it when anything about it changed. */
static int finish_store(struct sb_learn *l, const char *kind, struct litem *it, bool is_new,
			bool changed, const char *why)
{
	int rc;

	if (is_new) {
		it->seq = ++l->order;
		changed = true;
	}
	if ((rc = note_why(l, it, why, &changed)))
		return rc;
	if (changed)
		sb_learn_journal_item(l, kind, it);
	return 0;
}

int sb_learn_store_path(struct sb_learn *l, const char *path, unsigned access, bool content,
			const char *why)
{
	struct litem *it;
	bool is_new, changed = false;
	int rc = lset_add(&l->paths, path, &it, &is_new);

	if (rc)
		return rc;
	if ((it->bits | access) != it->bits) {
		it->bits |= access;
		changed = true;
	}
	if (content && !(it->flags & LI_CONTENT)) {
		it->flags |= LI_CONTENT;
		changed = true;
	}
	return finish_store(l, "path", it, is_new, changed, why);
}

static void hex_addr(char *out, int family, const uint8_t *addr)
{
	size_t n = family == AF_INET6 ? 16 : 4;

	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", addr[i]);
}

int sb_learn_store_net(struct sb_learn *l, const struct lnet *n, const char *why)
{
	char key[96], hex[33];
	struct litem *it;
	bool is_new;
	int rc;

	hex_addr(hex, n->family, n->addr);
	snprintf(key, sizeof(key), "%u|%u|%d|%s|%u", n->proto, n->dir, n->family, hex, n->port);
	if ((rc = lset_add(&l->net, key, &it, &is_new)))
		return rc;
	if (is_new)
		it->net = *n;
	return finish_store(l, "net", it, is_new, false, why);
}

int sb_learn_store_dns(struct sb_learn *l, const char *name, int family, const void *addr)
{
	char key[SB_EV_NAME_MAX + 48], hex[33];
	struct litem *it;
	bool is_new;
	int rc;

	if (family != AF_INET && family != AF_INET6)
		return 0;
	hex_addr(hex, family, addr);
	snprintf(key, sizeof(key), "%s|%d|%s", name, family, hex);
	if ((rc = lset_add(&l->dns, key, &it, &is_new)))
		return rc;
	if (is_new) {
		it->net.family = family;
		memcpy(it->net.addr, addr, family == AF_INET6 ? 16 : 4);
		if (!(it->aux = strdup(name)))
			return -ENOMEM;
	}
	return finish_store(l, "dns", it, is_new, false, NULL);
}

static int store_name(struct sb_learn *l, struct lset *s, const char *kind, const char *name,
		      const char *why)
{
	struct litem *it;
	bool is_new;
	int rc = lset_add(s, name, &it, &is_new);

	if (rc)
		return rc;
	return finish_store(l, kind, it, is_new, false, why);
}

int sb_learn_store_env(struct sb_learn *l, const char *name, const char *why)
{
	return store_name(l, &l->env_names, "env", name, why);
}

int sb_learn_store_import(struct sb_learn *l, const char *module, const char *why)
{
	return store_name(l, &l->imports, "import", module, why);
}

int sb_learn_store_exec(struct sb_learn *l, const char *path, const char *why)
{
	return store_name(l, &l->exec, "exec", path, why);
}

/* The alphabet src/agent.c admits for eval tokens and profile names: the
 * journal is replayed through here too. */
static bool eval_word(const char *s, const char *extra, bool empty_ok)
{
	if (!*s)
		return empty_ok;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && !strchr(extra, *s))
			return false;
	return true;
}

int sb_learn_store_eval(struct sb_learn *l, const char *profile, enum sb_eval_key k, const char *token,
			const char *why)
{
	char key[2 * SB_EV_NAME_MAX + 4];
	bool ok;

	/* A refusal for a limit is not a construct: no rule to learn. */
	if ((unsigned)k >= SB_EVAL__COUNT || k == SB_EVAL_REFUSED || strlen(profile) >= SB_EV_NAME_MAX ||
	    strlen(token) >= SB_EV_NAME_MAX || !eval_word(profile, "-", true))
		return -EINVAL;
	/* A call site is only ever written inside a comment; a token becomes
	 * part of a rule line. */
	ok = k >= SB_EVAL_CONTEXT_SITE ? token[0] && !strpbrk(token, "\n\r\t")
				       : eval_word(token, k == SB_EVAL_IMPORT ? "." : "", false) &&
						 !isdigit((unsigned char)token[0]) &&
						 (k != SB_EVAL_SYNTAX || sb_eval_syntax_known(token));
	if (!ok)
		return -EINVAL;
	snprintf(key, sizeof(key), "%s\t%d\t%s", profile, (int)k, token);
	return store_name(l, &l->eval, "eval", key, why);
}

int sb_learn_store_api(struct sb_learn *l, const char *qualname, int category, const char *why)
{
	struct litem *it;
	bool is_new;
	int rc = lset_add(&l->api, qualname, &it, &is_new);

	if (rc)
		return rc;
	if (is_new)
		it->bits = (unsigned)category;
	return finish_store(l, "api", it, is_new, false, why);
}

int sb_learn_store_category(struct sb_learn *l, int category, const char *why)
{
	struct litem it = { 0 };
	bool changed = false;

	if (category < 0 || category >= SB_API__COUNT)
		return -EINVAL;
	if (!(l->cats & (1u << category))) {
		l->cats |= 1u << category;
		l->cat_why_seq[category] = ++l->order;
		changed = true;
	}
	if (why && *why && !l->cat_why[category]) {
		if (!(l->cat_why[category] = strdup(why)))
			return -ENOMEM;
		l->cat_why_seq[category] = ++l->order;
		changed = true;
	}
	if (changed) {
		char key[16];

		snprintf(key, sizeof(key), "%d", category);
		it.key = key;
		it.bits = (unsigned)category;
		it.why = l->cat_why[category];
		sb_learn_journal_item(l, "cat", &it);
	}
	return 0;
}
