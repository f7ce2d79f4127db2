/* Environment building, python-api/import/exec resolution, eval profiles and
 * the agent JSON, and --check-config's description of a realistic file. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <cjson/cJSON.h>

#include "check_policy.h"

/* ---- environment ------------------------------------------------------------ */

static const char *const host_env[] = {
	"HOME=/h", "USER=u", "A_KEY=ka", "B_KEY=kb", "EMPTY_KEY=", "TERM=xterm", "LANG=C", NULL,
};

static const struct {
	const char *rules;
	const char *expect;	/* sorted, ';'-joined */
} env_cases[] = {
	{ "port=1", "TERM=xterm" },
	{ "env=HOME=${HOME}", "HOME=/h;TERM=xterm" },
	{ "env=X=literal", "TERM=xterm;X=literal" },
	{ "env=X=", "TERM=xterm;X=" },
	{ "env=X=${NOPE}", "TERM=xterm" },
	{ "env=X=${EMPTY_KEY}", "TERM=xterm" },
	{ "env=X=${NOPE:-d}", "TERM=xterm;X=d" },
	{ "env=X=${NOPE:-${USER}}", "TERM=xterm;X=u" },
	{ "env=*_KEY=${*_KEY}", "A_KEY=ka;B_KEY=kb;TERM=xterm" },
	{ "env=*_KEY=fixed", "A_KEY=fixed;B_KEY=fixed;EMPTY_KEY=fixed;TERM=xterm" },
	{ "env=*_KEY=${*_KEY}\nunenv=B_*", "A_KEY=ka;TERM=xterm" },
	{ "unenv=B_*\nenv=*_KEY=${*_KEY}", "A_KEY=ka;TERM=xterm" },
	{ "env=A_KEY=exact\nenv=*_KEY=${*_KEY}", "A_KEY=exact;B_KEY=kb;TERM=xterm" },
	{ "env=*_KEY=${*_KEY}\nenv=A_KEY=exact", "A_KEY=exact;B_KEY=kb;TERM=xterm" },
	{ "unenv=*\nenv=HOME=${HOME}", "HOME=/h;TERM=xterm" },
	{ "env=HOME=${HOME}\nunenv=HOME", "TERM=xterm" },
	{ "unenv=TERM", "" },
	{ "env=*=${*}", "A_KEY=ka;B_KEY=kb;HOME=/h;LANG=C;TERM=xterm;USER=u" },
	{ "env=P=${HOME}/x:${USER}", "P=/h/x:u;TERM=xterm" },
	{ "env=V=$HOME", "TERM=xterm;V=$HOME" },
	{ "env=A=1\nenv=A=2", "A=2;TERM=xterm" },
	{ "env=*_KEY=${*_KEY}\nenv=A_KEY=${NOPE}", "B_KEY=kb;TERM=xterm" },
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *joined_env(char **env)
{
	size_t n = 0, len = 1;
	char *out;

	for (; env[n]; n++)
		len += strlen(env[n]) + 1;
	qsort(env, n, sizeof(*env), cmp_str);
	out = calloc(1, len);
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(out, ";");
		strcat(out, env[i]);
	}
	return out;
}

START_TEST(env_build)
{
	char **env = NULL, *s;

	ck_assert_int_eq(tp_load(env_cases[_i].rules), 0);
	ck_assert_int_eq(sb_policy_build_env(tp.p, (char *const *)host_env, &env), 0);
	s = joined_env(env);
	ck_assert_str_eq(s, env_cases[_i].expect);
	free(s);
	sb_env_free(env);
}
END_TEST

START_TEST(env_host_at_build_time)
{
	char **env = NULL, *s;

	tp_setenv("TOKEN=at-load");
	ck_assert_int_eq(tp_load("env=TOKEN=${TOKEN}\n"), 0);
	ck_assert_int_eq(sb_policy_build_env(tp.p, (char *const *)host_env, &env), 0);
	s = joined_env(env);
	ck_assert_str_eq(s, "TERM=xterm");	/* host_env has no TOKEN */
	free(s);
	sb_env_free(env);
	ck_assert_int_eq(sb_policy_build_env(tp.p, NULL, &env), 0);
	ck_assert_ptr_null(env[0]);
	sb_env_free(env);
}
END_TEST

START_TEST(env_covers)
{
	ck_assert_int_eq(tp_load("env=*_KEY=${*_KEY}\nunenv=SECRET\nenv=HOME=${HOME}\n"), 0);
	ck_assert(sb_policy_env_covers(tp.p, "A_KEY"));
	ck_assert(sb_policy_env_covers(tp.p, "SECRET"));
	ck_assert(sb_policy_env_covers(tp.p, "HOME"));
	ck_assert(sb_policy_env_covers(tp.p, "TERM"));
	ck_assert(!sb_policy_env_covers(tp.p, "A_KEYS"));
	ck_assert(!sb_policy_env_covers(tp.p, "PATH"));
}
END_TEST

/* ---- python-api, python-import, exec ------------------------------------------ */

static const struct {
	const char *rules;
	const char *allowed;	/* ' '-separated qualnames that must be allowed */
	const char *denied;
	unsigned granted;	/* bit per enum sb_api_category */
} api_cases[] = {
	{ "port=1", "", "os.system threading.Thread.start", 0 },
	{ "python-api=ALLOW:*", "os.system ctypes.CDLL pickle.loads", "", 0xff },
	{ "python-api=ALLOW:*\npython-api=DENY:process-exec", "threading.Thread.start", "os.system subprocess.Popen",
	  0xff & ~(1u << SB_API_PROCESS_EXEC) },
	{ "python-api=DENY:process-exec\npython-api=ALLOW:os.system", "os.system", "os.popen",
	  1u << SB_API_PROCESS_EXEC },
	{ "python-api=ALLOW:os.system\npython-api=DENY:process-exec", "os.system", "os.popen",
	  1u << SB_API_PROCESS_EXEC },
	{ "python-api=ALLOW:threads\npython-api=DENY:threads", "", "threading.Thread.start", 0 },
	{ "python-api=ALLOW:os.system\npython-api=DENY:os.system", "", "os.system", 0 },
	{ "python-api=DENY:*\npython-api=ALLOW:*", "", "os.system gc.get_objects", 0 },
	{ "python-api=ALLOW:native, threads", "ctypes.cast _thread.start_new_thread", "os.fork",
	  (1u << SB_API_NATIVE) | (1u << SB_API_THREADS) },
	{ "python-api=DENY:os.system", "", "os.system", 0 },
	{ "python-api=ALLOW:privileges\npython-api=DENY:os.umask", "os.setuid", "os.umask", 1u << SB_API_PRIVILEGES },
	{ "python-api=ALLOW:signal.alarm", "signal.alarm", "os.kill", 1u << SB_API_PROCESS_CONTROL },
	{ "python-api=ALLOW:introspection,dynamic-code,deserialization", "sys._getframe builtins.eval pickle.load", "",
	  (1u << SB_API_INTROSPECTION) | (1u << SB_API_DYNAMIC_CODE) | (1u << SB_API_DESERIALIZATION) },
};

static void check_names(const char *list, bool expect)
{
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		ck_assert_msg(sb_policy_api_allowed(tp.p, t, NULL) == expect, "%s should be %s", t,
			      expect ? "allowed" : "denied");
}

START_TEST(api_resolution)
{
	ck_assert_int_eq(tp_load(api_cases[_i].rules), 0);
	check_names(api_cases[_i].allowed, true);
	check_names(api_cases[_i].denied, false);
	for (int c = 0; c < SB_API__COUNT; c++)
		ck_assert_msg(sb_policy_api_granted(tp.p, c) == !!(api_cases[_i].granted & (1u << c)), "category %d", c);
	ck_assert(!sb_policy_api_granted(tp.p, SB_API__COUNT));
	ck_assert(!sb_policy_api_allowed(tp.p, "os.nothing", NULL));
}
END_TEST

START_TEST(api_hit_refs)
{
	const struct sb_rule_ref *hit;

	ck_assert_int_eq(tp_load("python-api=DENY:process-exec\npython-api=ALLOW:os.system\npython-api=ALLOW:*\n"), 0);
	ck_assert(sb_policy_api_allowed(tp.p, "os.system", &hit));
	ck_assert_uint_eq(hit->line, 2);
	ck_assert(!sb_policy_api_allowed(tp.p, "os.popen", &hit));
	ck_assert_uint_eq(hit->line, 1);
	ck_assert(sb_policy_api_allowed(tp.p, "gc.get_objects", &hit));
	ck_assert_uint_eq(hit->line, 3);
}
END_TEST

START_TEST(import_rules)
{
	ck_assert_int_eq(tp_load("python-import=json, requests\n"), 0);
	ck_assert(sb_policy_import_allowed(tp.p, "json"));
	ck_assert(sb_policy_import_allowed(tp.p, "json.decoder"));
	ck_assert(sb_policy_import_allowed(tp.p, "requests"));
	ck_assert(sb_policy_import_allowed(tp.p, "pysandboxes.remote"));
	ck_assert(!sb_policy_import_allowed(tp.p, "jsonx"));
	ck_assert(!sb_policy_import_allowed(tp.p, "os"));
	ck_assert_int_eq(tp_load("python-import=\n"), 0);
	ck_assert(!sb_policy_import_allowed(tp.p, "json"));
	ck_assert_int_eq(tp_load("python-import=a\npython-import=*\n"), 0);
	ck_assert(sb_policy_import_allowed(tp.p, "anything.at.all"));
}
END_TEST

START_TEST(exec_rules)
{
	const struct sb_rule_ref *hit;
	char *sh = realpath("/bin/sh", NULL);

	ck_assert_ptr_nonnull(sh);
	ck_assert_int_eq(tp_load("exec=/bin/sh\n"), 0);
	ck_assert(!sb_policy_check_exec(tp.p, sh, NULL));	/* no process-exec grant */
	ck_assert_int_eq(tp_load("python-api=ALLOW:process-exec\n"), 0);
	ck_assert(sb_policy_check_exec(tp.p, "/usr/bin/env", &hit));
	ck_assert_ptr_null(hit);
	ck_assert_int_eq(tp_load("python-api=ALLOW:os.fork\nexec=/bin/sh\n"), 0);
	ck_assert(sb_policy_check_exec(tp.p, sh, &hit));
	ck_assert_uint_eq(hit->line, 2);
	ck_assert(!sb_policy_check_exec(tp.p, "/usr/bin/env", NULL));
	ck_assert_int_eq(tp_load("python-api=ALLOW:process-exec\nexec=/usr/bin/*\n"), 0);
	ck_assert(sb_policy_check_exec(tp.p, "/usr/bin/env", &hit));
	ck_assert_uint_eq(hit->line, 2);
	ck_assert(!sb_policy_check_exec(tp.p, "/bin2/env", NULL));
	free(sh);
}
END_TEST

/* ---- eval and the agent JSON ------------------------------------------------- */

static cJSON *agent_json(void)
{
	char *s = NULL;
	cJSON *j;

	ck_assert_int_eq(sb_policy_agent_json(tp.p, &s), 0);
	j = cJSON_Parse(s);
	ck_assert_ptr_nonnull(j);
	free(s);
	return j;
}

static const struct {
	const char *rules;
	const char *profile;
	const char *field;
	double value;
} eval_scalar_cases[] = {
	{ "eval-syntax=arith", "", "timeout_ms", 5000 },
	{ "eval-timeout=2s", "", "timeout_ms", 2000 },
	{ "eval-timeout=250ms", "", "timeout_ms", 250 },
	{ "eval-timeout=1.5", "", "timeout_ms", 1500 },
	{ "eval-timeout=2m", "", "timeout_ms", 120000 },
	{ "eval-timeout=1_000ms", "", "timeout_ms", 1000 },
	{ "eval-max-iterations=100_000", "", "max_iterations", 100000 },
	{ "eval-max-alloc=10MB", "", "max_alloc", 10000000 },
	{ "eval-max-alloc=1.5kb", "", "max_alloc", 1500 },
	{ "eval-max-alloc=2GB", "", "max_alloc", 2e9 },
	{ "eval-max-alloc=123", "", "max_alloc", 123 },
	{ "eval-max-call-depth:calc=5", "calc", "max_call_depth", 5 },
	{ "eval-max-call-depth:calc=5", "calc", "max_depth", 20 },
	{ "eval-max-depth=7\neval-max-depth:x=8", "", "max_depth", 7 },
	{ "eval-max-depth=7\neval-max-depth:x=8", "x", "max_depth", 8 },
	{ "eval-max-nodes=+10", "", "max_nodes", 10 },
	{ "eval-max-leaked-threads=0", "", "max_leaked_threads", 0 },
};

START_TEST(eval_scalars)
{
	cJSON *j, *prof, *v;

	ck_assert_int_eq(tp_load(eval_scalar_cases[_i].rules), 0);
	j = agent_json();
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "eval"), "present")));
	prof = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "eval"), "profiles"),
				   eval_scalar_cases[_i].profile);
	ck_assert_ptr_nonnull(prof);
	v = cJSON_GetObjectItem(prof, eval_scalar_cases[_i].field);
	ck_assert_ptr_nonnull(v);
	ck_assert_double_eq(v->valuedouble, eval_scalar_cases[_i].value);
	cJSON_Delete(j);
}
END_TEST

START_TEST(agent_json_schema)
{
	cJSON *j, *api, *e, *prof, *arr;
	int n_api = 0;

	ck_assert_int_eq(tp_load("python-import=json, re\npython-api=ALLOW:os.system\npython-api=ALLOW:threads\n"
				 "eval-syntax=arith\neval-syntax=DENY:loop\neval-namespace=closed\nenv=HOME=${HOME}\n"),
			 0);
	j = agent_json();
	ck_assert_int_eq(cJSON_GetObjectItem(j, "version")->valueint, 1);
	ck_assert_str_eq(cJSON_GetObjectItem(j, "config")->valuestring, tp_path(".py-sandboxes"));
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "py_sandbox")));
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(j, "learn")));
	e = cJSON_GetObjectItem(j, "import");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "all")));
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e, "names")), 2);
	ck_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "names"), 1)->valuestring, "re");
	api = cJSON_GetObjectItem(j, "api");
	for (cJSON *it = api->child; it; it = it->next)
		n_api++;
	ck_assert_int_ge(n_api, 140);
	e = cJSON_GetObjectItem(api, "os.system");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(e, "allow")));
	ck_assert_str_eq(cJSON_GetObjectItem(e, "category")->valuestring, "process-exec");
	ck_assert_str_eq(cJSON_GetObjectItem(e, "rule")->valuestring, ".py-sandboxes(2)");
	e = cJSON_GetObjectItem(api, "os.popen");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "allow")));
	ck_assert(cJSON_IsNull(cJSON_GetObjectItem(e, "rule")));
	e = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "categories"), "process-exec");
	ck_assert_str_eq(cJSON_GetObjectItem(e, "help")->valuestring, "runs code outside the patched interpreter");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(e, "warned")));
	e = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "categories"), "threads");
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "warned")));
	prof = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "eval"), "profiles"), "");
	arr = cJSON_GetObjectItem(prof, "syntax");
	ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
	ck_assert_str_eq(cJSON_GetArrayItem(arr, 0)->valuestring, "arith");
	ck_assert_str_eq(cJSON_GetArrayItem(arr, 1)->valuestring, "DENY:loop");
	ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(prof, "call")), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(prof, "namespace")->valuestring, "closed");
	arr = cJSON_GetObjectItem(j, "env_set_by_policy");
	ck_assert_int_eq(cJSON_GetArraySize(arr), 1);	/* HOME; TERM is unset in the test env */
	ck_assert_str_eq(cJSON_GetArrayItem(arr, 0)->valuestring, "HOME");
	cJSON_Delete(j);
}
END_TEST

START_TEST(agent_json_no_eval)
{
	cJSON *j;

	ck_assert_int_eq(tp_load("python-import=*\n"), 0);
	j = agent_json();
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "eval"), "present")));
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "import"), "all")));
	ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "eval"), "profiles")->child);
	cJSON_Delete(j);
}
END_TEST

/* The agent keeps the listing of module directories the program cannot write
 * (python/pysandboxes/_importstat.py): it needs every write exposure,
 * explicit or implicit, and no read-only one. */
START_TEST(agent_json_writable)
{
	char rules[1024];
	cJSON *j, *w, *e;
	bool out = false, dev_null = false;

	tp_mkdir("data");
	tp_mkdir("out");
	snprintf(rules, sizeof(rules), "expose-ro=%s\nexpose-rw=%s\n", tp_path("data"), tp_path("out"));
	ck_assert_int_eq(tp_load(rules), 0);
	ck_assert_int_eq(sb_policy_grant(tp.p, "/dev/null", SB_ACC_READ | SB_ACC_WRITE, "test"), 0);
	ck_assert_int_eq(sb_policy_grant(tp.p, "/usr/lib", SB_ACC_READ, "test"), 0);
	j = agent_json();
	w = cJSON_GetObjectItem(j, "writable");
	ck_assert(cJSON_IsArray(w));
	cJSON_ArrayForEach(e, w) {
		ck_assert(cJSON_IsString(e));
		ck_assert_str_ne(e->valuestring, tp_path("data"));
		ck_assert_str_ne(e->valuestring, "/usr/lib");
		out |= !strcmp(e->valuestring, tp_path("out"));
		dev_null |= !strcmp(e->valuestring, "/dev/null");
	}
	ck_assert(out && dev_null);
	cJSON_Delete(j);
}
END_TEST

/* The attribution's part of the document: the same "import" and "eval" as
 * the agent's, nothing else. */
START_TEST(attr_json_is_agent_subset)
{
	char *s = NULL;
	cJSON *full, *part;

	ck_assert_int_eq(tp_load("python-import=json,os\neval-syntax=arith\neval-call:calc=len\n"), 0);
	full = agent_json();
	ck_assert_int_eq(sb_policy_attr_json(tp.p, &s), 0);
	part = cJSON_Parse(s);
	free(s);
	ck_assert_ptr_nonnull(part);
	ck_assert_int_eq(cJSON_GetArraySize(part), 2);
	ck_assert(cJSON_Compare(cJSON_GetObjectItem(part, "import"), cJSON_GetObjectItem(full, "import"), true));
	ck_assert(cJSON_Compare(cJSON_GetObjectItem(part, "eval"), cJSON_GetObjectItem(full, "eval"), true));
	cJSON_Delete(part);
	cJSON_Delete(full);
}
END_TEST

/* ---- describe on the realistic learned file of reference §2.10 ---------------- */

static void load_realistic(void)
{
	char src[PATH_MAX], cmd[2 * PATH_MAX + 64], env[PATH_MAX + 32];

	snprintf(src, sizeof(src), "%s/tests/unit/policy-data/realistic.py-sandboxes", SB_TEST_SRCDIR);
	tp_mkdir("proj/app");
	tp_mkdir("proj/data");
	tp_mkdir("venv/share/data");
	tp_mkdir("tmpdir/myapp");
	tp_write("home/.config/py-sandboxes/user-py-sandboxes.profile", "net=DENY|*|10.0.0.0/8|*|OUT\n");
	tp_write("hosts", "192.0.2.80 example.com\n");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, tp_path("proj/.py-sandboxes"));
	ck_assert_int_eq(system(cmd), 0);
	tp_setenv("DEMO_API_KEY=k-123");
	snprintf(env, sizeof(env), "VIRTUAL_ENV=%s", tp_path("venv"));
	tp_setenv(env);
	snprintf(env, sizeof(env), "TMPDIR=%s", tp_path("tmpdir"));
	tp_setenv(env);
	tp_setenv("PORT=8000");
	tp.opts.hosts_path = tp_path("hosts");
	tp.opts.cwd = tp_path("proj");
	tp.opts.config_path = tp_path("proj/.py-sandboxes");
	tp_load(NULL);
	ck_assert_loaded();
}

START_TEST(describe_realistic)
{
	char *text = NULL, line[PATH_MAX + 128];
	const char *const fixed[] = {
		"  os-sandbox=subprocess\n",
		"  py-sandbox=true\n",
		"  learn: off\n",
		"  remote-result-mode=data-only\n",
		"  .py-sandboxes(8): env=DEMO_API_KEY=${DEMO_API_KEY}\n",
		"  .py-sandboxes(25): net=ALLOW|TCP|*|8000|IN\n",
		"  ~/.config/py-sandboxes/user-py-sandboxes.profile(1): net=DENY|*|10.0.0.0/8|*|OUT\n",
		"  DENY  tcp,udp 10.0.0.0/8 ports 0-65535 OUT  <- ~/.config/py-sandboxes/user-py-sandboxes.profile(1)\n",
		"  ALLOW tcp 192.0.2.80/32 (example.com) ports 443 OUT  <- .py-sandboxes(24)\n",
		"  ALLOW tcp 0.0.0.0/0 ports 8000 IN  <- .py-sandboxes(25)\n",
		"  ALLOW tcp ::/0 ports 8000 IN  <- .py-sandboxes(25)\n",
		"  example.com (hosts file): 192.0.2.80\n",
		"  ignore .env (any path component)  <- .py-sandboxes(13)\n",
		"  threads: 13/13 (its system calls are open)\n",
		"  ⚠ process-exec: 1/53 (its system calls are open)\n",
		"  ⚠ native: 0/4\n",
		"  <implicit> env=TERM=${TERM}\n",
		"    eval-syntax=arith, compare, Lambda\n",
		"    eval-attribute=join, split\n",
	};

	load_realistic();
	ck_assert_int_eq(sb_policy_describe(tp.p, &text), 0);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		ck_assert_msg(strstr(text, fixed[i]), "missing <%s> in:\n%s", fixed[i], text);
	snprintf(line, sizeof(line), "  ro %s  <- .py-sandboxes(16)\n", tp_path("proj/app"));
	ck_assert_msg(strstr(text, line), "missing <%s>", line);
	snprintf(line, sizeof(line), "  rw %s  <- .py-sandboxes(18)\n", tp_path("tmpdir/myapp"));
	ck_assert_msg(strstr(text, line), "missing <%s>", line);
	snprintf(line, sizeof(line), "  ro %s  <- .py-sandboxes(19)\n", tp_path("venv/share/data"));
	ck_assert_msg(strstr(text, line), "missing <%s>", line);
	snprintf(line, sizeof(line), "  .py-sandboxes(18): expose-rw=%s/myapp\n", tp_path("tmpdir"));
	ck_assert_msg(strstr(text, line), "missing <%s>", line);
	snprintf(line, sizeof(line), "Rule file: %s\n", tp_path("proj/.py-sandboxes"));
	ck_assert_msg(strstr(text, line), "missing <%s>", line);
	free(text);
}
END_TEST

START_TEST(realistic_decisions)
{
	char **env = NULL, *s;
	const char *const *files;
	const char *f, *env_file;
	uint8_t ex[4] = { 192, 0, 2, 80 }, ten[4] = { 10, 0, 0, 1 };

	load_realistic();
	f = tp_path("proj/data/x.csv");
	env_file = tp_path("proj/app/.env");
	ck_assert_int_eq(sb_policy_check_path(tp.p, f, strlen(f), SB_ACC_READ, NULL), SB_PATH_ALLOW);
	ck_assert_int_eq(sb_policy_check_path(tp.p, f, strlen(f), SB_ACC_WRITE, NULL), SB_PATH_READ_ONLY);
	ck_assert_int_eq(sb_policy_check_path(tp.p, env_file, strlen(env_file), SB_ACC_READ, NULL), SB_PATH_IGNORED);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_INET, ex, 443, SB_PROTO_TCP, SB_DIR_OUT, NULL), SB_NET_ALLOW);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_INET, ten, 8000, SB_PROTO_TCP, SB_DIR_OUT, NULL),
			 SB_NET_DENY_RULE);
	ck_assert_int_eq(sb_policy_check_net(tp.p, AF_INET, ten, 8000, SB_PROTO_TCP, SB_DIR_IN, NULL), SB_NET_ALLOW);
	ck_assert(sb_policy_import_allowed(tp.p, "httpx"));
	ck_assert(!sb_policy_import_allowed(tp.p, "requests"));
	ck_assert(sb_policy_api_allowed(tp.p, "os.system", NULL));
	ck_assert(!sb_policy_api_allowed(tp.p, "subprocess.run", NULL));
	ck_assert_uint_eq(sb_policy_files(tp.p, &files), 2);
	ck_assert_int_eq(sb_policy_build_env(tp.p, tp.env, &env), 0);
	s = joined_env(env);
	ck_assert_msg(strstr(s, "DEMO_API_KEY=k-123;HOME="), "%s", s);
	ck_assert_msg(strstr(s, ";VIRTUAL_ENV="), "%s", s);
	ck_assert_msg(!strstr(s, "PORT="), "%s", s);
	free(s);
	sb_env_free(env);
}
END_TEST

START_TEST(describe_template)
{
	char *text = NULL;

	ck_assert_int_eq(tp_load(NULL), 0);
	ck_assert_int_eq(sb_policy_describe(tp.p, &text), 0);
	ck_assert_ptr_nonnull(strstr(text, "(missing: the template is the base and learning is on)"));
	ck_assert_ptr_nonnull(strstr(text, "  os-sandbox=subprocess (forced while learning)\n"));
	ck_assert_ptr_nonnull(strstr(text, "Template: "));
	free(text);
}
END_TEST

TCase *tcase_env(void)
{
	TCase *tc = tcase_create("env");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, env_build, 0, sizeof(env_cases) / sizeof(env_cases[0]));
	tcase_add_test(tc, env_host_at_build_time);
	tcase_add_test(tc, env_covers);
	return tc;
}

TCase *tcase_api(void)
{
	TCase *tc = tcase_create("api");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, api_resolution, 0, sizeof(api_cases) / sizeof(api_cases[0]));
	tcase_add_test(tc, api_hit_refs);
	tcase_add_test(tc, import_rules);
	tcase_add_test(tc, exec_rules);
	return tc;
}

TCase *tcase_eval(void)
{
	TCase *tc = tcase_create("eval");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, eval_scalars, 0, sizeof(eval_scalar_cases) / sizeof(eval_scalar_cases[0]));
	tcase_add_test(tc, agent_json_schema);
	tcase_add_test(tc, agent_json_no_eval);
	tcase_add_test(tc, agent_json_writable);
	tcase_add_test(tc, attr_json_is_agent_subset);
	return tc;
}

TCase *tcase_describe(void)
{
	TCase *tc = tcase_create("describe");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_test(tc, describe_realistic);
	tcase_add_test(tc, realistic_decisions);
	tcase_add_test(tc, describe_template);
	return tc;
}
