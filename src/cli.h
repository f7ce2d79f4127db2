/* The python-sb command line (reference §1.2, issue 2).
 *
 * Splitting follows CPython's own getopt (Python/getopt.c): options before the
 * command part are CPython options (forwarded in order) or sandbox rules
 * (--key=value); the command part starts at -c, -m (also glued, -mjson.tool,
 * and inside a cluster, -Im mod), '-' or the first token not starting with '-'
 * (a script path); '--' ends the options.  Everything after the command part
 * is the program's, untouched.
 * Library style: returns 0 or -errno, messages go into an sb_diag.
 */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

enum sb_cmd_kind {
	SB_CMD_NONE = 0,	/* no command: interactive REPL */
	SB_CMD_CODE,		/* -c CMD */
	SB_CMD_MODULE,		/* -m MOD */
	SB_CMD_SCRIPT,		/* FILE */
	SB_CMD_STDIN,		/* - */
};

enum sb_action {
	SB_ACT_RUN = 0,		/* run the program (enforce or learn) */
	SB_ACT_HELP,		/* -h/--help/-?: print help, exit 0 */
	SB_ACT_VERSION,		/* -V/--version: print "Python X.Y.Z", exit 0 */
	SB_ACT_PY_HELP,		/* --help-env/--help-xoptions/--help-all: forwarded to python */
	SB_ACT_CHECK_CONFIG,	/* --check-config */
	SB_ACT_DIFF,		/* --diff OLD NEW */
	SB_ACT_ATTACH,		/* --attach PID */
	SB_ACT_STACK,		/* --stack PID */
};

/* The default rule file name (reference §1.3). */
#define SB_CLI_CONFIG_NAME ".py-sandboxes"

/* How long sb_cli_find_config() waits for the interpreter locating a module. */
#define SB_CLI_FIND_TIMEOUT_MS 5000

struct sb_cli {
	enum sb_action action;
	enum sb_cmd_kind cmd;
	const char *cmd_arg;		/* CMD, MOD or FILE (points into argv) */

	/* CPython options to forward, in order, one option per token: clusters
	 * are split ("-BsE" gives "-B" "-s" "-E"), an option argument is its own
	 * token ("-Werror" gives "-W" "error", "-Xdev" gives "-X" "dev"), so a
	 * caller can look for "-I" with strcmp.  -V is kept (VERSION); with
	 * PY_HELP the --help-* option is the last token.
	 * Array owned, strings borrowed (from argv or static). */
	const char **py_opts;
	size_t n_py_opts;

	/* Sandbox rules from --key[=value], as "key=value" strings (owned). */
	char **rules;
	size_t n_rules;

	/* Program arguments after the command part (borrowed from argv). */
	char **args;
	size_t n_args;

	const char *config;		/* --pysandboxes-config FILE, or NULL */
	bool learn;			/* --learn given (not with --attach) */
	/* --learn=FILE; a bare --learn becomes the --pysandboxes-config path as
	 * typed, as upstream does; NULL = the rule file sb_cli_find_config() finds. */
	const char *learn_file;

	/* Our own options (SPEC §1).  Strings borrowed from argv. */
	const char *log_file;		/* --log=FILE */
	bool audit;			/* --audit */
	bool fail_on_violation;		/* --fail-on-violation */
	const char *report_file;	/* --report=FILE */
	const char *python;		/* --python=PATH */
	const char *attach_pids;	/* --attach PID[,PID...] (checked: digits and commas) */
	const char *stack_pid;		/* --stack PID (checked: digits) */
	bool native;			/* --native (with --stack or --attach) */
	const char *diff_old, *diff_new;	/* --diff OLD NEW */
	const char *attach_learn;	/* --attach ... --learn FILE */
	const char *attach_policy;	/* --attach ... --policy FILE */
	bool attach_enforce;		/* --enforce (needs --policy) */
	double duration;		/* --duration SECONDS (attach), 0 = none */
	bool best_effort;		/* --best-effort: fall back when a layer is missing */
	int verbose;			/* -v counted only as a CPython option; --sb-verbose here */
	bool interactive_after;		/* -i seen */
	int version;			/* how many -V (-VV asks python for the long version) */
};

/* Parse argv[1..argc-1] into *cli (which it initialises).  On a usage error
 * returns -EINVAL with the lines to print in diag, in order and with an empty
 * file name: the message (upstream or CPython text, e.g. "Argument expected
 * for -m option", "Unknown option: -Z"), the usage line and the "Try" line;
 * CPython exits 2 in that case.  *cli is then empty.  -ENOMEM on memory
 * exhaustion.  -h/--help and --help-* stop the parse at once, as in CPython. */
int sb_cli_parse(int argc, char **argv, struct sb_cli *cli, struct sb_diag *diag);
void sb_cli_free(struct sb_cli *cli);

/* The argv that runs the interpreter as python-sb was asked to:
 * argv0, the forwarded options, the command part ("-c" CMD, "-m" MOD, "-",
 * or FILE, after "--" when FILE starts with '-'), then the program's args.
 * For VERSION and PY_HELP only argv0 and the options.  *out is a
 * NULL-terminated array (owned, free() it) of borrowed strings. */
int sb_cli_python_argv(const struct sb_cli *cli, const char *argv0, char ***out);

/* Find the rule file (reference §1.3): --pysandboxes-config as given; for a
 * script the .py-sandboxes next to it when it exists; for -m the one in the
 * module's directory when it exists, located by running `python` (fork/exec,
 * no shell, in `cwd`, stdin /dev/null) on a finder that imports neither the
 * module nor its parent packages (namespace packages: every portion is
 * tried); else <cwd>/.py-sandboxes.  A failing or hanging interpreter (killed
 * after SB_CLI_FIND_TIMEOUT_MS) means the cwd fallback.  `python` NULL uses
 * cli->python, else "python3" from PATH.  *out is malloc'ed; the file may not
 * exist (learning).  Returns 0, -EINVAL (NULL arguments) or -ENOMEM. */
int sb_cli_find_config(const struct sb_cli *cli, const char *python, const char *cwd, char **out);
/* The same with a chosen time-out (tests). */
int sb_cli_find_config_timeout(const struct sb_cli *cli, const char *python, const char *cwd,
			       int timeout_ms, char **out);

/* The help text (reference §1.2 plus our options). */
const char *sb_cli_help(void);

/* The usage line printed with usage errors. */
#define SB_CLI_USAGE "usage: python-sb [option] ... [-c cmd | -m mod | file | -] [arg] ..."

#endif
