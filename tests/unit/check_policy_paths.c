/* Path decisions: longest prefix, ro/rw, ignore= forms, protected policy
 * files, implicit grants. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_policy.h"

#define R SB_ACC_READ
#define W (SB_ACC_READ | SB_ACC_WRITE)
#define X SB_ACC_EXEC

/* Rules of the main table; %s is the temp dir (absolute ignore= pattern). */
static const char main_rules[] =
	"expose-ro=./data\n"		/* 1 */
	"expose-rw=./out\n"		/* 2 */
	"expose-ro=./out/ro\n"		/* 3 */
	"expose-rw=./data/sub\n"	/* 4 */
	"ignore=.env\n"			/* 5 */
	"ignore=*.log\n"		/* 6 */
	"ignore=%s/data/private*\n"	/* 7 */
	"ignore=out/*.bak\n"		/* 8 */
	"expose-ro=./proj\n"		/* 9 */
	"ignore=.git\n"			/* 10 */
	"ignore=[Tt]mp?\n";		/* 11 */

static const struct {
	const char *path;	/* relative to the temp dir, or absolute */
	unsigned access;
	enum sb_path_verdict verdict;
	unsigned line;		/* deciding rule, 0 = none */
} path_cases[] = {
	{ "data/file.txt", R, SB_PATH_ALLOW, 1 },
	{ "data/file.txt", W, SB_PATH_READ_ONLY, 1 },
	{ "data/file.txt", X, SB_PATH_ALLOW, 1 },
	{ "data", R, SB_PATH_ALLOW, 1 },
	{ "data", W, SB_PATH_READ_ONLY, 1 },
	{ "data/sub", R, SB_PATH_ALLOW, 4 },
	{ "data/sub/x/y", W, SB_PATH_ALLOW, 4 },
	{ "out/a", W, SB_PATH_ALLOW, 2 },
	{ "out/ro/a", W, SB_PATH_READ_ONLY, 3 },
	{ "out/ro/a", R, SB_PATH_ALLOW, 3 },
	{ "out/rox/a", W, SB_PATH_ALLOW, 2 },
	{ "datax/file", R, SB_PATH_NOT_EXPOSED, 0 },
	{ "", R, SB_PATH_NOT_EXPOSED, 0 },
	{ "/", R, SB_PATH_NOT_EXPOSED, 0 },
	{ "/etc/passwd", R, SB_PATH_NOT_EXPOSED, 0 },
	{ "data/.env", R, SB_PATH_IGNORED, 5 },
	{ "data/.env/inner", R, SB_PATH_IGNORED, 5 },
	{ "data/x.env", R, SB_PATH_ALLOW, 1 },
	{ "out/app.log", W, SB_PATH_IGNORED, 6 },
	{ "out/app.log.1", W, SB_PATH_ALLOW, 2 },
	{ "data/private.key", R, SB_PATH_IGNORED, 7 },
	{ "data/privateX/y", R, SB_PATH_IGNORED, 7 },
	{ "data/not-private", R, SB_PATH_ALLOW, 1 },
	{ "out/x.bak", W, SB_PATH_IGNORED, 8 },
	{ "out/deep/x.bak", W, SB_PATH_IGNORED, 8 },
	{ "data/x.bak", R, SB_PATH_ALLOW, 1 },
	{ "proj/.git/config", R, SB_PATH_IGNORED, 10 },
	{ "proj/src/a.py", R, SB_PATH_ALLOW, 9 },
	{ "/var/x.log", R, SB_PATH_IGNORED, 6 },
	{ "data/tmp1/f", R, SB_PATH_IGNORED, 11 },
	{ "data/Tmp2", R, SB_PATH_IGNORED, 11 },
	{ "data/tmp12", R, SB_PATH_ALLOW, 1 },
};

START_TEST(path_decisions)
{
	char text[8192], path[8192];
	const struct sb_rule_ref *hit = (void *)1;
	enum sb_path_verdict v;

	tp_mkdir("data/sub");
	tp_mkdir("out/ro");
	tp_mkdir("proj");
	snprintf(text, sizeof(text), main_rules, tp.dir);
	ck_assert_int_eq(tp_load(text), 0);
	if (path_cases[_i].path[0] == '/')
		snprintf(path, sizeof(path), "%s", path_cases[_i].path);
	else if (!path_cases[_i].path[0])
		snprintf(path, sizeof(path), "%s", tp.dir);
	else
		snprintf(path, sizeof(path), "%s/%s", tp.dir, path_cases[_i].path);
	v = sb_policy_check_path(tp.p, path, strlen(path), path_cases[_i].access, &hit);
	ck_assert_msg(v == path_cases[_i].verdict, "%s: verdict %d, expected %d", path, v, path_cases[_i].verdict);
	if (path_cases[_i].line) {
		ck_assert_ptr_nonnull(hit);
		ck_assert_uint_eq(hit->line, path_cases[_i].line);
		ck_assert_str_eq(hit->file, ".py-sandboxes");
	} else {
		ck_assert_ptr_null(hit);
	}
}
END_TEST

/* The rule file and its includes are never writable, even inside expose-rw. */
static const struct {
	const char *path;
	unsigned access;
	enum sb_path_verdict verdict;
} protect_cases[] = {
	{ ".py-sandboxes", R, SB_PATH_ALLOW },
	{ ".py-sandboxes", W, SB_PATH_PROTECTED },
	{ "conf/inc.profile", W, SB_PATH_PROTECTED },
	{ "conf/inc.profile", R, SB_PATH_ALLOW },
	{ "conf/other", W, SB_PATH_ALLOW },
	{ "conf", W, SB_PATH_PROTECTED },	/* renaming the directory would move it */
	{ "", W, SB_PATH_PROTECTED },
	{ "other", W, SB_PATH_ALLOW },
	{ ".py-sandboxes.old", W, SB_PATH_ALLOW },
	{ "ro/x", W, SB_PATH_READ_ONLY },
};

START_TEST(path_protected)
{
	char path[8192];

	tp_mkdir("ro");
	tp_write("conf/inc.profile", "expose-ro=./ro\n");
	ck_assert_int_eq(tp_load("expose-rw=.\ninclude \"./conf/inc.profile\"\n"), 0);
	snprintf(path, sizeof(path), "%s%s%s", tp.dir, *protect_cases[_i].path ? "/" : "", protect_cases[_i].path);
	ck_assert_int_eq(sb_policy_check_path(tp.p, path, strlen(path), protect_cases[_i].access, NULL),
			 protect_cases[_i].verdict);
}
END_TEST

START_TEST(path_protected_missing_config)
{
	const char *p = tp_path(".py-sandboxes");

	tp_write("learn.template", "expose-rw=.\n");
	tp.opts.template_path = tp_path("learn.template");
	ck_assert_int_eq(tp_load(NULL), 0);
	/* Learning will create it: the program may not write it first. */
	ck_assert_int_eq(sb_policy_check_path(tp.p, p, strlen(p), W, NULL), SB_PATH_PROTECTED);
}
END_TEST

START_TEST(path_implicit_grant)
{
	const struct sb_rule_ref *hit = NULL;
	const char *so = tp_path("py/lib/x.so"), *inner = tp_path("py/lib/site/a.so");
	const struct sb_expose *ex;
	size_t n;

	tp_mkdir("py/lib/site");
	ck_assert_int_eq(tp_load("ignore=*.so\nexpose-ro=./py/lib/site\n"), 0);
	ck_assert_int_eq(sb_policy_check_path(tp.p, so, strlen(so), R, NULL), SB_PATH_IGNORED);
	ck_assert_int_eq(sb_policy_grant(tp.p, tp_path("py"), SB_ACC_READ, "python interpreter"), 0);
	ck_assert_int_eq(sb_policy_check_path(tp.p, so, strlen(so), R, &hit), SB_PATH_ALLOW);
	ck_assert_str_eq(hit->file, "<python interpreter>");
	ck_assert_uint_eq(hit->line, 0);
	ck_assert_int_eq(sb_policy_check_path(tp.p, so, strlen(so), W, NULL), SB_PATH_READ_ONLY);
	/* An explicit rule deeper inside the grant is subject to ignore= again. */
	ck_assert_int_eq(sb_policy_check_path(tp.p, inner, strlen(inner), R, NULL), SB_PATH_IGNORED);
	ck_assert_int_eq(sb_policy_grant(tp.p, "relative", SB_ACC_READ, "x"), -EINVAL);
	n = sb_policy_exposures(tp.p, &ex);
	ck_assert_uint_ge(n, 2);
	ck_assert_str_eq(ex[0].path, tp_path("py/lib/site"));
	ck_assert(!ex[0].implicit);
	ck_assert(ex[n - 1].implicit);
	ck_assert_str_eq(ex[n - 1].path, tp_path("py"));
}
END_TEST

START_TEST(path_grant_rw_and_explicit_wins)
{
	const char *f = tp_path("d/f");

	tp_mkdir("d");
	ck_assert_int_eq(tp_load("expose-ro=./d\n"), 0);
	ck_assert_int_eq(sb_policy_grant(tp.p, tp_path("d"), W, "tmp"), 0);
	ck_assert_int_eq(sb_policy_check_path(tp.p, f, strlen(f), W, NULL), SB_PATH_READ_ONLY);
	ck_assert_int_eq(sb_policy_grant(tp.p, tp_path("e"), W, "tmp"), 0);
	f = tp_path("e/f");
	ck_assert_int_eq(sb_policy_check_path(tp.p, f, strlen(f), W, NULL), SB_PATH_ALLOW);
}
END_TEST

START_TEST(path_root_and_symlink)
{
	const char *via = tp_path("real/x");

	tp_mkdir("real");
	ck_assert_int_eq(symlink("real", tp_path("link")), 0);
	ck_assert_int_eq(tp_load("expose-ro=/\nexpose-rw=./link\nignore=shadow\n"), 0);
	ck_assert_int_eq(sb_policy_check_path(tp.p, "/etc/hostname", 13, R, NULL), SB_PATH_ALLOW);
	ck_assert_int_eq(sb_policy_check_path(tp.p, "/etc/shadow", 11, R, NULL), SB_PATH_IGNORED);
	ck_assert_int_eq(sb_policy_check_path(tp.p, "/etc/hostname", 13, W, NULL), SB_PATH_READ_ONLY);
	/* The exposure is stored canonically: the target is writable. */
	ck_assert_int_eq(sb_policy_check_path(tp.p, via, strlen(via), W, NULL), SB_PATH_ALLOW);
	/* len bounds the path: only the prefix "/etc" is judged. */
	ck_assert_int_eq(sb_policy_check_path(tp.p, "/etc/shadow", 4, R, NULL), SB_PATH_ALLOW);
}
END_TEST

START_TEST(path_home_and_relative_forms)
{
	char a[512], b[512], c[512], cwd[512];

	tp_mkdir("home/.ssh");
	tp_mkdir("w/deep");
	tp_mkdir("up");
	snprintf(a, sizeof(a), "%s", tp_path("home/.ssh/id"));
	snprintf(b, sizeof(b), "%s", tp_path("w/x"));
	snprintf(c, sizeof(c), "%s", tp_path("up/y"));
	snprintf(cwd, sizeof(cwd), "%s", tp_path("w/deep"));
	tp.opts.cwd = cwd;
	tp.opts.config_path = "../../.py-sandboxes";
	tp_write(".py-sandboxes", "expose-ro=~/.ssh\nexpose-rw=..\nexpose-ro=../../up\n");
	ck_assert_int_eq(tp_load(NULL), 0);
	ck_assert_int_eq(sb_policy_check_path(tp.p, a, strlen(a), R, NULL), SB_PATH_ALLOW);
	ck_assert_int_eq(sb_policy_check_path(tp.p, b, strlen(b), W, NULL), SB_PATH_ALLOW);
	ck_assert_int_eq(sb_policy_check_path(tp.p, c, strlen(c), W, NULL), SB_PATH_READ_ONLY);
}
END_TEST

TCase *tcase_paths(void)
{
	TCase *tc = tcase_create("paths");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, path_decisions, 0, sizeof(path_cases) / sizeof(path_cases[0]));
	tcase_add_loop_test(tc, path_protected, 0, sizeof(protect_cases) / sizeof(protect_cases[0]));
	tcase_add_test(tc, path_protected_missing_config);
	tcase_add_test(tc, path_implicit_grant);
	tcase_add_test(tc, path_grant_rw_and_explicit_wins);
	tcase_add_test(tc, path_root_and_symlink);
	tcase_add_test(tc, path_home_and_relative_forms);
	return tc;
}
