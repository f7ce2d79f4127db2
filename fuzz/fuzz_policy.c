/* libFuzzer target: the whole policy loader on one rule file.
 *
 * The input is written to a private temporary directory as .py-sandboxes and
 * loaded there with no DNS (host names come from a small hosts file), then
 * every read-only entry point runs on the result.  A first line starting
 * with "--" is taken as a command-line rule, so CLI precedence and the
 * learn=false lock are fuzzed too. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "policy.h"

static char dir[64];
static char cfg[128];
static char hosts[128];

static char *fuzz_env[] = {
	"HOME=/nonexistent-home", "PATH=/usr/bin:/bin", "P=8080", "EMPTY=", "VIRTUAL_ENV=/usr", "TERM=xterm",
	"A_KEY=a", NULL,
};

static void init_dir(void)
{
	char tmpl[] = "/tmp/fuzz_policy.XXXXXX";
	FILE *f;

	if (!mkdtemp(tmpl))
		abort();
	snprintf(dir, sizeof(dir), "%s", tmpl);
	snprintf(cfg, sizeof(cfg), "%s/.py-sandboxes", dir);
	snprintf(hosts, sizeof(hosts), "%s/hosts", dir);
	f = fopen(hosts, "w");
	if (!f)
		abort();
	fputs("127.0.0.1 localhost\n192.0.2.1 example.com api\n2001:db8::1 v6.test\n", f);
	fclose(f);
	snprintf(tmpl, sizeof(tmpl), "%s/d", dir);
	mkdir(tmpl, 0755);
}

static void exercise(struct sb_policy *p)
{
	static const uint8_t v4[4] = { 192, 0, 2, 1 }, v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 };
	static const char *const paths[] = { "/", "/etc/passwd", "/tmp", "/usr/lib/x.so", "/a/.env/b" };
	char *s = NULL, **env = NULL;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (unsigned acc = 1; acc < 8; acc++)
			sb_policy_check_path(p, paths[i], strlen(paths[i]), acc, NULL);
	sb_policy_check_path(p, cfg, strlen(cfg), SB_ACC_WRITE, NULL);
	for (unsigned proto = 1; proto < 4; proto++)
		for (unsigned d = 1; d < 4; d++) {
			sb_policy_check_net(p, AF_INET, v4, 443, proto, d, NULL);
			sb_policy_check_net(p, AF_INET6, v6, 8080, proto, d, NULL);
			sb_policy_check_net(p, AF_INET6, mapped, 0, proto, d, NULL);
		}
	for (int c = 0; c < SB_API__COUNT; c++)
		sb_policy_api_granted(p, c);
	sb_policy_check_exec(p, "/usr/bin/env", NULL);
	sb_policy_import_allowed(p, "json.decoder");
	sb_policy_env_covers(p, "A_KEY");
	if (!sb_policy_build_env(p, fuzz_env, &env))
		sb_env_free(env);
	if (!sb_policy_agent_json(p, &s))
		free(s);
	if (!sb_policy_describe(p, &s))
		free(s);
	sb_policy_grant(p, "/usr", SB_ACC_READ, "python interpreter");
	sb_policy_check_path(p, "/usr/lib/x.so", 13, SB_ACC_READ, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_load_opts o = {
		.config_path = ".py-sandboxes", .envp = fuzz_env, .hosts_path = hosts, .no_dns = true,
		.template_path = "/nonexistent/template",
	};
	const char *cli[1];
	char *rule = NULL;
	struct sb_diag d;
	struct sb_policy *p = NULL;
	size_t skip = 0;
	FILE *f;

	if (!*dir)
		init_dir();
	o.cwd = dir;
	if (size > 2 && data[0] == '-' && data[1] == '-') {
		const uint8_t *nl = memchr(data, '\n', size);
		size_t n = nl ? (size_t)(nl - data) : size;

		rule = strndup((const char *)data + 2, n - 2);
		cli[0] = rule;
		o.cli_rules = cli;
		o.n_cli_rules = 1;
		skip = nl ? n + 1 : size;
	}
	f = fopen(cfg, "w");
	if (!f)
		abort();
	fwrite(data + skip, 1, size - skip, f);
	fclose(f);
	sb_diag_init(&d);
	if (sb_policy_load(&o, &p, &d) == 0) {
		exercise(p);
		sb_policy_free(p);
	} else if (p) {
		abort();	/* a failed load must not hand out a policy */
	}
	for (size_t i = 0; i < d.n; i++) {
		char *s = sb_diag_format(&d.items[i]);
		free(s);
	}
	sb_diag_free(&d);
	free(rule);
	return 0;
}
