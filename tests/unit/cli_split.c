/* cli_split ARGS...: how python-sb would split "python-sb ARGS...", as JSON on
 * stdout (for tests/integration/cli-cpython-compare.py).  Exit 0 also on a
 * usage error: the JSON then carries "error" (the diagnostic lines).
 * "exec" is the interpreter's argv from sb_cli_python_argv() with argv0
 * "python3". */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static const char *const action_names[] = {
	[SB_ACT_RUN] = "run", [SB_ACT_HELP] = "help", [SB_ACT_VERSION] = "version",
	[SB_ACT_PY_HELP] = "py-help", [SB_ACT_CHECK_CONFIG] = "check-config",
	[SB_ACT_DIFF] = "diff", [SB_ACT_ATTACH] = "attach", [SB_ACT_STACK] = "stack",
};
static const char *const cmd_names[] = {
	[SB_CMD_NONE] = "none", [SB_CMD_CODE] = "code", [SB_CMD_MODULE] = "module",
	[SB_CMD_SCRIPT] = "script", [SB_CMD_STDIN] = "stdin",
};

static cJSON *strings(const char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t k = 0; a && k < n; k++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[k]));
	return a;
}

static void add_opt(cJSON *o, const char *key, const char *val)
{
	cJSON_AddItemToObject(o, key, val ? cJSON_CreateString(val) : cJSON_CreateNull());
}

static cJSON *describe(const struct sb_cli *cli)
{
	cJSON *o = cJSON_CreateObject();
	char **exec = NULL;
	size_t n = 0;

	if (sb_cli_python_argv(cli, "python3", &exec))
		return NULL;
	while (exec[n])
		n++;
	cJSON_AddStringToObject(o, "action", action_names[cli->action]);
	cJSON_AddStringToObject(o, "cmd", cmd_names[cli->cmd]);
	add_opt(o, "cmd_arg", cli->cmd_arg);
	cJSON_AddItemToObject(o, "py", strings(cli->py_opts, cli->n_py_opts));
	cJSON_AddItemToObject(o, "rules", strings((const char *const *)cli->rules, cli->n_rules));
	cJSON_AddItemToObject(o, "args", strings((const char *const *)cli->args, cli->n_args));
	cJSON_AddItemToObject(o, "exec", strings((const char *const *)exec, n));
	add_opt(o, "config", cli->config);
	cJSON_AddBoolToObject(o, "learn", cli->learn);
	add_opt(o, "learn_file", cli->learn_file);
	free(exec);
	return o;
}

int main(int argc, char **argv)
{
	struct sb_cli cli;
	struct sb_diag d;
	cJSON *o;
	char *text;
	int rc;

	argv[0] = "python-sb";
	sb_diag_init(&d);
	rc = sb_cli_parse(argc, argv, &cli, &d);
	if (rc == 0) {
		o = describe(&cli);
	} else {
		o = cJSON_CreateObject();
		cJSON *e = cJSON_AddArrayToObject(o, "error");

		for (size_t k = 0; e && k < d.n; k++)
			cJSON_AddItemToArray(e, cJSON_CreateString(d.items[k].msg));
	}
	text = o ? cJSON_PrintUnformatted(o) : NULL;
	if (!text) {
		fputs("cli_split: out of memory\n", stderr);
		return 99;
	}
	puts(text);
	free(text);
	cJSON_Delete(o);
	sb_cli_free(&cli);
	sb_diag_free(&d);
	return 0;
}
