/* The python-sb command line: CPython-compatible splitting; see cli.h.
 *
 * The walk mirrors CPython's _PyOS_GetOpt() so that what python-sb forwards
 * is read by the interpreter exactly as the user's line would have been:
 * short options cluster, an option taking an argument eats the rest of its
 * cluster or else the next token, -c and -m end the options, long options
 * match whole tokens.  Where CPython would report an unknown long option, a
 * "--key[=value]" token is a sandbox rule instead (reference §1.2).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct parser {
	int argc;
	char **argv;
	int i;			/* next token to read */
	struct sb_cli *cli;
	struct sb_diag *diag;
	size_t py_cap, rules_cap;
	const char *action_opt;	/* the option that chose cli->action, for conflicts */
	bool stop;		/* -h or --help-*: CPython stops reading here */
	bool done;		/* the command part was found */
};

/* Return values of the option handlers besides 0 and -errno. */
enum { PARSE_STOP = 1 };

/* ---- diagnostics ------------------------------------------------------------ */

static int usage_error(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int usage_error(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sb_diag_vadd(p->diag, SB_DIAG_ERROR, "", 0, fmt, ap);
	va_end(ap);
	if (!rc)
		rc = sb_diag_error(p->diag, "", 0, "%s", SB_CLI_USAGE);
	if (!rc)
		rc = sb_diag_error(p->diag, "", 0, "Try `python-sb -h' for more information.");
	return rc ? rc : -EINVAL;
}

/* ---- growing the owned arrays ---------------------------------------------- */

static int push_py(struct parser *p, const char *tok)
{
	struct sb_cli *c = p->cli;

	if (c->n_py_opts == p->py_cap) {
		size_t ncap = p->py_cap ? p->py_cap * 2 : 8;
		const char **n = realloc(c->py_opts, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->py_opts = n;
		p->py_cap = ncap;
	}
	c->py_opts[c->n_py_opts++] = tok;
	return 0;
}

static int push_rule(struct parser *p, const char *key, size_t klen, const char *val)
{
	struct sb_cli *c = p->cli;
	char *r;

	if (c->n_rules == p->rules_cap) {
		size_t ncap = p->rules_cap ? p->rules_cap * 2 : 8;
		char **n = realloc(c->rules, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->rules = n;
		p->rules_cap = ncap;
	}
	if (asprintf(&r, "%.*s=%s", (int)klen, key, val ? val : "") < 0)
		return -ENOMEM;
	c->rules[c->n_rules++] = r;
	return 0;
}

/* ---- short options (CPython's SHORT_OPTS) ------------------------------------ */

/* Boolean CPython flags, each forwarded as its own static token. */
static const char *flag_token(char c)
{
	static const char tokens[][3] = {
		"-b", "-B", "-d", "-E", "-i", "-I", "-O", "-P", "-q", "-R", "-s", "-S", "-u", "-v", "-x",
	};

	for (size_t k = 0; k < sizeof(tokens) / sizeof(tokens[0]); k++)
		if (tokens[k][1] == c)
			return tokens[k];
	return NULL;
}

/* The argument of a short option: the rest of the cluster, else the next token. */
static const char *short_arg(struct parser *p, const char **rest)
{
	const char *a = NULL;

	if (**rest) {
		a = *rest;
		*rest += strlen(*rest);
	} else if (p->i < p->argc) {
		a = p->argv[p->i++];
	}
	return a;
}

static int short_command(struct parser *p, char opt, const char **rest)
{
	const char *a = short_arg(p, rest);

	if (!a)		/* upstream's text, not CPython's "for the -m option" */
		return usage_error(p, "Argument expected for -%c option", opt);
	p->cli->cmd = opt == 'c' ? SB_CMD_CODE : SB_CMD_MODULE;
	p->cli->cmd_arg = a;
	p->done = true;
	return 0;
}

static int short_with_arg(struct parser *p, char opt, const char **rest)
{
	static const char *const tok[] = { "-W", "-X" };
	const char *a = short_arg(p, rest);
	int rc;

	if (!a)
		return usage_error(p, "Argument expected for the -%c option", opt);
	rc = push_py(p, tok[opt == 'X']);
	return rc ? rc : push_py(p, a);
}

static int parse_short(struct parser *p)
{
	const char *s = p->argv[p->i++] + 1;
	int rc = 0;

	while (*s && !rc && !p->done) {
		char opt = *s++;
		const char *flag = flag_token(opt);

		if (flag) {
			p->cli->interactive_after |= opt == 'i';
			rc = push_py(p, flag);
			continue;
		}
		switch (opt) {
		case 'c':
		case 'm':
			rc = short_command(p, opt, &s);
			break;
		case 'W':
		case 'X':
			rc = short_with_arg(p, opt, &s);
			break;
		case 'h':
		case '?':
			p->cli->action = SB_ACT_HELP;
			rc = PARSE_STOP;
			break;
		case 'V':
			p->cli->version++;
			rc = push_py(p, "-V");
			break;
		case 'J':
			rc = usage_error(p, "-J is reserved for Jython");
			break;
		case '-':	/* "-I-x": CPython wants a whole "--name" token */
			rc = usage_error(p, "expected long option");
			break;
		default:
			rc = usage_error(p, "Unknown option: -%c", opt);
		}
	}
	return rc;
}

/* ---- long options ------------------------------------------------------------ */

enum opt_arg {
	ARG_NONE,	/* --name */
	ARG_REQUIRED,	/* --name=V or --name V */
	ARG_ATTACHED,	/* --name or --name=V (handler decides) */
};

struct long_opt {
	const char *name;
	enum opt_arg arg;
	int (*fn)(struct parser *p, const struct long_opt *o, const char *val);
	size_t field;	/* offsetof() in struct sb_cli, for the generic handlers */
	bool cpython;	/* CPython's own: its error texts, whole-token match */
};

static int set_action(struct parser *p, enum sb_action act, const char *opt)
{
	if (p->cli->action != SB_ACT_RUN && p->cli->action != act)
		return usage_error(p, "options --%s and --%s cannot be combined", p->action_opt, opt);
	if (p->cli->action == act)
		return usage_error(p, "option --%s given twice", opt);
	p->cli->action = act;
	p->action_opt = opt;
	return 0;
}

static int opt_help(struct parser *p, const struct long_opt *o, const char *val)
{
	p->cli->action = SB_ACT_HELP;
	return PARSE_STOP;
}

static int opt_py_help(struct parser *p, const struct long_opt *o, const char *val)
{
	int rc = push_py(p, p->argv[p->i - 1]);

	p->cli->action = SB_ACT_PY_HELP;
	return rc ? rc : PARSE_STOP;
}

static int opt_version(struct parser *p, const struct long_opt *o, const char *val)
{
	p->cli->version++;
	return push_py(p, "-V");
}

static int opt_hash_pycs(struct parser *p, const struct long_opt *o, const char *val)
{
	int rc;

	if (strcmp(val, "default") && strcmp(val, "always") && strcmp(val, "never"))
		return usage_error(p, "--check-hash-based-pycs must be one of 'default', 'always', or 'never'");
	rc = push_py(p, "--check-hash-based-pycs");
	return rc ? rc : push_py(p, val);
}

static int opt_flag(struct parser *p, const struct long_opt *o, const char *val)
{
	bool *f = (bool *)((char *)p->cli + o->field);

	if (*f)
		return usage_error(p, "option --%s given twice", o->name);
	*f = true;
	return 0;
}

static int opt_string(struct parser *p, const struct long_opt *o, const char *val)
{
	const char **f = (const char **)((char *)p->cli + o->field);

	if (*f)
		return usage_error(p, "option --%s given twice", o->name);
	if (!*val)
		return usage_error(p, "option --%s needs a non-empty value", o->name);
	*f = val;
	return 0;
}

static int opt_verbose(struct parser *p, const struct long_opt *o, const char *val)
{
	p->cli->verbose++;
	return 0;
}

static int opt_check_config(struct parser *p, const struct long_opt *o, const char *val)
{
	return set_action(p, SB_ACT_CHECK_CONFIG, o->name);
}

/* A PID list: digits separated by single commas, each in 1..INT_MAX. */
static bool valid_pids(const char *s, bool list)
{
	do {
		char *end;
		unsigned long v;

		if (*s < '0' || *s > '9')
			return false;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || v == 0 || v > INT_MAX)
			return false;
		s = end;
		if (*s == ',' && list)
			s++;
		else if (*s)
			return false;
	} while (*s);
	return true;
}

static int opt_attach(struct parser *p, const struct long_opt *o, const char *val)
{
	bool list = o->field == offsetof(struct sb_cli, attach_pids);
	int rc;

	if (!valid_pids(val, list))
		return usage_error(p, "Invalid process id%s '%s' for --%s", list ? " list" : "", val, o->name);
	rc = set_action(p, list ? SB_ACT_ATTACH : SB_ACT_STACK, o->name);
	return rc ? rc : opt_string(p, o, val);
}

static int opt_diff(struct parser *p, const struct long_opt *o, const char *val)
{
	int rc;

	if (p->i >= p->argc)
		return usage_error(p, "--diff expects two rule files: --diff OLD NEW");
	rc = set_action(p, SB_ACT_DIFF, o->name);
	if (rc)
		return rc;
	p->cli->diff_old = val;
	p->cli->diff_new = p->argv[p->i++];
	return 0;
}

static int opt_duration(struct parser *p, const struct long_opt *o, const char *val)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(val, &end);
	if (errno || end == val || *end || !isfinite(d) || d <= 0)
		return usage_error(p, "Invalid duration '%s' for --duration (seconds, > 0)", val);
	if (p->cli->duration > 0)
		return usage_error(p, "option --duration given twice");
	p->cli->duration = d;
	return 0;
}

/* --learn[=FILE]; with --attach already seen, "--learn FILE" too (there is no
 * program there to mistake FILE for). */
static int opt_learn(struct parser *p, const struct long_opt *o, const char *val)
{
	struct sb_cli *c = p->cli;

	if (c->learn)
		return usage_error(p, "option --learn given twice");
	if (!val && c->action == SB_ACT_ATTACH && p->i < p->argc && p->argv[p->i][0] != '-')
		val = p->argv[p->i++];
	else if (val && !*val)	/* "--learn=" is the bare form, as learn= in a file */
		val = NULL;
	c->learn = true;
	c->learn_file = val;
	return 0;
}

#define F(field) offsetof(struct sb_cli, field)

/* Sorted by nothing in particular: looked up linearly, whole names only. */
static const struct long_opt long_opts[] = {
	/* CPython's own (Python/getopt.c longopts, plus --help/--version) */
	{ "help", ARG_NONE, opt_help, 0, true },
	{ "version", ARG_NONE, opt_version, 0, true },
	{ "help-env", ARG_NONE, opt_py_help, 0, true },
	{ "help-xoptions", ARG_NONE, opt_py_help, 0, true },
	{ "help-all", ARG_NONE, opt_py_help, 0, true },
	{ "check-hash-based-pycs", ARG_REQUIRED, opt_hash_pycs, 0, true },
	/* python-sb's */
	{ "pysandboxes-config", ARG_REQUIRED, opt_string, F(config) },
	{ "learn", ARG_ATTACHED, opt_learn, 0 },
	{ "log", ARG_REQUIRED, opt_string, F(log_file) },
	{ "report", ARG_REQUIRED, opt_string, F(report_file) },
	{ "python", ARG_REQUIRED, opt_string, F(python) },
	{ "audit", ARG_NONE, opt_flag, F(audit) },
	{ "fail-on-violation", ARG_NONE, opt_flag, F(fail_on_violation) },
	{ "best-effort", ARG_NONE, opt_flag, F(best_effort) },
	{ "check-config", ARG_NONE, opt_check_config, 0 },
	{ "diff", ARG_REQUIRED, opt_diff, 0 },
	{ "attach", ARG_REQUIRED, opt_attach, F(attach_pids) },
	{ "stack", ARG_REQUIRED, opt_attach, F(stack_pid) },
	{ "native", ARG_NONE, opt_flag, F(native) },
	{ "policy", ARG_REQUIRED, opt_string, F(attach_policy) },
	{ "enforce", ARG_NONE, opt_flag, F(attach_enforce) },
	{ "duration", ARG_REQUIRED, opt_duration, 0 },
	{ "sb-verbose", ARG_NONE, opt_verbose, 0 },
};

#undef F

static const struct long_opt *find_long(const char *name, size_t len)
{
	for (size_t k = 0; k < sizeof(long_opts) / sizeof(long_opts[0]); k++)
		if (strlen(long_opts[k].name) == len && memcmp(long_opts[k].name, name, len) == 0)
			return &long_opts[k];
	return NULL;
}

static int parse_long(struct parser *p)
{
	const char *tok = p->argv[p->i++];
	const char *name = tok + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const char *val = eq ? eq + 1 : NULL;
	const struct long_opt *o = find_long(name, len);

	if (len == 0)
		return usage_error(p, "Invalid sandbox option '%s': --<sb-option>=<value> needs a name", tok);
	if (!o)		/* everything CPython does not know is a rule */
		return push_rule(p, name, len, val);
	if (val && o->arg == ARG_NONE) {
		if (o->cpython)	/* CPython matches whole tokens */
			return usage_error(p, "unknown option %s", tok);
		return usage_error(p, "option --%s takes no value", o->name);
	}
	if (!val && o->arg == ARG_REQUIRED) {
		if (p->i >= p->argc) {
			if (o->cpython)	/* sic: CPython's wording */
				return usage_error(p, "Argument expected for the %s options", tok);
			return usage_error(p, "Argument expected for the --%s option", o->name);
		}
		val = p->argv[p->i++];
	}
	if (val && eq && o->cpython)
		return usage_error(p, "unknown option %s", tok);
	return o->fn(p, o, val);
}

/* ---- the walk ---------------------------------------------------------------- */

/* A token that is not an option starts the command part (CPython: "-" is
 * stdin, "--" ends the options and the next token is the script even when
 * it starts with '-'). */
static void command_token(struct parser *p)
{
	const char *a = p->argv[p->i];

	if (strcmp(a, "--") == 0) {
		if (++p->i >= p->argc)
			return;
		a = p->argv[p->i];
	}
	p->i++;
	p->cli->cmd = strcmp(a, "-") == 0 ? SB_CMD_STDIN : SB_CMD_SCRIPT;
	if (p->cli->cmd == SB_CMD_SCRIPT)
		p->cli->cmd_arg = a;
}

static int walk(struct parser *p)
{
	int rc = 0;

	while (!rc && !p->done && p->i < p->argc) {
		const char *a = p->argv[p->i];

		if (a[0] != '-' || a[1] == '\0' || strcmp(a, "--") == 0) {
			command_token(p);
			break;
		}
		rc = a[1] == '-' ? parse_long(p) : parse_short(p);
	}
	if (rc == PARSE_STOP) {
		p->stop = true;
		rc = 0;
	}
	return rc;
}

/* Options that only make sense together. */
static int check_combinations(struct parser *p)
{
	struct sb_cli *c = p->cli;
	bool attach = c->action == SB_ACT_ATTACH;
	bool no_program = attach || c->action == SB_ACT_STACK || c->action == SB_ACT_DIFF;

	if (no_program && (c->cmd != SB_CMD_NONE || c->n_args))
		return usage_error(p, "--%s takes no program to run", p->action_opt);
	if (!attach && c->attach_policy)
		return usage_error(p, "--policy is only valid with --attach");
	if (!attach && c->duration > 0)
		return usage_error(p, "--duration is only valid with --attach");
	if (c->attach_enforce && !c->attach_policy)
		return usage_error(p, "--enforce needs --policy FILE");
	if (c->native && !attach && c->action != SB_ACT_STACK)
		return usage_error(p, "--native is only valid with --stack or --attach");
	if (c->audit && c->learn)
		return usage_error(p, "--audit and --learn cannot be combined: audit reports what the rules refuse");
	return 0;
}

static int finish(struct parser *p)
{
	struct sb_cli *c = p->cli;

	/* Upstream rewrites a bare --learn to --learn=<--pysandboxes-config as typed>. */
	if (c->learn && !c->learn_file && c->config)
		c->learn_file = c->config;
	if (c->action == SB_ACT_ATTACH && c->learn) {
		if (!c->learn_file)
			return usage_error(p, "--attach needs a file to learn into: --learn FILE");
		c->attach_learn = c->learn_file;
		c->learn = false;
		c->learn_file = NULL;
	}
	if (c->version) {	/* CPython prints the version once the options are read */
		c->action = SB_ACT_VERSION;
		return 0;
	}
	return check_combinations(p);
}

int sb_cli_parse(int argc, char **argv, struct sb_cli *cli, struct sb_diag *diag)
{
	struct parser p = { .argc = argc, .argv = argv, .i = 1, .cli = cli, .diag = diag };
	int rc;

	memset(cli, 0, sizeof(*cli));
	if (argc < 1 || !argv || !diag)
		return -EINVAL;
	rc = walk(&p);
	if (!rc && p.stop)
		return 0;
	if (!rc)
		rc = finish(&p);
	if (rc) {
		sb_cli_free(cli);
		return rc;
	}
	cli->args = argv + p.i;
	cli->n_args = (size_t)(argc - p.i);
	return 0;
}

void sb_cli_free(struct sb_cli *cli)
{
	for (size_t k = 0; k < cli->n_rules; k++)
		free(cli->rules[k]);
	free(cli->rules);
	free(cli->py_opts);
	memset(cli, 0, sizeof(*cli));
}

/* ---- the interpreter's argv -------------------------------------------------- */

int sb_cli_python_argv(const struct sb_cli *cli, const char *argv0, char ***out)
{
	bool opts_only = cli->action == SB_ACT_VERSION || cli->action == SB_ACT_PY_HELP;
	size_t n = 0, cap = cli->n_py_opts + cli->n_args + 5;
	char **v;

	*out = NULL;
	if (!argv0)
		return -EINVAL;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[n++] = (char *)argv0;
	for (size_t k = 0; k < cli->n_py_opts; k++)
		v[n++] = (char *)cli->py_opts[k];
	if (!opts_only) {
		switch (cli->cmd) {
		case SB_CMD_CODE:
		case SB_CMD_MODULE:
			v[n++] = cli->cmd == SB_CMD_CODE ? "-c" : "-m";
			v[n++] = (char *)cli->cmd_arg;
			break;
		case SB_CMD_SCRIPT:
			/* "--" keeps a script named "-x" from reading as an option. */
			if (cli->cmd_arg[0] == '-')
				v[n++] = "--";
			v[n++] = (char *)cli->cmd_arg;
			break;
		case SB_CMD_STDIN:
			v[n++] = "-";
			break;
		case SB_CMD_NONE:
			break;
		}
		for (size_t k = 0; k < cli->n_args; k++)
			v[n++] = cli->args[k];
	}
	v[n] = NULL;
	*out = v;
	return 0;
}
