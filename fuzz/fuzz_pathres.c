/* libFuzzer target: the pure path and glob helpers of the policy engine
 * (src/pol_util.c, src/pol_path.c) on arbitrary strings.
 *
 * Input: one control byte, then four NUL-separated fields: a glob pattern,
 * a subject / path, a cwd and a home directory.
 *
 * Promises checked:
 *  - pol_glob_match and pol_star_match read only the counted subject (the
 *    subject is a heap copy of exactly n bytes, no terminator), and behave
 *    as globs: "*" matches everything, an escaped literal matches itself, a
 *    pattern without metacharacters matches only itself, and a match
 *    survives a "*" added at either end;
 *  - pol_abspath gives an absolute, lexically canonical path ("/", or
 *    components without "", "." or ".."), is idempotent, and a relative
 *    path is resolved against cwd exactly as if joined to it;
 *  - pol_similarity is a symmetric ratio in [0, 1], 1 for equal strings;
 *  - sb_policy_check_path, on a policy exposing a directory and ignoring the
 *    fuzzed pattern, hides exactly the paths a component-by-component match
 *    of the stored pattern hides (the lookup works on a counted path inside
 *    a longer buffer, as the supervisor passes it). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "fuzz_input.h"
#include "pol_int.h"
#include "policy.h"

#define FIELD_MAX 1024

static char dir[64], root[96], cfg[128];

static void init_dir(void)
{
	char tmpl[] = "/tmp/fuzz_pathres.XXXXXX";

	if (!mkdtemp(tmpl))
		abort();
	snprintf(dir, sizeof(dir), "%s", tmpl);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(cfg, sizeof(cfg), "%s/.py-sandboxes", dir);
	if (mkdir(root, 0755) < 0)
		abort();
}

/* pol_glob_match on a heap copy of exactly n bytes. */
static bool glob(const char *pat, const char *s, size_t n, bool star_only)
{
	char *copy = malloc(n ? n : 1);
	bool r;

	if (!copy)
		abort();
	memcpy(copy, s, n);
	r = star_only ? pol_star_match(pat, copy, n) : pol_glob_match(pat, copy, n);
	free(copy);
	return r;
}

static char *concat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);

	if (!s)
		abort();
	memcpy(s, a, la);
	memcpy(s + la, b, lb);
	memcpy(s + la + lb, c, lc + 1);
	return s;
}

static void check_globs(const char *pat, const char *subj, size_t n, bool star_only)
{
	bool m = glob(pat, subj, n, star_only);
	/* A star pattern comes from one line of a rule file: never a '\n'
	 * (which it does not match, even literally). */
	bool literal = !strpbrk(pat, star_only ? "*\n" : "*?[\\");

	FUZZ_CHECK(glob("*", subj, n, star_only) || (star_only && memchr(subj, '\n', n)));
	if (literal)
		FUZZ_CHECK(m == (strlen(pat) == n && memcmp(pat, subj, n) == 0));
	/* A trailing backslash would escape the added star. */
	if (m && !(pat[0] && pat[strlen(pat) - 1] == '\\')) {
		char *p2 = concat3("", pat, "*"), *p3 = concat3("*", pat, "");

		FUZZ_CHECK(glob(p2, subj, n, star_only));
		FUZZ_CHECK(glob(p3, subj, n, star_only));
		free(p2);
		free(p3);
	}
	if (!star_only && !memchr(subj, '\0', n)) {
		/* Every byte escaped: a pattern that matches only the subject. */
		char *esc = malloc(2 * n + 1);

		if (!esc)
			abort();
		for (size_t i = 0; i < n; i++) {
			esc[2 * i] = '\\';
			esc[2 * i + 1] = subj[i];
		}
		esc[2 * n] = '\0';
		FUZZ_CHECK(glob(esc, subj, n, false));
		if (n)
			FUZZ_CHECK(!glob(esc, subj, n - 1, false));
		free(esc);
	}
}

static bool canonical(const char *p)
{
	if (strcmp(p, "/") == 0)
		return true;
	if (p[0] != '/')
		return false;
	for (const char *s = p; *s;) {
		const char *e;
		size_t len;

		if (*s != '/')
			return false;
		s++;
		e = strchr(s, '/');
		len = e ? (size_t)(e - s) : strlen(s);
		if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += len;
	}
	return true;
}

static void check_abspath(const char *path, const char *cwd, const char *home, bool use_home)
{
	const char *h = use_home ? home : NULL;
	char *a = pol_abspath(path, cwd, h), *again, *joined, *viajoin;

	if (!a)
		return;	/* out of memory */
	FUZZ_CHECK(canonical(a));
	again = pol_abspath(a, "/elsewhere", "/nohome");
	FUZZ_CHECK(again && strcmp(again, a) == 0);
	free(again);
	if (path[0] != '/' && !(path[0] == '~' && (path[1] == '/' || !path[1]) && h)) {
		/* A relative cwd counts from "/" in both spellings. */
		joined = concat3(cwd, "/", path);
		viajoin = pol_abspath(joined, NULL, NULL);
		FUZZ_CHECK(viajoin && strcmp(viajoin, a) == 0);
		free(joined);
		free(viajoin);
	}
	free(a);
}

/* Callers pass an absolute path and their canonical cwd; HOME is whatever
 * the environment says. */
static void check_display(const char *path, const char *cwd, const char *home)
{
	struct pol_arena arena = { 0 };
	char *abs = pol_abspath(path, "/", NULL), *ccwd = pol_abspath(cwd, "/", NULL), *d;

	if (!abs || !ccwd)
		abort();
	d = pol_display_path(&arena, abs, ccwd, home[0] ? home : NULL);

	FUZZ_CHECK(d != NULL);
	FUZZ_CHECK(strlen(d) <= strlen(abs) + 1);
	pol_arena_free(&arena);
	free(abs);
	free(ccwd);
}

/* The reference: every component (basename pattern) or every prefix ending
 * at a component (absolute pattern), each as its own NUL-terminated string. */
static bool expect_ignored(const struct pol_ignore *ig, const char *canon)
{
	size_t len = strlen(canon);

	for (size_t i = 0; i < len; i++) {
		size_t j;

		if (canon[i] == '/')
			continue;
		for (j = i; j < len && canon[j] != '/'; j++)
			;
		if (ig->component ? glob(ig->match, canon + i, j - i, false) : glob(ig->match, canon, j, false))
			return true;
		i = j;
	}
	return false;
}

static void check_policy(const char *pat, const char *rel, uint8_t ctl)
{
	static char *env[] = { "HOME=/nonexistent-home", "PATH=/usr/bin:/bin", NULL };
	struct sb_load_opts o = {
		.config_path = ".py-sandboxes", .envp = env, .cwd = dir, .no_dns = true,
		.template_path = "/nonexistent/template",
	};
	struct sb_policy *p = NULL;
	struct sb_diag d;
	char hosts[128], *canon, *buf, *rel2;
	FILE *f;

	if (strpbrk(pat, "\n\r") || !pat[0])
		return;
	snprintf(hosts, sizeof(hosts), "%s/no-hosts", dir);
	o.hosts_path = hosts;
	f = fopen(cfg, "w");
	if (!f)
		abort();
	fprintf(f, "expose-ro=%s\nignore=%s\n", root, pat);
	fclose(f);
	sb_diag_init(&d);
	if (sb_policy_load(&o, &p, &d) != 0) {
		sb_diag_free(&d);
		return;
	}
	sb_diag_free(&d);
	rel2 = concat3(root, "/", rel);
	canon = pol_abspath(rel2, "/", NULL);
	free(rel2);
	if (!canon)
		abort();
	/* Counted, inside a longer buffer: the bytes after len must not count. */
	size_t len = strlen(canon);
	buf = concat3(canon, ctl & 1 ? "/x" : "", "");
	enum sb_path_verdict v = sb_policy_check_path(p, buf, len, SB_ACC_READ, NULL);
	bool hidden = false;

	for (size_t i = 0; i < p->ignores.n; i++)
		hidden |= expect_ignored(POL_VEC_AT(&p->ignores, struct pol_ignore, i), canon);
	/* Outside the exposed directory (".." in rel) implicit grants such as
	 * the CA store are exempt from ignore=: nothing simple to compare. */
	if (strncmp(canon, root, strlen(root)) == 0 && (canon[strlen(root)] == '/' || !canon[strlen(root)]))
		FUZZ_CHECK(v == (hidden ? SB_PATH_IGNORED : SB_PATH_ALLOW));
	free(buf);
	free(canon);
	sb_policy_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char pat[FIELD_MAX], subj[FIELD_MAX], cwd[FIELD_MAX], home[FIELD_MAX];
	struct fin f = { data, size };
	uint8_t ctl = fin_u8(&f);
	size_t n;

	if (!*dir)
		init_dir();
	fin_str(&f, pat, sizeof(pat));
	/* The subject is counted: it may hold NUL bytes (the rest of the input). */
	n = f.n < sizeof(subj) ? f.n : sizeof(subj);
	memcpy(subj, f.p, n);
	check_globs(pat, subj, n, ctl & 2);

	fin_str(&f, subj, sizeof(subj));
	fin_str(&f, cwd, sizeof(cwd));
	fin_str(&f, home, sizeof(home));
	check_abspath(subj, cwd[0] ? cwd : "/", home, ctl & 4);
	check_abspath(pat, cwd[0] ? cwd : "/", home, ctl & 4);
	check_display(subj, cwd, home);

	double r = pol_similarity(pat, subj), r2 = pol_similarity(subj, pat);
	FUZZ_CHECK(r >= 0.0 && r <= 1.0 && r == r2);
	FUZZ_CHECK(strlen(pat) > 256 || pol_similarity(pat, pat) == 1.0);

	if (ctl & 8)
		check_policy(pat, subj, ctl);
	return 0;
}
