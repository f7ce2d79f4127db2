/* Unit tests for the python-sb command line (src/cli.c, src/cli_config.c).
 *
 * The splitting cases are data: tests/unit/cli-cases.txt, one block per case,
 * each run as one iteration of a loop test.  Every field of struct sb_cli is
 * compared, a field the case does not name against its default, so a stray
 * side effect of an option fails too.  Config discovery runs the real
 * interpreter on scratch trees.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef CLI_CASES
#define CLI_CASES "tests/unit/cli-cases.txt"
#endif

/* ---- the case table ---------------------------------------------------------- */

struct field {
	char *name;
	char **tok;	/* NULL-terminated */
	size_t n;
};

struct cli_case {
	char *name;
	unsigned line;
	struct field *fields;
	size_t n_fields;
};

static struct cli_case *cases;
static size_t n_cases;

/* Split like Python's shlex.split(posix=True), which the integration test uses
 * on the same file: whitespace separates, '...' is literal, "..." honours \"
 * and \\, a backslash outside quotes escapes any character. */
static void table_error(const char *what)
{
	fprintf(stderr, "%s: %s\n", CLI_CASES, what);
	exit(99);
}

static char **split_shell(const char *s, size_t *n_out)
{
	size_t len = strlen(s), n = 0;
	char **v = calloc(len + 2, sizeof(*v));
	char *buf = malloc(len + 1);

	if (!v || !buf)
		table_error("out of memory");
	for (;;) {
		size_t b = 0;
		bool tok = false;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		while (*s && *s != ' ' && *s != '\t') {
			tok = true;
			if (*s == '\'') {
				for (s++; *s && *s != '\''; s++)
					buf[b++] = *s;
				if (!*s)
					table_error("unterminated quote");
				s++;
			} else if (*s == '"') {
				for (s++; *s && *s != '"'; s++) {
					if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
						s++;
					buf[b++] = *s;
				}
				if (!*s)
					table_error("unterminated quote");
				s++;
			} else {
				if (*s == '\\' && s[1])
					s++;
				buf[b++] = *s++;
			}
		}
		if (tok) {
			buf[b] = '\0';
			v[n++] = strdup(buf);
		}
	}
	free(buf);
	v[n] = NULL;
	*n_out = n;
	return v;
}

static void add_field(struct cli_case *c, const char *line, unsigned lineno)
{
	const char *eq = strchr(line, '=');
	size_t nl;
	struct field *f;

	if (!eq) {
		fprintf(stderr, "%s(%u): expected 'field = value'\n", CLI_CASES, lineno);
		exit(99);
	}
	nl = (size_t)(eq - line);
	while (nl && (line[nl - 1] == ' ' || line[nl - 1] == '\t'))
		nl--;
	c->fields = realloc(c->fields, (c->n_fields + 1) * sizeof(*c->fields));
	f = &c->fields[c->n_fields++];
	f->name = strndup(line, nl);
	f->tok = split_shell(eq + 1, &f->n);
}

static void load_cases(void)
{
	FILE *fp = fopen(CLI_CASES, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	struct cli_case *cur = NULL;

	if (!fp) {
		perror(CLI_CASES);
		exit(99);
	}
	while (getline(&line, &cap, fp) >= 0) {
		line[strcspn(line, "\r\n")] = '\0';
		lineno++;
		if (line[0] == '#')
			continue;
		if (line[0] == '\0') {
			cur = NULL;
			continue;
		}
		if (line[0] == '[') {
			cases = realloc(cases, (n_cases + 1) * sizeof(*cases));
			cur = &cases[n_cases++];
			memset(cur, 0, sizeof(*cur));
			cur->name = strndup(line + 1, strcspn(line + 1, "]"));
			cur->line = lineno;
			continue;
		}
		if (!cur) {
			fprintf(stderr, "%s(%u): field outside a [case]\n", CLI_CASES, lineno);
			exit(99);
		}
		add_field(cur, line, lineno);
	}
	free(line);
	fclose(fp);
}

static const struct field *field(const struct cli_case *c, const char *name)
{
	for (size_t k = 0; k < c->n_fields; k++)
		if (strcmp(c->fields[k].name, name) == 0)
			return &c->fields[k];
	return NULL;
}

/* The single token of a field, or NULL when the case does not name it. */
static const char *one(const struct cli_case *c, const char *name)
{
	const struct field *f = field(c, name);

	if (!f)
		return NULL;
	ck_assert_msg(f->n == 1, "[%s] field %s needs exactly one token", c->name, name);
	return f->tok[0];
}

/* ---- comparing --------------------------------------------------------------- */

static const char *const action_names[] = {
	[SB_ACT_RUN] = "run", [SB_ACT_HELP] = "help", [SB_ACT_VERSION] = "version",
	[SB_ACT_PY_HELP] = "py-help", [SB_ACT_CHECK_CONFIG] = "check-config",
	[SB_ACT_DIFF] = "diff", [SB_ACT_ATTACH] = "attach", [SB_ACT_STACK] = "stack",
};
static const char *const cmd_names[] = {
	[SB_CMD_NONE] = "none", [SB_CMD_CODE] = "code", [SB_CMD_MODULE] = "module",
	[SB_CMD_SCRIPT] = "script", [SB_CMD_STDIN] = "stdin",
};

static void expect_list(const struct cli_case *c, const char *name, const char *const *got, size_t n)
{
	const struct field *f = field(c, name);
	size_t want = f ? f->n : 0;

	ck_assert_msg(n == want, "[%s] %s: %zu tokens, expected %zu", c->name, name, n, want);
	for (size_t k = 0; k < n; k++)
		ck_assert_msg(strcmp(got[k], f->tok[k]) == 0, "[%s] %s[%zu]: '%s', expected '%s'",
			      c->name, name, k, got[k], f->tok[k]);
}

static void expect_str(const struct cli_case *c, const char *name, const char *got)
{
	const char *want = one(c, name);

	if (!want)
		ck_assert_msg(!got, "[%s] %s: '%s', expected NULL", c->name, name, got);
	else
		ck_assert_msg(got && strcmp(got, want) == 0, "[%s] %s: '%s', expected '%s'",
			      c->name, name, got ? got : "(null)", want);
}

static void expect_bool(const struct cli_case *c, const char *name, bool got)
{
	const char *v = one(c, name);
	bool want = v && strcmp(v, "yes") == 0;

	ck_assert_msg(!v || want || strcmp(v, "no") == 0, "[%s] %s: yes or no", c->name, name);
	ck_assert_msg(got == want, "[%s] %s: %d, expected %d", c->name, name, got, want);
}

static void expect_num(const struct cli_case *c, const char *name, double got)
{
	const char *v = one(c, name);
	double want = v ? strtod(v, NULL) : 0;

	ck_assert_msg(got == want, "[%s] %s: %g, expected %g", c->name, name, got, want);
}

static void expect_word(const struct cli_case *c, const char *name, const char *const *names,
			unsigned got, const char *dflt)
{
	const char *want = one(c, name);

	ck_assert_msg(strcmp(names[got], want ? want : dflt) == 0, "[%s] %s: %s, expected %s",
		      c->name, name, names[got], want ? want : dflt);
}

static void expect_exec(const struct cli_case *c, const struct sb_cli *cli)
{
	char **v = NULL;
	size_t n = 0;

	if (!field(c, "exec"))
		return;
	ck_assert_int_eq(sb_cli_python_argv(cli, "python3", &v), 0);
	while (v[n])
		n++;
	expect_list(c, "exec", (const char *const *)v, n);
	free(v);
}

static void expect_fields(const struct cli_case *c, const struct sb_cli *cli)
{
	expect_word(c, "action", action_names, cli->action, "run");
	expect_word(c, "cmd", cmd_names, cli->cmd, "none");
	expect_str(c, "cmd_arg", cli->cmd_arg);
	expect_list(c, "py", cli->py_opts, cli->n_py_opts);
	expect_list(c, "rules", (const char *const *)cli->rules, cli->n_rules);
	expect_list(c, "args", (const char *const *)cli->args, cli->n_args);
	expect_str(c, "config", cli->config);
	expect_bool(c, "learn", cli->learn);
	expect_str(c, "learn_file", cli->learn_file);
	expect_str(c, "log", cli->log_file);
	expect_str(c, "report", cli->report_file);
	expect_str(c, "python", cli->python);
	expect_str(c, "attach", cli->attach_pids);
	expect_str(c, "stack", cli->stack_pid);
	expect_str(c, "policy", cli->attach_policy);
	expect_str(c, "attach_learn", cli->attach_learn);
	expect_str(c, "diff_old", cli->diff_old);
	expect_str(c, "diff_new", cli->diff_new);
	expect_bool(c, "audit", cli->audit);
	expect_bool(c, "fail_on_violation", cli->fail_on_violation);
	expect_bool(c, "native", cli->native);
	expect_bool(c, "enforce", cli->attach_enforce);
	expect_bool(c, "best_effort", cli->best_effort);
	expect_bool(c, "interactive", cli->interactive_after);
	expect_num(c, "verbose", cli->verbose);
	expect_num(c, "version", cli->version ? cli->version : 0);
	expect_num(c, "duration", cli->duration);
	expect_exec(c, cli);
}

static void expect_error(const struct cli_case *c, int rc, const struct sb_cli *cli,
			 const struct sb_diag *d)
{
	const char *want = one(c, "error");
	static const struct sb_cli empty;

	ck_assert_msg(rc == -EINVAL, "[%s] rc %d, expected -EINVAL", c->name, rc);
	ck_assert_msg(d->n == 3, "[%s] %zu diagnostic lines, expected 3", c->name, d->n);
	ck_assert_msg(strcmp(d->items[0].msg, want) == 0, "[%s] error '%s', expected '%s'",
		      c->name, d->items[0].msg, want);
	ck_assert_str_eq(d->items[1].msg, SB_CLI_USAGE);
	ck_assert_str_eq(d->items[2].msg, "Try `python-sb -h' for more information.");
	for (size_t k = 0; k < d->n; k++) {
		ck_assert_str_eq(d->items[k].file, "");
		ck_assert_int_eq(d->items[k].level, SB_DIAG_ERROR);
	}
	ck_assert_msg(memcmp(cli, &empty, sizeof(empty)) == 0, "[%s] cli not emptied", c->name);
}

START_TEST(test_cli_cases)
{
	const struct cli_case *c = &cases[_i];
	const struct field *a = field(c, "argv");
	char **argv;
	struct sb_cli cli;
	struct sb_diag d;
	int rc;

	ck_assert_msg(a, "[%s] has no argv", c->name);
	/* A private copy: the parser must not need anything past argv[argc]. */
	argv = calloc(a->n + 2, sizeof(*argv));
	argv[0] = "python-sb";
	memcpy(argv + 1, a->tok, a->n * sizeof(*argv));
	sb_diag_init(&d);
	rc = sb_cli_parse((int)a->n + 1, argv, &cli, &d);
	if (field(c, "error")) {
		expect_error(c, rc, &cli, &d);
	} else {
		ck_assert_msg(rc == 0, "[%s] (line %u) rc %d: %s", c->name, c->line, rc,
			      d.n ? d.items[0].msg : "");
		ck_assert_msg(d.n == 0, "[%s] unexpected diagnostic", c->name);
		expect_fields(c, &cli);
	}
	sb_cli_free(&cli);
	sb_diag_free(&d);
	free(argv);
}
END_TEST

START_TEST(test_cli_table_size)
{
	size_t errors = 0;

	for (size_t k = 0; k < n_cases; k++)
		errors += field(&cases[k], "error") != NULL;
	ck_assert_uint_ge(n_cases - errors, 40);
	ck_assert_uint_ge(errors, 20);
}
END_TEST

/* A second parse reuses a struct sb_cli that held a result: nothing leaks
 * (ASan) and nothing survives. */
START_TEST(test_cli_reparse_and_free_twice)
{
	char *a1[] = { "python-sb", "--env=A=1", "-I", "-m", "x", NULL };
	char *a2[] = { "python-sb", "app.py", NULL };
	struct sb_cli cli;
	struct sb_diag d;

	sb_diag_init(&d);
	ck_assert_int_eq(sb_cli_parse(5, a1, &cli, &d), 0);
	ck_assert_uint_eq(cli.n_rules, 1);
	sb_cli_free(&cli);
	ck_assert_int_eq(sb_cli_parse(2, a2, &cli, &d), 0);
	ck_assert_uint_eq(cli.n_rules, 0);
	ck_assert_uint_eq(cli.n_py_opts, 0);
	ck_assert_str_eq(cli.cmd_arg, "app.py");
	sb_cli_free(&cli);
	sb_cli_free(&cli);
	ck_assert_int_eq(sb_cli_parse(0, a2, &cli, &d), -EINVAL);
	sb_diag_free(&d);
}
END_TEST

/* Many rules and options: the owned arrays grow past their first size. */
START_TEST(test_cli_many_rules)
{
	enum { N = 300 };
	char **argv = calloc(2 * N + 3, sizeof(*argv));
	struct sb_cli cli;
	struct sb_diag d;
	int n = 0;

	argv[n++] = "python-sb";
	for (int k = 0; k < N; k++) {
		ck_assert_int_ge(asprintf(&argv[n++], "--env=V%d=%d", k, k), 0);
		argv[n++] = "-B";
	}
	argv[n++] = "app.py";
	sb_diag_init(&d);
	ck_assert_int_eq(sb_cli_parse(n, argv, &cli, &d), 0);
	ck_assert_uint_eq(cli.n_rules, N);
	ck_assert_uint_eq(cli.n_py_opts, N);
	ck_assert_str_eq(cli.rules[N - 1], "env=V299=299");
	sb_cli_free(&cli);
	sb_diag_free(&d);
	for (int k = 0; k < N; k++)
		free(argv[1 + 2 * k]);
	free(argv);
}
END_TEST

START_TEST(test_cli_help_text)
{
	const char *h = sb_cli_help();
	static const char *const needles[] = {
		"Run a Python program in a SANBOX.\n",
		"  --<sb-option>=<value>  Add some Py-sandboxes parameters.\n",
		"--learn [FILE]", "-m mod", "-c cmd", "--pysandboxes-config FILE",
		"\nArguments:\nfile   : program read from script file\n",
		"arg ...: arguments passed to program in sys.argv[1:]\n",
		"--log=FILE", "--audit", "--fail-on-violation", "--report=FILE", "--attach PID",
		"--stack PID", "--native", "--python=PATH", "--check-config", "--diff OLD NEW",
		"--policy FILE", "--enforce", "--duration S", "--best-effort", "--sb-verbose",
		"--help-env", "--help-xoptions", "--help-all", "-V, --version", "-W arg", "-X opt",
		"--check-hash-based-pycs",
	};

	ck_assert(strncmp(h, "usage: python-sb ", 17) == 0);
	for (size_t k = 0; k < sizeof(needles) / sizeof(needles[0]); k++)
		ck_assert_msg(strstr(h, needles[k]), "help lacks '%s'", needles[k]);
}
END_TEST

/* ---- config discovery -------------------------------------------------------- */

static char scratch[64];

static const char *python(void)
{
	const char *p = getenv("SB_PYTHON");

	return p && *p ? p : "/usr/bin/python3";
}

static void put(const char *rel, const char *text)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", scratch, rel);
	for (char *s = strchr(path + strlen(scratch) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	fp = fopen(path, "w");
	ck_assert_msg(fp, "cannot write %s", path);
	fputs(text, fp);
	fclose(fp);
}

static bool exists(const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", scratch, rel);
	return access(path, F_OK) == 0;
}

static void scratch_setup(void)
{
	/* A fresh template each time: CK_FORK=no runs every test in one process. */
	snprintf(scratch, sizeof(scratch), "%s/check_cli-XXXXXX", "/tmp");
	ck_assert(mkdtemp(scratch));
	/* Importing either package would leave a marker: discovery must not. */
	put("lib/pkg/__init__.py", "open(__file__ + '.imported', 'w').close()\n");
	put("lib/pkg/mod.py", "");
	put("lib/pkg/.py-sandboxes", "");
	put("lib/top.py", "");
	put("lib/.py-sandboxes", "");
	put("lib/bare/__init__.py", "open(__file__ + '.imported', 'w').close()\n");
	put("lib/bare/m.py", "");
	put("ns1/nspkg/a.py", "");
	put("ns2/nspkg/b.py", "");
	put("ns2/nspkg/.py-sandboxes", "");
	put("work/tools/run.py", "");
	put("work/tools/.py-sandboxes", "");
	put("work/hang.sh", "#!/bin/sh\nexec sleep 30\n");
	put("work/fail.sh", "#!/bin/sh\nexit 3\n");
	put("work/liar.sh", "#!/bin/sh\nprintf '/nonexistent\\0/tmp'\n");
}

static void scratch_teardown(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	ck_assert_int_eq(system(cmd), 0);
}

/* Parse argv (after "python-sb") and return the discovered rule file,
 * relative to the scratch directory when inside it. */
static char *discover_t(const char *py, int timeout_ms, char **argv, int argc)
{
	char cwd[4200], *out = NULL, *rel;
	struct sb_cli cli;
	struct sb_diag d;
	size_t sl = strlen(scratch);

	snprintf(cwd, sizeof(cwd), "%s/work", scratch);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_cli_parse(argc, argv, &cli, &d), 0);
	ck_assert_int_eq(sb_cli_find_config_timeout(&cli, py, cwd, timeout_ms, &out), 0);
	sb_cli_free(&cli);
	sb_diag_free(&d);
	ck_assert(out);
	rel = strdup(strncmp(out, scratch, sl) == 0 && out[sl] == '/' ? out + sl + 1 : out);
	free(out);
	return rel;
}

#define DISCOVER(...) ({ char *_a[] = { "python-sb", __VA_ARGS__, NULL }; \
	discover_t(python(), 10000, _a, (int)(sizeof(_a) / sizeof(_a[0])) - 1); })

static void expect_discovery(char *got, const char *want)
{
	ck_assert_msg(strcmp(got, want) == 0, "rule file '%s', expected '%s'", got, want);
	free(got);
}

START_TEST(test_find_config_given)
{
	expect_discovery(DISCOVER("--pysandboxes-config", "rel/x.sb", "tools/run.py"), "rel/x.sb");
	expect_discovery(DISCOVER("--pysandboxes-config=/abs/x.sb", "-m", "pkg.mod"), "/abs/x.sb");
}
END_TEST

START_TEST(test_find_config_script)
{
	char abs[4200];

	expect_discovery(DISCOVER("tools/run.py"), "work/tools/.py-sandboxes");
	snprintf(abs, sizeof(abs), "%s/work/tools/run.py", scratch);
	expect_discovery(DISCOVER(abs, "x"), "work/tools/.py-sandboxes");
	expect_discovery(DISCOVER("run.py"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("../lib/top.py"), "work/../lib/.py-sandboxes");
	expect_discovery(DISCOVER("nodir/app.py"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("/app.py"), "work/.py-sandboxes");
}
END_TEST

START_TEST(test_find_config_other_commands)
{
	expect_discovery(DISCOVER("-c", "pass"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-I"), "work/.py-sandboxes");
}
END_TEST

/* -m: the module's directory, found without importing the module or its
 * parent packages. */
START_TEST(test_find_config_module)
{
	char pp[8500];

	snprintf(pp, sizeof(pp), "%s/lib:%s/ns1:%s/ns2", scratch, scratch, scratch);
	setenv("PYTHONPATH", pp, 1);
	expect_discovery(DISCOVER("-m", "pkg.mod", "arg"), "lib/pkg/.py-sandboxes");
	expect_discovery(DISCOVER("-mpkg"), "lib/pkg/.py-sandboxes");
	expect_discovery(DISCOVER("-m", "top"), "lib/.py-sandboxes");
	/* bare/ has no rule file: the cwd one, not the parent directory's */
	expect_discovery(DISCOVER("-m", "bare.m"), "work/.py-sandboxes");
	ck_assert_msg(!exists("lib/pkg/__init__.py.imported"), "discovery imported pkg");
	ck_assert_msg(!exists("lib/bare/__init__.py.imported"), "discovery imported bare");
	/* namespace packages: every portion is tried */
	expect_discovery(DISCOVER("-m", "nspkg.b"), "ns2/nspkg/.py-sandboxes");
	expect_discovery(DISCOVER("-m", "nspkg.a"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-m", "nspkg"), "ns2/nspkg/.py-sandboxes");
	/* not found, not a package, odd names */
	expect_discovery(DISCOVER("-m", "no_such_module_here"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-m", "top.sub"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-m", ".."), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-m", ""), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-m", "sys"), "work/.py-sandboxes");
	/* -I makes python ignore PYTHONPATH: the finder must see the same path */
	expect_discovery(DISCOVER("-I", "-m", "pkg.mod"), "work/.py-sandboxes");
	expect_discovery(DISCOVER("-E", "-m", "pkg.mod"), "work/.py-sandboxes");
	ck_assert(!exists("lib/pkg/__init__.py.imported"));
}
END_TEST

/* The module is looked up from the launching directory. */
START_TEST(test_find_config_module_in_cwd)
{
	char cwd[4200], *out = NULL;
	char *argv[] = { "python-sb", "-m", "pkg.mod", NULL };
	struct sb_cli cli;
	struct sb_diag d;

	unsetenv("PYTHONPATH");
	snprintf(cwd, sizeof(cwd), "%s/lib", scratch);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_cli_parse(3, argv, &cli, &d), 0);
	ck_assert_int_eq(sb_cli_find_config(&cli, python(), cwd, &out), 0);
	ck_assert_str_eq(out + strlen(scratch), "/lib/pkg/.py-sandboxes");
	ck_assert(!exists("lib/pkg/__init__.py.imported"));
	free(out);
	sb_cli_free(&cli);
	sb_diag_free(&d);
}
END_TEST

/* An interpreter that hangs, fails, lies or is missing: the cwd fallback. */
START_TEST(test_find_config_bad_interpreter)
{
	char hang[4200], fail[4200], liar[4200], *argv[] = { "python-sb", "-m", "pkg.mod", NULL };

	snprintf(hang, sizeof(hang), "%s/work/hang.sh", scratch);
	snprintf(fail, sizeof(fail), "%s/work/fail.sh", scratch);
	snprintf(liar, sizeof(liar), "%s/work/liar.sh", scratch);
	chmod(hang, 0755);
	chmod(fail, 0755);
	chmod(liar, 0755);
	expect_discovery(discover_t(hang, 200, argv, 3), "work/.py-sandboxes");
	expect_discovery(discover_t(fail, 10000, argv, 3), "work/.py-sandboxes");
	/* "/tmp" without its terminator is not taken */
	expect_discovery(discover_t(liar, 10000, argv, 3), "work/.py-sandboxes");
	expect_discovery(discover_t("/nonexistent/python3", 10000, argv, 3), "work/.py-sandboxes");
	expect_discovery(discover_t("no-such-python-anywhere", 10000, argv, 3), "work/.py-sandboxes");
}
END_TEST

START_TEST(test_find_config_bad_arguments)
{
	struct sb_cli cli = { 0 };
	char *out = (char *)1;

	ck_assert_int_eq(sb_cli_find_config(NULL, NULL, "/", &out), -EINVAL);
	ck_assert_int_eq(sb_cli_find_config(&cli, NULL, NULL, &out), -EINVAL);
	ck_assert_int_eq(sb_cli_find_config(&cli, NULL, "/", NULL), -EINVAL);
	ck_assert_int_eq(sb_cli_find_config(&cli, NULL, "/", &out), 0);
	ck_assert_str_eq(out, "/.py-sandboxes");
	free(out);
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("split");
	TCase *fc = tcase_create("find_config");

	tcase_add_loop_test(tc, test_cli_cases, 0, (int)n_cases);
	tcase_add_test(tc, test_cli_table_size);
	tcase_add_test(tc, test_cli_reparse_and_free_twice);
	tcase_add_test(tc, test_cli_many_rules);
	tcase_add_test(tc, test_cli_help_text);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(fc, scratch_setup, scratch_teardown);
	tcase_set_timeout(fc, 60);
	tcase_add_test(fc, test_find_config_given);
	tcase_add_test(fc, test_find_config_script);
	tcase_add_test(fc, test_find_config_other_commands);
	tcase_add_test(fc, test_find_config_module);
	tcase_add_test(fc, test_find_config_module_in_cwd);
	tcase_add_test(fc, test_find_config_bad_interpreter);
	tcase_add_test(fc, test_find_config_bad_arguments);
	suite_add_tcase(s, fc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (access(python(), X_OK) != 0) {
		fprintf(stderr, "%s: no interpreter\n", python());
		return 99;
	}
	load_cases();
	sr = srunner_create(cli_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
