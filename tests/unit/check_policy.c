/* Policy language unit tests: helpers, lexing, includes, ${}, the lock and
 * command-line precedence.  Other areas live in check_policy_*.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_policy.h"

struct tp tp;

#define TEMPLATE SB_TEST_SRCDIR "/rules/py-sandboxes.template"

void tp_setup(void)
{
	char tmpl[] = "/tmp/check_policy.XXXXXX";
	char *canon;

	memset(&tp, 0, sizeof(tp));
	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	canon = realpath(tmpl, NULL);
	ck_assert_ptr_nonnull(canon);
	snprintf(tp.dir, sizeof(tp.dir), "%s", canon);
	free(canon);
	sb_diag_init(&tp.diag);
	tp_mkdir("home");
	char home[4200];
	snprintf(home, sizeof(home), "HOME=%s/home", tp.dir);
	tp_setenv(home);
	tp.opts.config_path = ".py-sandboxes";
	tp.opts.cwd = tp.dir;
	tp.opts.envp = tp.env;
	tp.opts.cli_rules = tp.cli;
	tp.opts.template_path = TEMPLATE;
	tp.opts.hosts_path = "/nonexistent/hosts";
	tp.opts.no_dns = true;
}

void tp_teardown(void)
{
	char cmd[4200];

	sb_policy_free(tp.p);
	sb_diag_free(&tp.diag);
	for (size_t i = 0; i < tp.n_env; i++)
		free(tp.env[i]);
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", tp.dir, tp.dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tp.dir);
}

const char *tp_path(const char *rel)
{
	static char bufs[32][4200];
	static int next;
	char *b = bufs[next++ % 32];

	snprintf(b, sizeof(bufs[0]), "%s/%s", tp.dir, rel);
	return b;
}

void tp_mkdir(const char *rel)
{
	char cmd[4300];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", tp_path(rel));
	ck_assert_int_eq(system(cmd), 0);
}

void tp_write(const char *rel, const char *text)
{
	char dir[4200];
	const char *path = tp_path(rel);
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", rel);
	char *slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		tp_mkdir(dir);
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

void tp_setenv(const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (size_t i = 0; i < tp.n_env; i++)
		if (!strncmp(tp.env[i], kv, n) && tp.env[i][n] == '=') {
			free(tp.env[i]);
			tp.env[i] = strdup(kv);
			return;
		}
	ck_assert_uint_lt(tp.n_env, TP_ENV_MAX);
	tp.env[tp.n_env++] = strdup(kv);
	tp.env[tp.n_env] = NULL;
}

void tp_cli(const char *rule)
{
	tp.cli[tp.n_cli++] = rule;
	tp.opts.n_cli_rules = tp.n_cli;
}

int tp_load(const char *text)
{
	if (text)
		tp_write(tp.opts.config_path, text);
	sb_policy_free(tp.p);
	tp.p = NULL;
	tp.rc = sb_policy_load(&tp.opts, &tp.p, &tp.diag);
	return tp.rc;
}

bool tp_diag_has(enum sb_diag_level lvl, const char *formatted)
{
	for (size_t i = 0; i < tp.diag.n; i++) {
		char *s = sb_diag_format(&tp.diag.items[i]);
		bool eq = s && tp.diag.items[i].level == lvl && !strcmp(s, formatted);

		free(s);
		if (eq)
			return true;
	}
	return false;
}

char *tp_diag_dump(void)
{
	size_t cap = 64, len = 0;
	char *out = calloc(1, cap);

	for (size_t i = 0; i < tp.diag.n && out; i++) {
		char *s = sb_diag_format(&tp.diag.items[i]);
		size_t n = s ? strlen(s) : 0;

		if (len + n + 16 > cap) {
			cap = (len + n + 16) * 2;
			out = realloc(out, cap);
		}
		if (out && s)
			len += (size_t)sprintf(out + len, "%s %s\n", tp.diag.items[i].level ? "W" : "E", s);
		free(s);
	}
	return out;
}

/* ---- lexing ---------------------------------------------------------------- */

static const struct {
	const char *text;
	long port;
} lex_port_cases[] = {
	{ "port=5 # a comment", 5 },
	{ "   port=6   \t", 6 },
	{ "# port=7\n", -1 },
	{ "{PLACEHOLDER}\nport=8", 8 },
	{ "\n\n\nport=9\n\n", 9 },
	{ "port=1_0", 10 },
	{ "#only comments\n   # indented comment\n", -1 },
	{ "port=11\r\n", 11 },
};

START_TEST(lex_port)
{
	ck_assert_int_eq(tp_load(lex_port_cases[_i].text), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, lex_port_cases[_i].port);
}
END_TEST

/* Quotes protect '#': the value keeps its quotes, as upstream. */
static const struct {
	const char *text;
	const char *env;
} lex_quote_cases[] = {
	{ "env=A='x # y'", "A='x # y'" },
	{ "env=A=\"x # y\" # trailing", "A=\"x # y\"" },
	{ "env=A=\"x \\\" # y\" # z", "A=\"x \\\" # y\"" },
	{ "env=A=b#c", "A=b" },
	{ "env=A=it's # here", "A=it's # here" },
};

START_TEST(lex_quotes)
{
	char **env = NULL;
	bool found = false;

	ck_assert_int_eq(tp_load(lex_quote_cases[_i].text), 0);
	ck_assert_int_eq(sb_policy_build_env(tp.p, tp.env, &env), 0);
	for (char **e = env; *e; e++)
		found |= !strcmp(*e, lex_quote_cases[_i].env);
	ck_assert_msg(found, "%s not built", lex_quote_cases[_i].env);
	sb_env_free(env);
}
END_TEST

static const struct {
	const char *text;
	const char *diag;
} lex_error_cases[] = {
	{ "port", ".py-sandboxes(1): Invalid rule 'port'" },
	{ "env = A=1", ".py-sandboxes(1): Invalid rule 'env = A=1'" },
	{ "foo=bar", ".py-sandboxes(1): Invalid rule 'foo=bar'" },
	{ "\n# c\n\nfoo=1 # c", ".py-sandboxes(4): Invalid rule 'foo=1'" },
	{ "include ./x", ".py-sandboxes(1): Invalid rule 'include ./x'" },
	{ "PORT=1", ".py-sandboxes(1): Invalid rule 'PORT=1'" },
	{ "=1", ".py-sandboxes(1): Invalid rule '=1'" },
};

START_TEST(lex_errors)
{
	ck_assert_int_eq(tp_load(lex_error_cases[_i].text), -EINVAL);
	ck_assert_ptr_null(tp.p);
	ck_assert_diag(SB_DIAG_ERROR, lex_error_cases[_i].diag);
}
END_TEST

START_TEST(lex_errors_aggregated)
{
	ck_assert_int_eq(tp_load("a=1\nport=-1\nb=2\nnet=X\n"), -EINVAL);
	ck_assert_uint_eq(sb_diag_count(&tp.diag, SB_DIAG_ERROR), 4);
	ck_assert_diag(SB_DIAG_ERROR, ".py-sandboxes(2): Port must be a positive value");
}
END_TEST

/* ---- ${} --------------------------------------------------------------------- */

static const struct {
	const char *text;
	long port;
} subst_cases[] = {
	{ "port=${P}", 42 },
	{ "port=${UNSET:-43}", 43 },
	{ "port=${EMPTY:-44}", 44 },
	{ "port=${UNSET:-${U2:-${U3:-45}}}", 45 },
	{ "port=${UNSET:-${P}}", 42 },
	{ "port=4${P}", 442 },
	{ "port=${P}${P}", 4242 },
	{ "port=${P:-1}", 42 },
	{ "p${LETTER}rt=46", 46 },
};

START_TEST(subst_ok)
{
	tp_setenv("P=42");
	tp_setenv("EMPTY=");
	tp_setenv("LETTER=o");
	ck_assert_int_eq(tp_load(subst_cases[_i].text), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, subst_cases[_i].port);
}
END_TEST

static const char *const subst_bad[] = {
	"${A:B}", "${}", "${1A}", "${A", "${A-B}", "${A:-x", "${A:=x}", "${A B}", "${A:-${B:C}}",
};

START_TEST(subst_invalid)
{
	char text[128], diag[512];

	snprintf(text, sizeof(text), "port=1\nignore=x%s", subst_bad[_i]);
	ck_assert_int_eq(tp_load(text), -EINVAL);
	snprintf(diag, sizeof(diag),
		 ".py-sandboxes(2): In 'ignore=x%s', invalid substitution '%s': use ${NAME} or ${NAME:-default}.",
		 subst_bad[_i], subst_bad[_i]);
	ck_assert_diag(SB_DIAG_ERROR, diag);
	ck_assert_uint_eq(sb_diag_count(&tp.diag, SB_DIAG_ERROR), 1);
}
END_TEST

START_TEST(subst_no_reexpansion)
{
	tp_setenv("P=42");
	tp_setenv("V=${P}");
	ck_assert_int_eq(tp_load("python-import=${V}, mod${P}"), 0);
	ck_assert(sb_policy_import_allowed(tp.p, "${P}"));
	ck_assert(sb_policy_import_allowed(tp.p, "mod42"));
	ck_assert(!sb_policy_import_allowed(tp.p, "42"));
}
END_TEST

START_TEST(subst_dollar_literal)
{
	ck_assert_int_eq(tp_load("python-import=a$b, $"), 0);
	ck_assert(sb_policy_import_allowed(tp.p, "a$b"));
	ck_assert(sb_policy_import_allowed(tp.p, "$"));
}
END_TEST

/* ---- includes ----------------------------------------------------------------- */

START_TEST(include_cwd_relative)
{
	tp_write("sub/a.profile", "port=7\n");
	ck_assert_int_eq(tp_load("include \"./sub/a.profile\"\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 7);
}
END_TEST

START_TEST(include_keeps_location)
{
	tp_write("sub/a.profile", "\n\nbogus=1\n");
	ck_assert_int_eq(tp_load("include \"sub/a.profile\"   # comment\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR, "sub/a.profile(3): Invalid rule 'bogus=1'");
}
END_TEST

START_TEST(include_bare_next_to_file)
{
	tp.opts.config_path = "conf/.py-sandboxes";
	tp_write("conf/common", "include \"inner\"\nport=8\n");
	tp_write("conf/inner", "py-sandbox=false\n");
	tp_write("common", "port=99\n");	/* the cwd one must not be used */
	ck_assert_int_eq(tp_load("include \"common\"\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 8);
	ck_assert(!sb_policy_settings(tp.p)->py_sandbox);
}
END_TEST

START_TEST(include_nested_bare_next_to_included)
{
	tp_write("d1/a", "include \"b\"\n");
	tp_write("d1/b", "port=12\n");
	ck_assert_int_eq(tp_load("include \"./d1/a\"\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 12);
}
END_TEST

START_TEST(include_home)
{
	tp_write("home/x.profile", "port=13\n");
	ck_assert_int_eq(tp_load("include \"~/x.profile\"\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 13);
}
END_TEST

START_TEST(include_absolute_and_parent)
{
	char text[8300];

	tp_write("abs/x.profile", "port=14\n");
	tp_mkdir("w");
	tp.opts.cwd = tp_path("w");
	tp.opts.config_path = "../.py-sandboxes";
	snprintf(text, sizeof(text), "include \"%s\"\ninclude \"../abs/y.profile\"\n", tp_path("abs/x.profile"));
	tp_write("abs/y.profile", "py-sandbox=0\n");
	tp_write(".py-sandboxes", text);	/* tp_load writes relative to the temp dir, not the cwd */
	ck_assert_int_eq(tp_load(NULL), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 14);
	ck_assert(!sb_policy_settings(tp.p)->py_sandbox);
}
END_TEST

START_TEST(include_missing_ignored)
{
	ck_assert_int_eq(tp_load("include \"./nope\"\ninclude \"nope2\"\ninclude \"/nonexistent/x\"\nport=1\n"), 0);
	ck_assert_uint_eq(tp.diag.n, 0);
}
END_TEST

START_TEST(include_loop)
{
	const char *const *files;

	tp_write("a", "include \"b\"\ninclude \"a\"\nport=1\n");
	tp_write("b", "include \"a\"\ninclude \"./.py-sandboxes\"\npy-sandbox=true\n");
	/* Each file is read once: a second read would say "Multiple port parameters". */
	ck_assert_int_eq(tp_load("include \"a\"\ninclude \".py-sandboxes\"\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 1);
	ck_assert_uint_eq(sb_policy_files(tp.p, &files), 3);
	ck_assert_str_eq(files[0], tp_path(".py-sandboxes"));
	ck_assert_str_eq(files[1], tp_path("a"));
	ck_assert_str_eq(files[2], tp_path("b"));
}
END_TEST

START_TEST(include_unreadable)
{
	tp_mkdir("adir");
	ck_assert_int_eq(tp_load("include \"./adir\"\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR,
		       ".py-sandboxes(1): In 'include \"./adir\"', cannot read the included file './adir': Is a directory.");
}
END_TEST

START_TEST(include_unreadable_perm)
{
	tp_write("secret.profile", "port=1\n");
	chmod(tp_path("secret.profile"), 0);
	if (access(tp_path("secret.profile"), R_OK) == 0)
		return;		/* root reads anyway: the EISDIR case covers the path */
	ck_assert_int_eq(tp_load("include \"secret.profile\"\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR, ".py-sandboxes(1): In 'include \"secret.profile\"', cannot read the included file "
				      "'secret.profile': Permission denied.");
}
END_TEST

START_TEST(include_optional)
{
	tp_mkdir("adir");
	tp_write("opt", "port=3\n");
	ck_assert_int_eq(tp_load("include? \"./adir\"\ninclude? \"./missing\"\ninclude? \"opt\"\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 3);
}
END_TEST

/* ---- the template, learning and the lock ---------------------------------- */

START_TEST(missing_config_uses_template)
{
	const struct sb_settings *st;

	tp_setenv("OS_SANDBOX=bwrap");
	ck_assert_int_eq(tp_load(NULL), 0);
	st = sb_policy_settings(tp.p);
	ck_assert(!st->config_exists);
	ck_assert_str_eq(st->config_path, tp_path(".py-sandboxes"));
	ck_assert_ptr_nonnull(st->learn_file);
	ck_assert_str_eq(st->learn_file, tp_path(".py-sandboxes"));
	ck_assert_int_eq(st->os_sandbox, SB_OS_SUBPROCESS);	/* forced while learning */
	ck_assert_int_eq(st->remote_result_mode, SB_RESULT_DATA_ONLY);
	ck_assert(sb_policy_env_covers(tp.p, "TERM"));
	ck_assert_str_eq(sb_policy_template_path(tp.p), TEMPLATE);
}
END_TEST

START_TEST(template_enforced_os_sandbox)
{
	tp_setenv("OS_SANDBOX=bwrap");
	ck_assert_int_eq(tp_load("os-sandbox=${OS_SANDBOX:-auto}\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->os_sandbox, SB_OS_BWRAP);
	ck_assert_ptr_null(sb_policy_settings(tp.p)->learn_file);
}
END_TEST

static const struct {
	const char *cli_learn;	/* NULL: not given */
	const char *file_line;	/* learn= line in the rule file, or NULL */
	const char *expect;	/* learn_file relative to the temp dir, or NULL for an error */
	const char *diag;
} learn_cases[] = {
	{ "", NULL, "conf/.py-sandboxes", NULL },
	{ "out.sb", NULL, "out.sb", NULL },
	{ "sub/out.sb", NULL, "sub/out.sb", NULL },
	{ "nodir/x", NULL, NULL, ".(0): Invalid value 'nodir/x' for 'learn'. The parent path must exist." },
	{ NULL, "learn=learned.sb", "conf/learned.sb", NULL },
	{ NULL, "learn=./learned.sb", "learned.sb", NULL },
	{ NULL, "learn=", "conf/.py-sandboxes", NULL },
	{ NULL, "learn=true", NULL, "conf/.py-sandboxes(1): Invalid value 'true' for 'learn'. Use the filename instead." },
	{ NULL, "learn=1", NULL, "conf/.py-sandboxes(1): Invalid value '1' for 'learn'. Use the filename instead." },
	{ NULL, "learn=0", NULL, "conf/.py-sandboxes(1): Invalid value '0' for 'learn'. Use the filename instead." },
	{ NULL, "learn=nodir/x", NULL, "conf/.py-sandboxes(1): Invalid value 'nodir/x' for 'learn'. The parent path must exist." },
	{ "false", NULL, NULL, ".(0): Invalid value 'false' for 'learn'. Use the filename instead." },
	{ "cli.sb", "learn=file.sb", "cli.sb", NULL },
};

START_TEST(learn_targets)
{
	tp_mkdir("sub");
	tp.opts.config_path = "conf/.py-sandboxes";
	tp.opts.cli_learn = learn_cases[_i].cli_learn;
	tp_mkdir("conf");
	tp_load(learn_cases[_i].file_line ? learn_cases[_i].file_line : "port=1");
	if (!learn_cases[_i].expect) {
		ck_assert_int_eq(tp.rc, -EINVAL);
		ck_assert_diag(SB_DIAG_ERROR, learn_cases[_i].diag);
		return;
	}
	ck_assert_loaded();
	ck_assert_str_eq(sb_policy_settings(tp.p)->learn_file, tp_path(learn_cases[_i].expect));
}
END_TEST

START_TEST(lock_alone)
{
	ck_assert_int_eq(tp_load("learn=false\n"), 0);
	ck_assert(sb_policy_settings(tp.p)->learn_locked);
	ck_assert_ptr_null(sb_policy_settings(tp.p)->learn_file);
}
END_TEST

START_TEST(lock_cli_learn)
{
	tp.opts.cli_learn = "";
	ck_assert_int_eq(tp_load("port=1\nlearn=false\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR,
		       ".py-sandboxes(2): learning mode is forbidden, but requested by '--learn' on the command line.");
}
END_TEST

START_TEST(lock_cli_learn_file)
{
	tp.opts.cli_learn = "x.sb";
	ck_assert_int_eq(tp_load("learn=false\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR,
		       ".py-sandboxes(1): learning mode is forbidden, but requested by '--learn=x.sb' on the command line.");
}
END_TEST

START_TEST(lock_learn_line)
{
	tp_write("inc.profile", "\nlearn=other.sb\n");
	ck_assert_int_eq(tp_load("include \"inc.profile\"\nlearn=false\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR, ".py-sandboxes(2): learning mode is forbidden, but requested by inc.profile(2).");
}
END_TEST

START_TEST(lock_in_include)
{
	tp_write("frozen.profile", "learn=false\n");
	tp_cli("port=1");
	ck_assert_int_eq(tp_load("include \"frozen.profile\"\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR,
		       "frozen.profile(1): learning mode is forbidden, but requested by '--port=1' on the command line.");
}
END_TEST

START_TEST(lock_missing_file)
{
	tp_write("locked.template", "learn=false\nport=1\n");
	tp.opts.template_path = tp_path("locked.template");
	ck_assert_int_eq(tp_load(NULL), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR,
		       "locked.template(1): learning mode is forbidden, but requested by the missing rule file '.py-sandboxes'.");
}
END_TEST

START_TEST(lock_every_cli_rule)
{
	tp_cli("env=A=1");
	tp_cli("expose-ro=/");
	ck_assert_int_eq(tp_load("learn=false\n"), -EINVAL);
	ck_assert_uint_eq(sb_diag_count(&tp.diag, SB_DIAG_ERROR), 2);
	ck_assert_diag(SB_DIAG_ERROR,
		       ".py-sandboxes(1): learning mode is forbidden, but requested by '--env=A=1' on the command line.");
	ck_assert_diag(SB_DIAG_ERROR,
		       ".py-sandboxes(1): learning mode is forbidden, but requested by '--expose-ro=/' on the command line.");
}
END_TEST

/* ---- command-line precedence -------------------------------------------------- */

START_TEST(cli_wins_one_file_value)
{
	tp_cli("port=2");
	tp_cli("os-sandbox=none");
	ck_assert_int_eq(tp_load("port=1\nos-sandbox=bwrap\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 2);
	ck_assert_int_eq(sb_policy_settings(tp.p)->os_sandbox, SB_OS_NONE);
}
END_TEST

START_TEST(cli_port_wins_many)
{
	tp_cli("port=2");
	ck_assert_int_eq(tp_load("port=1\nport=3\n"), 0);
	ck_assert_int_eq(sb_policy_settings(tp.p)->port, 2);
}
END_TEST

START_TEST(cli_does_not_win_two_file_values)
{
	tp_cli("os-sandbox=none");
	ck_assert_int_eq(tp_load("os-sandbox=bwrap\nos-sandbox=landlock\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR, "<arg>, .py-sandboxes(1) and .py-sandboxes(2): Multiple os-sandbox parameters.");
}
END_TEST

START_TEST(multiple_file_values)
{
	tp_write("inc", "py-sandbox=true\n");
	ck_assert_int_eq(tp_load("port=1\n\nport=2\ninclude \"inc\"\npy-sandbox=false\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR, ".py-sandboxes(1) and .py-sandboxes(3): Multiple port parameters.");
	ck_assert_diag(SB_DIAG_ERROR, "inc(1) and .py-sandboxes(5): Multiple py-sandbox parameters.");
}
END_TEST

START_TEST(cli_rule_origin)
{
	tp_cli("bogus=x");
	tp_cli("nokey");
	ck_assert_int_eq(tp_load("port=1\n"), -EINVAL);
	ck_assert_diag(SB_DIAG_ERROR, ".(0): Invalid rule 'bogus=x'");
	ck_assert_diag(SB_DIAG_ERROR, ".(0): Invalid rule 'nokey='");
}
END_TEST

START_TEST(cli_list_keys_accumulate)
{
	tp_cli("python-import=b");
	ck_assert_int_eq(tp_load("python-import=a\n"), 0);
	ck_assert(sb_policy_import_allowed(tp.p, "a"));
	ck_assert(sb_policy_import_allowed(tp.p, "b.c"));
}
END_TEST

START_TEST(load_bad_args)
{
	struct sb_policy *p = (void *)1;

	tp.opts.config_path = NULL;
	ck_assert_int_eq(sb_policy_load(&tp.opts, &p, &tp.diag), -EINVAL);
	ck_assert_ptr_null(p);
}
END_TEST

START_TEST(config_is_directory)
{
	tp_mkdir(".py-sandboxes");
	ck_assert_int_eq(tp_load(NULL), -EINVAL);
	char diag[8300];

	snprintf(diag, sizeof(diag), ".py-sandboxes(0): Cannot read the rule file '%s': Is a directory.",
		 tp_path(".py-sandboxes"));
	ck_assert_diag(SB_DIAG_ERROR, diag);
}
END_TEST

TCase *tcase_lex(void)
{
	TCase *tc = tcase_create("lex");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, lex_port, 0, sizeof(lex_port_cases) / sizeof(lex_port_cases[0]));
	tcase_add_loop_test(tc, lex_quotes, 0, sizeof(lex_quote_cases) / sizeof(lex_quote_cases[0]));
	tcase_add_loop_test(tc, lex_errors, 0, sizeof(lex_error_cases) / sizeof(lex_error_cases[0]));
	tcase_add_test(tc, lex_errors_aggregated);
	tcase_add_loop_test(tc, subst_ok, 0, sizeof(subst_cases) / sizeof(subst_cases[0]));
	tcase_add_loop_test(tc, subst_invalid, 0, sizeof(subst_bad) / sizeof(subst_bad[0]));
	tcase_add_test(tc, subst_no_reexpansion);
	tcase_add_test(tc, subst_dollar_literal);
	tcase_add_test(tc, include_cwd_relative);
	tcase_add_test(tc, include_keeps_location);
	tcase_add_test(tc, include_bare_next_to_file);
	tcase_add_test(tc, include_nested_bare_next_to_included);
	tcase_add_test(tc, include_home);
	tcase_add_test(tc, include_absolute_and_parent);
	tcase_add_test(tc, include_missing_ignored);
	tcase_add_test(tc, include_loop);
	tcase_add_test(tc, include_unreadable);
	tcase_add_test(tc, include_unreadable_perm);
	tcase_add_test(tc, include_optional);
	tcase_add_test(tc, load_bad_args);
	tcase_add_test(tc, config_is_directory);
	return tc;
}

TCase *tcase_lock(void)
{
	TCase *tc = tcase_create("lock");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_test(tc, missing_config_uses_template);
	tcase_add_test(tc, template_enforced_os_sandbox);
	tcase_add_loop_test(tc, learn_targets, 0, sizeof(learn_cases) / sizeof(learn_cases[0]));
	tcase_add_test(tc, lock_alone);
	tcase_add_test(tc, lock_cli_learn);
	tcase_add_test(tc, lock_cli_learn_file);
	tcase_add_test(tc, lock_learn_line);
	tcase_add_test(tc, lock_in_include);
	tcase_add_test(tc, lock_missing_file);
	tcase_add_test(tc, lock_every_cli_rule);
	tcase_add_test(tc, cli_wins_one_file_value);
	tcase_add_test(tc, cli_port_wins_many);
	tcase_add_test(tc, cli_does_not_win_two_file_values);
	tcase_add_test(tc, multiple_file_values);
	tcase_add_test(tc, cli_rule_origin);
	tcase_add_test(tc, cli_list_keys_accumulate);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("policy");
	SRunner *sr;
	int failed;

	suite_add_tcase(s, tcase_lex());
	suite_add_tcase(s, tcase_lock());
	suite_add_tcase(s, tcase_keys());
	suite_add_tcase(s, tcase_env());
	suite_add_tcase(s, tcase_paths());
	suite_add_tcase(s, tcase_net());
	suite_add_tcase(s, tcase_api());
	suite_add_tcase(s, tcase_eval());
	suite_add_tcase(s, tcase_describe());
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
