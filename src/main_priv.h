/* What main.c and the other command files (main_attach.c) share: the state
 * of one python-sb invocation.  Private to the CLI. */
#ifndef SB_MAIN_PRIV_H
#define SB_MAIN_PRIV_H

#include <limits.h>
#include <pthread.h>

#include "agent.h"
#include "cli.h"
#include "interp.h"
#include "learn.h"
#include "oslayer.h"
#include "policy.h"
#include "report.h"
#include "supervisor.h"

enum { SB_EXIT_INTERNAL = 255, SB_EXIT_USAGE = 2, SB_EXIT_VIOLATION = 3 };

/* Everything one run owns; released by run_free(). */
struct run {
	struct sb_cli cli;
	struct sb_interp interp;
	char cwd[PATH_MAX];
	char *config_path;
	struct sb_policy *policy;
	enum sb_mode mode;
	char **child_env;
	char **child_argv;
	struct sb_agent *agent;
	struct sb_oslayer *oslayer;	/* kernel layer under the supervisor (NULL: none) */
	bool layer_failed;		/* its self-test stopped the run (already said) */
	int agent_child_fd;
	struct sb_learn *learn;
	struct sb_report *report;	/* --report=FILE, or NULL */
	char *journal;			/* learning journal path */
	int log_fd;
	pthread_mutex_t event_lock;	/* the agent's thread and the supervisor's event thread */
	unsigned long denials;
	unsigned long log_lost;	/* log lines that could not be written */
};

/* Open --log=FILE into r->log_fd (no-op without it); prints its own error. */
int sb_main_open_log(struct run *r);

/* python-sb --attach PID[,PID...] (main_attach.c): returns the exit status. */
int sb_main_attach(struct run *r);

#endif
