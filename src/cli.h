/* The python-sb command line (reference §1.2, issue 2).
 *
 * Splitting follows CPython: options before the command part are CPython
 * options (forwarded in order) or sandbox rules (--key=value); the command part
 * starts at -c, -m, '-' or the first non-option token (a script path).
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

struct sb_cli {
	enum sb_action action;
	enum sb_cmd_kind cmd;
	const char *cmd_arg;		/* CMD, MOD or FILE (points into argv) */

	/* CPython options to forward, in order, as separate argv tokens
	 * (e.g. "-I", "-W", "error", "-X", "dev").  Array owned, strings borrowed. */
	const char **py_opts;
	size_t n_py_opts;

	/* Sandbox rules from --key[=value], as "key=value" strings (owned). */
	char **rules;
	size_t n_rules;

	/* Program arguments after the command part (borrowed from argv). */
	char **args;
	size_t n_args;

	const char *config;		/* --pysandboxes-config FILE, or NULL */
	bool learn;			/* --learn given */
	const char *learn_file;		/* --learn=FILE, or NULL for the default */

	/* Our own options (SPEC §1). */
	const char *log_file;		/* --log=FILE */
	bool audit;			/* --audit */
	bool fail_on_violation;		/* --fail-on-violation */
	const char *report_file;	/* --report=FILE */
	const char *python;		/* --python=PATH */
	const char *attach_pids;	/* --attach PID[,PID...] */
	const char *stack_pid;		/* --stack PID */
	bool native;			/* --native (with --stack) */
	const char *diff_old, *diff_new;	/* --diff OLD NEW */
	const char *attach_learn;	/* --attach ... --learn FILE */
	const char *attach_policy;	/* --attach ... --policy FILE */
	bool attach_enforce;		/* --enforce */
	double duration;		/* --duration SECONDS (attach), 0 = none */
	bool best_effort;		/* --best-effort: fall back when a layer is missing */
	int verbose;			/* -v counted only as a CPython option; --sb-verbose here */
	bool interactive_after;		/* -i seen */
};

/* Parse argv[1..argc-1].  On a usage error returns -EINVAL with a message in
 * diag (upstream texts, e.g. "Argument expected for -m option"). */
int sb_cli_parse(int argc, char **argv, struct sb_cli *cli, struct sb_diag *diag);
void sb_cli_free(struct sb_cli *cli);

/* Find the rule file (reference §1.3): --pysandboxes-config, next to the
 * script, in the module's directory (asks `python` for the spec origin without
 * importing the module), else ./.py-sandboxes.  *out is malloc'ed; the file
 * may not exist (learning). */
int sb_cli_find_config(const struct sb_cli *cli, const char *python, const char *cwd, char **out);

/* The help text (reference §1.2 plus our options). */
const char *sb_cli_help(void);

#endif
