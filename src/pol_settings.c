/* Scalar keys (reference §2.2): os-sandbox, py-sandbox, remote-result-*, port,
 * learn and the learn=false lock; provider parameters (§2.9); our limit-* keys.
 *
 * A scalar may appear once.  One value from the command line wins over one
 * file value (over any number for port=); otherwise a second value is the
 * upstream error "Multiple <key> parameters." listing every location. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "pol_int.h"

struct occ {
	struct pol_line *l;
	long long v;
	const char *s;
};

#define MAX_OCC 64

struct scalar {
	const char *key;
	struct occ occ[MAX_OCC];
	size_t n;
};

static void occ_add(struct scalar *sc, struct pol_line *l, long long v, const char *s)
{
	/* Past MAX_OCC the key is reported as "Multiple" anyway. */
	if (sc->n == MAX_OCC)
		return;
	sc->occ[sc->n++] = (struct occ){ .l = l, .v = v, .s = s };
}

/* The winning occurrence, or NULL when none or on a "Multiple" error. */
static const struct occ *resolve(struct pol_ctx *c, struct scalar *sc, bool cli_wins_all)
{
	size_t n_cli = 0, cli = 0;

	for (size_t i = 0; i < sc->n; i++)
		if (sc->occ[i].l->cli) {
			n_cli++;
			cli = i;
		}
	if (n_cli == 1 && (sc->n <= 2 || cli_wins_all))
		return &sc->occ[cli];
	if (sc->n == 1)
		return &sc->occ[0];
	if (!sc->n)
		return NULL;
	struct pol_buf b = { 0 };
	for (size_t i = 0; i < sc->n; i++) {
		if (i)
			pol_buf_puts(&b, i + 1 == sc->n ? " and " : ", ");
		pol_buf_puts(&b, pol_ruleref(c, &sc->occ[i].l->ref));
	}
	if (b.oom)
		pol_oom(c);
	else if (sb_diag_error(c->d, "", 0, "%s: Multiple %s parameters.", b.s, sc->key) < 0)
		pol_oom(c);
	free(b.s);
	return NULL;
}

/* Lower-cased, stripped copy of a value into buf. */
static const char *norm(const char *v, char *buf, size_t size)
{
	size_t n;

	while (isspace((unsigned char)*v))
		v++;
	n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)v[i]);
	buf[n] = 0;
	return buf;
}

static bool in_list(const char *v, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(v, *list))
			return true;
	return false;
}

static const char *const os_names[] = {
	[SB_OS_AUTO] = "auto", [SB_OS_NONE] = "none", [SB_OS_SUBPROCESS] = "subprocess",
	[SB_OS_LANDLOCK] = "landlock", [SB_OS_UNSHARE] = "unshare", [SB_OS_BWRAP] = "bwrap",
	[SB_OS_FIREJAIL] = "firejail", [SB_OS_QEMU] = "qemu",
};

/* Python's int(): optional sign, digits with single '_' separators. */
static bool parse_pyint(const char *s, long long *out)
{
	char buf[64];
	size_t o = 0;
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	for (; *s && !isspace((unsigned char)*s); s++) {
		if (*s == '_') {
			if (!o || !isdigit((unsigned char)buf[o - 1]) || !isdigit((unsigned char)s[1]))
				return false;
			continue;
		}
		if (o + 1 >= sizeof(buf))
			return false;
		buf[o++] = *s;
	}
	while (isspace((unsigned char)*s))
		s++;
	buf[o] = 0;
	if (*s || !o)
		return false;
	errno = 0;
	*out = strtoll(buf, &end, 10);
	return !*end && !errno && (isdigit((unsigned char)buf[0]) || isdigit((unsigned char)buf[1]));
}

static void parse_bool_key(struct pol_ctx *c, struct pol_line *l, struct scalar *sc, const char *const *yes,
			   const char *const *no, const char *hint)
{
	char buf[64];
	const char *v = norm(l->value, buf, sizeof(buf));

	l->claimed = true;
	if (in_list(v, yes))
		occ_add(sc, l, 1, NULL);
	else if (in_list(v, no))
		occ_add(sc, l, 0, NULL);
	else
		pol_err(c, l, "Invalid value '%s' for %s. %s", v, sc->key, hint);
}

static void parse_os(struct pol_ctx *c, struct pol_line *l, struct scalar *sc)
{
	char buf[64];
	const char *v = norm(l->value, buf, sizeof(buf));

	l->claimed = true;
	for (size_t i = 0; i < sizeof(os_names) / sizeof(os_names[0]); i++)
		if (!strcmp(v, os_names[i])) {
			occ_add(sc, l, (long long)i, NULL);
			return;
		}
	pol_err(c, l, "Invalid os-sandbox '%s'.", v);
}

static void parse_port(struct pol_ctx *c, struct pol_line *l, struct scalar *sc)
{
	long long v;

	l->claimed = true;
	if (!parse_pyint(l->value, &v) || v < 0 || v > 65535)
		pol_err(c, l, "Port must be a positive value");
	else
		occ_add(sc, l, v, NULL);
}

static bool parent_exists(const char *abs)
{
	char *dir = strdup(abs);
	struct stat st;
	bool ok;

	if (!dir)
		return false;
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
	free(dir);
	return ok;
}

/* learn=FILE: bare name next to the file holding the rule (cwd for the
 * command line), else from the cwd; empty = the rule file itself. */
static void parse_learn(struct pol_ctx *c, struct pol_line *l, struct scalar *sc, const char *config_abs)
{
	char buf[16], *abs = NULL;
	const char *raw = l->value;
	size_t n;

	l->claimed = true;
	while (isspace((unsigned char)*raw))
		raw++;
	n = strlen(raw);
	while (n && isspace((unsigned char)raw[n - 1]))
		n--;
	char *v = pol_strndup(&c->p->arena, raw, n);
	if (!v)
		return pol_oom(c);
	norm(v, buf, sizeof(buf));
	if (!l->cli && !strcmp(buf, "false"))
		return;		/* the lock, handled by check_lock() */
	if (!strcmp(buf, "true") || !strcmp(buf, "false") || !strcmp(buf, "0") || !strcmp(buf, "1")) {
		pol_err(c, l, "Invalid value '%s' for 'learn'. Use the filename instead.", v);
		return;
	}
	if (!*v) {
		occ_add(sc, l, 0, config_abs);
		return;
	}
	if (!strchr(v, '/') && !l->cli) {
		char *dir = strdup(l->abs_file);
		if (!dir)
			return pol_oom(c);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = 0;
		abs = pol_abspath(v, dir, c->home);
		free(dir);
	} else {
		abs = pol_abspath(v, c->cwd, c->home);
	}
	if (!abs)
		return pol_oom(c);
	if (!parent_exists(abs))
		pol_err(c, l, "Invalid value '%s' for 'learn'. The parent path must exist.", v);
	else
		occ_add(sc, l, 0, pol_strdup(&c->p->arena, abs));
	free(abs);
}

static struct pol_line *find_lock(struct pol_ctx *c)
{
	char buf[16];

	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (!l->cli && pol_key_is(l, "learn") && !strcmp(norm(l->value, buf, sizeof(buf)), "false"))
			return l;
	}
	return NULL;
}

/* learn=false forbids learning and every command-line rule. */
static void check_lock(struct pol_ctx *c, const struct occ *learn_occ, const char *config_abs)
{
	struct pol_line *lock = find_lock(c);
	struct sb_settings *st = &c->p->st;

	if (!lock)
		return;
	st->learn_locked = true;
	c->p->lock_ref_text = pol_ruleref(c, &lock->ref);
	if (st->learn_file) {
		const char *cause;

		if (learn_occ && learn_occ->l->cli && !*learn_occ->l->value)
			cause = "'--learn' on the command line";
		else if (learn_occ && learn_occ->l->cli)
			cause = pol_printf(&c->p->arena, "'--%s' on the command line", learn_occ->l->ref.text);
		else if (learn_occ)
			cause = pol_ruleref(c, &learn_occ->l->ref);
		else
			cause = pol_printf(&c->p->arena, "the missing rule file '%s'",
					   pol_display_path(&c->p->arena, config_abs, c->cwd, c->home));
		pol_err(c, lock, "learning mode is forbidden, but requested by %s.", cause ? cause : "?");
	}
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (l->cli && !pol_key_is(l, "learn"))
			pol_err(c, lock, "learning mode is forbidden, but requested by '--%s' on the command line.",
				l->ref.text);
	}
}

static int add_cli_learn(struct pol_ctx *c)
{
	struct pol_line *l;
	char *text;

	if (!c->o->cli_learn)
		return 0;
	text = pol_printf(&c->p->arena, "learn=%s", c->o->cli_learn);
	l = pol_new_line(c);
	if (!text || !l)
		return -ENOMEM;
	l->ref = (struct sb_rule_ref){ .file = ".", .line = 0, .text = text };
	l->abs_file = "";
	l->value = text + 6;
	l->keylen = 5;
	l->cli = true;
	return 0;
}

void pol_parse_settings(struct pol_ctx *c)
{
	static const char *const yes_py[] = { "", "true", "1", NULL }, *const no_py[] = { "false", "none", "0", NULL };
	static const char *const yes_rg[] = { "", "true", "1", "on", NULL },
			     *const no_rg[] = { "false", "none", "0", "off", NULL };
	static const char *const objects[] = { "objects", "default", NULL },
			     *const data[] = { "data-only", "data_only", NULL };
	struct scalar os = { "os-sandbox" }, py = { "py-sandbox" }, rg = { "remote-result-guard" },
		      rm = { "remote-result-mode" }, port = { "port" }, learn = { "learn" };
	struct sb_settings *st = &c->p->st;
	const char *config_abs = st->config_path;
	const struct occ *w;

	if (add_cli_learn(c))
		return pol_oom(c);
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (l->claimed)
			continue;
		if (pol_key_is(l, "os-sandbox"))
			parse_os(c, l, &os);
		else if (pol_key_is(l, "py-sandbox"))
			parse_bool_key(c, l, &py, yes_py, no_py, "Use true or false.");
		else if (pol_key_is(l, "remote-result-guard"))
			parse_bool_key(c, l, &rg, yes_rg, no_rg, "Use true or false.");
		else if (pol_key_is(l, "remote-result-mode"))
			parse_bool_key(c, l, &rm, data, objects, "Use objects or data-only.");
		else if (pol_key_is(l, "port"))
			parse_port(c, l, &port);
		else if (pol_key_is(l, "learn"))
			parse_learn(c, l, &learn, config_abs);
	}
	if ((w = resolve(c, &os, false)))
		st->os_sandbox = (enum sb_os_sandbox)w->v;
	if ((w = resolve(c, &py, false)))
		st->py_sandbox = w->v;
	if ((w = resolve(c, &rg, false)))
		st->remote_result_guard = w->v;
	if ((w = resolve(c, &rm, false)))
		st->remote_result_mode = w->v ? SB_RESULT_DATA_ONLY : SB_RESULT_OBJECTS;
	if ((w = resolve(c, &port, true)))
		st->port = (long)w->v;
	w = resolve(c, &learn, false);
	if (w)
		st->learn_file = w->s;
	else if (!st->config_exists)
		st->learn_file = config_abs;
	check_lock(c, w, config_abs);
}

/* ---- provider parameters ---------------------------------------------- */

static const char *const qemu_keys[] = {
	"use_kvm", "memory", "show_boot_console", "start_timeout", "virtfs", "virtfs_stage",
	"virtfs_security_model", "ld_closure_libs", NULL,
};

void pol_parse_providers(struct pol_ctx *c)
{
	static const char *const providers[] = { "bwrap", "firejail", "unshare", "qemu", NULL };

	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);
		const char *dot = memchr(l->ref.text, '.', l->keylen);

		if (l->claimed || !dot || l->ref.text[l->keylen] != '=')
			continue;
		l->claimed = true;
		char *prov = pol_strndup(&c->p->arena, l->ref.text, (size_t)(dot - l->ref.text));
		char *key = pol_strndup(&c->p->arena, dot + 1, l->keylen - (size_t)(dot - l->ref.text) - 1);
		if (!prov || !key)
			return pol_oom(c);
		if (!in_list(prov, providers)) {
			pol_err(c, l, "In '%s', unknown provider '%s'. Use one of: bwrap, firejail, qemu, unshare.",
				l->ref.text, prov);
			continue;
		}
		/* Unknown qemu.* keys are ignored upstream (older profiles carry them). */
		if (!strcmp(prov, "qemu") && !in_list(key, qemu_keys))
			continue;
		struct sb_provider_param *pp = pol_vec_push(&c->p->providers);
		if (!pp)
			return pol_oom(c);
		pp->provider = prov;
		pp->key = key;
		pp->value = l->value;
		pp->ref = &l->ref;
	}
}

/* ---- limit-* ------------------------------------------------------------ */

static const struct {
	const char *key;
	bool size;
} limit_keys[SB_LIMIT__COUNT] = {
	[SB_LIMIT_NPROC] = { "limit-nproc", false }, [SB_LIMIT_AS] = { "limit-as", true },
	[SB_LIMIT_NOFILE] = { "limit-nofile", false }, [SB_LIMIT_FSIZE] = { "limit-fsize", true },
	[SB_LIMIT_CPU] = { "limit-cpu", false },
};

static bool parse_limit(const char *v, bool size, unsigned long long *out)
{
	char buf[64];
	const char *s = norm(v, buf, sizeof(buf));
	unsigned long long mult = 1, x;
	char *end;

	if (!strcmp(s, "unlimited") || !strcmp(s, "infinity")) {
		*out = RLIM_INFINITY;
		return true;
	}
	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno)
		return false;
	if (size && *end) {
		switch (*end) {
		case 'k': mult = 1ULL << 10; break;
		case 'm': mult = 1ULL << 20; break;
		case 'g': mult = 1ULL << 30; break;
		default: return false;
		}
		end++;
		if (*end == 'b')	/* "512MB" reads the same */
			end++;
	}
	if (*end || (x && mult > ~0ULL / x))
		return false;
	*out = x * mult;
	return true;
}

void pol_parse_limits(struct pol_ctx *c)
{
	struct scalar sc[SB_LIMIT__COUNT];
	struct sb_settings *st = &c->p->st;

	for (int k = 0; k < SB_LIMIT__COUNT; k++) {
		sc[k].key = limit_keys[k].key;
		sc[k].n = 0;
	}
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		for (int k = 0; k < SB_LIMIT__COUNT && !l->claimed; k++) {
			unsigned long long v;

			if (!pol_key_is(l, limit_keys[k].key))
				continue;
			l->claimed = true;
			if (parse_limit(l->value, limit_keys[k].size, &v))
				occ_add(&sc[k], l, (long long)v, NULL);
			else
				pol_err(c, l, "Invalid value '%s' for %s. Use %s.", l->value, limit_keys[k].key,
					limit_keys[k].size ? "a number of bytes (K, M or G suffix allowed) or unlimited"
							   : "a number or unlimited");
		}
	}
	for (int k = 0; k < SB_LIMIT__COUNT; k++) {
		const struct occ *w = resolve(c, &sc[k], false);

		if (w) {
			st->limit_set[k] = true;
			st->limit[k] = (unsigned long long)w->v;
		}
	}
}
