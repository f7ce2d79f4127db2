/* Test driver for the supervisor alone (no agent, no learner): load a rule
 * file, add the runtime grants, run PYTHON ARGS... under sb_supervise and
 * exit with the program's status.
 *
 *   sup_driver [--learn|--audit] [--log[=FILE]] [--layer] [--workers=N] POLICY PYTHON [ARGS...]
 *
 * --layer adds the kernel layer the policy's os-sandbox= names (Landlock), with
 * the Landlock-backed CONTINUE of read-only opens when it enforces the files.
 *
 * --log prints every event as a JSON line on stderr (or FILE).  Not installed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "log.h"
#include "oslayer.h"
#include "policy.h"
#include "runtime.h"
#include "supervisor.h"

extern char **environ;

static void print_event(const struct sb_event *ev, void *data)
{
	char buf[16384];
	int len = sb_event_to_json(ev, buf, sizeof(buf));

	if (len > 0)
		fwrite(buf, 1, (size_t)len, data);
}

static int apply_layer(void *data)
{
	return sb_oslayer_apply_child(data);
}

/* The kernel layer the policy names (os-sandbox=), as the CLI would add it. */
static int add_layer(struct sb_run_opts *o, struct sb_policy *p, const char *python, struct sb_oslayer **l)
{
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_oslayer_new(p, python, o->mode, l, &d);
	for (size_t k = 0; k < d.n; k++)
		fprintf(stderr, "sup_driver: layer: %s\n", d.items[k].msg);
	sb_diag_free(&d);
	if (rc)
		return rc;
	o->child_setup = apply_layer;
	o->child_data = *l;
	o->kernel_enforces_fs = sb_oslayer_enforces_fs(*l);
	fprintf(stderr, "sup_driver: layer %s, kernel enforces the files: %s\n", sb_oslayer_name(*l),
		o->kernel_enforces_fs ? "yes" : "no");
	return 0;
}

int main(int argc, char **argv)
{
	struct sb_run_opts o = { .mode = SB_MODE_ENFORCE, .notice_fd = 2, .agent_fd = -1 };
	struct sb_load_opts lo = { .envp = environ, .no_dns = true };
	struct sb_policy *p = NULL;
	struct sb_oslayer *layer = NULL;
	bool want_layer = false;
	struct sb_diag d;
	char cwd[PATH_MAX];
	int i = 1, rc, wstatus = 0;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--learn") == 0)
			o.mode = SB_MODE_LEARN;
		else if (strcmp(argv[i], "--audit") == 0)
			o.mode = SB_MODE_AUDIT;
		else if (strcmp(argv[i], "--log") == 0)
			o.on_event = print_event, o.event_data = stderr;
		else if (strncmp(argv[i], "--log=", 6) == 0) {
			o.on_event = print_event;
			o.event_data = fopen(argv[i] + 6, "ae");
			if (!o.event_data)
				return 2;
		}
		else if (strcmp(argv[i], "--layer") == 0)
			want_layer = true;
		else if (strncmp(argv[i], "--workers=", 10) == 0)
			o.workers = atoi(argv[i] + 10);
		else
			break;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: sup_driver [--learn|--audit] [--log] POLICY PYTHON [ARGS...]\n");
		return 2;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return 2;
	lo.config_path = argv[i];
	lo.cwd = cwd;
	sb_diag_init(&d);
	rc = sb_policy_load(&lo, &p, &d);
	for (size_t k = 0; k < d.n; k++) {
		char *line = sb_diag_format(&d.items[k]);

		fprintf(stderr, "sup_driver: %s\n", line ? line : d.items[k].msg);
		free(line);
	}
	sb_diag_free(&d);
	if (rc) {
		fprintf(stderr, "sup_driver: cannot load %s: %s\n", argv[i], strerror(-rc));
		return 255;
	}
	rc = sb_runtime_grants(p, argv[i + 1]);
	if (rc) {
		fprintf(stderr, "sup_driver: runtime grants: %s\n", strerror(-rc));
		return 255;
	}
	if (want_layer && (rc = add_layer(&o, p, argv[i + 1], &layer)) != 0) {
		fprintf(stderr, "sup_driver: layer: %s\n", strerror(-rc));
		return 255;
	}
	o.policy = p;
	o.python = argv[i + 1];
	o.argv = argv + i + 1;
	o.envp = environ;
	rc = sb_supervise(&o, &wstatus);
	sb_oslayer_free(layer);
	sb_policy_free(p);
	if (o.event_data && o.event_data != stderr)
		fclose(o.event_data);
	if (rc) {
		fprintf(stderr, "sup_driver: %s\n", strerror(-rc));
		return 255;
	}
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	return WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : 255;
}
