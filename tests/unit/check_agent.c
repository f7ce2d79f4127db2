/* Unit tests of the agent channel (src/agent.c): which CPython options keep the
 * bootstrap from loading, the child's environment, the rules sent and the
 * messages read back, including hostile ones. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent.h"
#include "diag.h"
#include "learn.h"
#include "policy.h"

/* ---- sb_agent_loadable --------------------------------------------------- */

static const struct {
	const char *opts[4];
	bool loadable;
} loadable_cases[] = {
	{ { NULL }, true },
	{ { "-u", "-B", NULL }, true },
	{ { "-I", NULL }, false },
	{ { "-E", NULL }, false },
	{ { "-S", NULL }, false },
	{ { "-s", "-b", NULL }, true },
	{ { "-bS", NULL }, false },
	{ { "-uI", NULL }, false },
	{ { "-W", "ISE", NULL }, true },	/* argument of -W, not flags */
	{ { "-WISE", NULL }, true },
	{ { "-X", "importtime", "-E", NULL }, false },
	{ { "--check-hash-based-pycs", "always", NULL }, true },
};

START_TEST(agent_loadable_options)
{
	const char *const *o = loadable_cases[_i].opts;
	size_t n = 0;

	while (o[n])
		n++;
	ck_assert_int_eq(sb_agent_loadable(o, n), loadable_cases[_i].loadable);
}
END_TEST

/* ---- sb_agent_writes_bytecode --------------------------------------------- */

static const struct {
	const char *opts[4];
	const char *env;
	bool writes;
} bytecode_cases[] = {
	{ { NULL }, NULL, true },
	{ { "-B", NULL }, NULL, false },
	{ { "-uB", NULL }, NULL, false },
	{ { "-W", "B", NULL }, NULL, true },	/* argument of -W, not a flag */
	{ { "-X", "pycache_prefix=/tmp/pc", NULL }, NULL, false },
	{ { "-Xpycache_prefix=/tmp/pc", NULL }, NULL, false },
	{ { "-X", "importtime", NULL }, NULL, true },
	{ { "-c", "-B", NULL }, NULL, true },	/* the command, not an option */
	{ { NULL }, "PYTHONDONTWRITEBYTECODE=1", false },
	{ { NULL }, "PYTHONDONTWRITEBYTECODE=", true },	/* empty: as CPython, not set */
	{ { NULL }, "PYTHONPYCACHEPREFIX=/tmp/pc", false },
	{ { NULL }, "PYTHONDONTWRITEBYTECODEX=1", true },
};

START_TEST(agent_writes_bytecode_options)
{
	const char *const *o = bytecode_cases[_i].opts;
	char *env[] = { (char *)"HOME=/root", (char *)bytecode_cases[_i].env, NULL };
	size_t n = 0;

	while (o[n])
		n++;
	ck_assert_int_eq(sb_agent_writes_bytecode(o, n, env), bytecode_cases[_i].writes);
}
END_TEST

/* ---- sb_agent_parse_message ---------------------------------------------- */

#define MAX_EVENTS 8
struct collected {
	struct sb_event ev[MAX_EVENTS];
	int n;
};

static void collect(const struct sb_event *ev, void *data)
{
	struct collected *c = data;

	if (c->n < MAX_EVENTS)
		c->ev[c->n] = *ev;
	c->n++;
}

static const struct {
	const char *msg;
	int rc;
	enum sb_event_kind kind;
	enum sb_verdict verdict;
	const char *name;
	const char *tip;
	int category;
} parse_cases[] = {
	{ "{\"kind\":\"import\",\"name\":\"colorsys\",\"verdict\":\"denied\",\"pyloc\":\"a.py:1 in <module>()\"}", 1,
	  SB_EV_IMPORT, SB_DENIED, "colorsys", "python-import=colorsys", -1 },
	{ "{\"kind\":\"import\",\"name\":\"yaml\",\"verdict\":\"would-deny\"}", 1, SB_EV_IMPORT, SB_WOULD_DENY,
	  "yaml", "python-import=yaml", -1 },
	{ "{\"kind\":\"api\",\"name\":\"os.system\",\"category\":\"process-exec\",\"verdict\":\"denied\"}", 1,
	  SB_EV_API, SB_DENIED, "os.system", "python-api=ALLOW:os.system", SB_API_PROCESS_EXEC },
	{ "{\"kind\":\"api\",\"name\":\"pickle.loads\",\"category\":\"deserialization\"}", 1, SB_EV_API,
	  SB_ALLOWED, "pickle.loads", "python-api=ALLOW:pickle.loads", SB_API_DESERIALIZATION },
	{ "{\"kind\":\"env\",\"name\":\"HOME\",\"op\":\"read\",\"verdict\":\"would-deny\"}", 1, SB_EV_ENV,
	  SB_WOULD_DENY, "HOME", "env=HOME=${HOME}", -1 },
	{ "{\"kind\":\"env\",\"name\":\"TOKEN\",\"op\":\"write\"}", 1, SB_EV_ENV, SB_ALLOWED, "TOKEN", "", -1 },
	{ "{\"kind\":\"dns\",\"name\":\"example.com\",\"addrs\":[\"127.0.0.1\",\"::1\",\"nonsense\"]}", 2,
	  SB_EV_DNS, SB_ALLOWED, "example.com", "", -1 },
	{ "{\"kind\":\"dns\",\"name\":\"nowhere.invalid\",\"addrs\":[]}", 1, SB_EV_DNS, SB_ALLOWED,
	  "nowhere.invalid", "", -1 },
	/* Hostile or broken messages are refused, never half-applied. */
	{ "{\"kind\":\"api\",\"name\":\"os.system\",\"category\":\"root-shell\"}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"teleport\",\"name\":\"x\"}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"import\"}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"import\",\"name\":\"\"}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"import\",\"name\":7}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"import\",\"name\":\"x\",\"verdict\":\"maybe\"}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"env\",\"name\":\"X\",\"op\":\"erase\"}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"dns\",\"name\":\"x\",\"addrs\":\"1.2.3.4\"}", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "[\"import\",\"x\"]", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "{\"kind\":\"import\",\"name\":\"x\"", -EINVAL, 0, 0, NULL, NULL, 0 },
	{ "", -EINVAL, 0, 0, NULL, NULL, 0 },
};

START_TEST(agent_parse_messages)
{
	struct collected c = { .n = 0 };
	int rc = sb_agent_parse_message(parse_cases[_i].msg, strlen(parse_cases[_i].msg), collect, &c);

	ck_assert_int_eq(rc, parse_cases[_i].rc);
	if (rc < 0) {
		ck_assert_int_eq(c.n, 0);
		return;
	}
	ck_assert_int_eq(c.n, rc);
	for (int i = 0; i < c.n; i++) {
		ck_assert_int_eq(c.ev[i].kind, parse_cases[_i].kind);
		ck_assert_int_eq(c.ev[i].verdict, parse_cases[_i].verdict);
		ck_assert_str_eq(c.ev[i].name, parse_cases[_i].name);
		ck_assert_str_eq(c.ev[i].tip, parse_cases[_i].tip);
		ck_assert_int_eq(c.ev[i].category, parse_cases[_i].category);
		ck_assert_int_eq(c.ev[i].nr, -1);
	}
}
END_TEST

/* Eval reports: one event per token, in key order; a call site whose own
 * namespace was honoured is an allowed event; anything a rule line could not
 * hold safely refuses the whole message. */
START_TEST(agent_parse_eval)
{
	struct collected c = { .n = 0 };
	const char *ok = "{\"kind\":\"eval\",\"name\":\"eval:llm\",\"profile\":\"llm\",\"verdict\":\"would-deny\","
			 "\"pyloc\":\"a.py:3 in f()\",\"context_site\":\"a.py:3\","
			 "\"features\":{\"eval-call\":[\"len\"],\"eval-syntax\":[\"BinOp\",\"ListComp\"],"
			 "\"eval-import\":[\"os.path\"],\"eval-magic\":[\"__name__\"]}}";
	static const char *const bad[] = {
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-call\":[\"*\"]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-call\":[\"a\\npython-api=ALLOW:*\"]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-call\":[\"len, open\"]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-call\":[\"1x\"]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-import\":[\"os.\"]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-call\":[7]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-call\":\"len\"}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":[\"len\"]}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"profile\":\"a=b\",\"verdict\":\"would-deny\",\"features\":{\"eval-call\":[\"len\"]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"context_site\":\"\"}",
		/* a syntax word the loader refuses would make the learned file unreadable */
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"features\":{\"eval-syntax\":[\"BiincludeCall\"]}}",
	};

	ck_assert_int_eq(sb_agent_parse_message(ok, strlen(ok), collect, &c), 6);
	ck_assert_int_eq(c.n, 6);
	ck_assert_int_eq(c.ev[0].kind, SB_EV_EVAL);
	ck_assert_int_eq(c.ev[0].eval_key, SB_EVAL_SYNTAX);
	ck_assert_str_eq(c.ev[0].name, "BinOp");
	ck_assert_str_eq(c.ev[0].tip, "eval-syntax:llm=BinOp");
	ck_assert_str_eq(c.ev[0].eval_profile, "llm");
	ck_assert_int_eq(c.ev[0].verdict, SB_WOULD_DENY);
	ck_assert_str_eq(c.ev[1].name, "ListComp");
	ck_assert_int_eq(c.ev[2].eval_key, SB_EVAL_IMPORT);
	ck_assert_str_eq(c.ev[2].tip, "eval-import:llm=os.path");
	ck_assert_int_eq(c.ev[3].eval_key, SB_EVAL_CALL);
	ck_assert_int_eq(c.ev[4].eval_key, SB_EVAL_MAGIC);
	ck_assert_int_eq(c.ev[5].eval_key, SB_EVAL_CONTEXT_SITE);
	ck_assert_str_eq(c.ev[5].name, "a.py:3");
	ck_assert_int_eq(c.ev[5].verdict, SB_ALLOWED);
	ck_assert_str_eq(c.ev[5].tip, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.n = 0;
		ck_assert_msg(sb_agent_parse_message(bad[i], strlen(bad[i]), collect, &c) == -EINVAL, "%s", bad[i]);
		ck_assert_int_eq(c.n, 0);
	}
}
END_TEST

/* An evaluation stopped by a limit is reported by its reason alone: it is
 * one refusal in the log, with nothing to learn.  An eval message with
 * nothing to report is malformed (fuzz_agent_msg found one taken as zero
 * events). */
START_TEST(agent_parse_eval_refused)
{
	struct collected c = { .n = 0 };
	const char *limit = "{\"kind\":\"eval\",\"name\":\"eval:calc\",\"profile\":\"calc\",\"verdict\":\"denied\","
			    "\"pyloc\":\"a.py:9 in run()\",\"reason\":\"eval-timeout:calc=1s\\nmore\"}";
	static const char *const empty[] = {
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\"}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"denied\",\"features\":{\"eval-call\":[]}}",
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"denied\",\"reason\":\"\"}",
		/* a reason is a refusal's: learning reports constructs only */
		"{\"kind\":\"eval\",\"name\":\"eval\",\"verdict\":\"would-deny\",\"reason\":\"eval-timeout=1s\"}",
		"{\"kind\":\"eval\\u0000\",\"name\":\"A\",\"o\":\"read\",\"verdict\":\"would-deny\"}",
	};
	struct sb_learn_opts o = { .datadir = RULES_DIR };
	struct sb_learn *l = NULL;
	char *text = NULL;
	struct sb_diag d;

	ck_assert_int_eq(sb_learn_new(&o, &l), 0);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_agent_parse_message(limit, strlen(limit), collect, &c), 1);
	ck_assert_int_eq(c.ev[0].kind, SB_EV_EVAL);
	ck_assert_int_eq(c.ev[0].eval_key, SB_EVAL_REFUSED);
	ck_assert_int_eq(c.ev[0].verdict, SB_DENIED);
	ck_assert_int_eq(c.ev[0].err, EPERM);
	ck_assert_str_eq(c.ev[0].name, "eval-timeout:calc=1s?more");
	ck_assert_str_eq(c.ev[0].tip, "");
	sb_learn_record(l, &c.ev[0]);
	ck_assert_int_eq(sb_learn_lines(l, &text, &d), 0);
	ck_assert_ptr_null(strstr(text, "eval-timeout"));
	free(text);
	sb_diag_free(&d);
	sb_learn_free(l);
	for (size_t i = 0; i < sizeof(empty) / sizeof(empty[0]); i++) {
		c.n = 0;
		ck_assert_msg(sb_agent_parse_message(empty[i], strlen(empty[i]), collect, &c) == -EINVAL, "%s", empty[i]);
		ck_assert_int_eq(c.n, 0);
	}
}
END_TEST

START_TEST(agent_parse_details)
{
	struct collected c = { .n = 0 };
	const char *dns = "{\"kind\":\"dns\",\"name\":\"h\",\"addrs\":[\"127.0.0.1\",\"::1\"],\"pid\":12,\"tid\":13}";
	const char *ctl = "{\"kind\":\"import\",\"name\":\"a\\u001b[2Jb\",\"pid\":-4,\"tid\":1e12}";
	char buf[INET6_ADDRSTRLEN];

	ck_assert_int_eq(sb_agent_parse_message(dns, strlen(dns), collect, &c), 2);
	ck_assert_int_eq(c.ev[0].addr.ss_family, AF_INET);
	ck_assert_int_eq(c.ev[1].addr.ss_family, AF_INET6);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&c.ev[0].addr)->sin_addr, buf, sizeof(buf));
	ck_assert_str_eq(buf, "127.0.0.1");
	ck_assert_int_eq(c.ev[0].pid, 12);
	ck_assert_int_eq(c.ev[0].tid, 13);

	/* Control characters are neutralised; absurd ids become 0. */
	c.n = 0;
	ck_assert_int_eq(sb_agent_parse_message(ctl, strlen(ctl), collect, &c), 1);
	ck_assert_str_eq(c.ev[0].name, "a?[2Jb");
	ck_assert_int_eq(c.ev[0].pid, 0);
	ck_assert_int_eq(c.ev[0].tid, 0);
}
END_TEST

START_TEST(agent_parse_bounds)
{
	/* A name longer than the event field is cut, not overflowed. */
	size_t n = 3 * SB_EV_NAME_MAX;
	char *msg = malloc(n + 64), *p = msg;
	struct collected c = { .n = 0 };

	p += sprintf(p, "{\"kind\":\"import\",\"name\":\"");
	memset(p, 'x', n);
	p += n;
	strcpy(p, "\"}");
	ck_assert_int_eq(sb_agent_parse_message(msg, strlen(msg), collect, &c), 1);
	ck_assert_uint_eq(strlen(c.ev[0].name), SB_EV_NAME_MAX - 1);
	/* Longer than one message may be: refused before parsing. */
	ck_assert_int_eq(sb_agent_parse_message(msg, SB_AGENT_MSG_MAX + 1, collect, &c), -EINVAL);
	free(msg);
}
END_TEST

/* ---- prepare / start / finish -------------------------------------------- */

struct policy_fixture {
	char dir[64];
	struct sb_policy *p;
	char **env;
};

static void load_policy(struct policy_fixture *f, const char *text)
{
	char path[128], *envp[] = { "HOME=/nonexistent", NULL };
	struct sb_diag diag;
	FILE *fp;

	strcpy(f->dir, "/tmp/check_agent-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/.py-sandboxes", f->dir);
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);

	struct sb_load_opts o = { .config_path = path, .envp = envp, .cwd = f->dir, .no_dns = true };
	sb_diag_init(&diag);
	ck_assert_int_eq(sb_policy_load(&o, &f->p, &diag), 0);
	sb_diag_free(&diag);
	f->env = calloc(3, sizeof(char *));
	f->env[0] = strdup("PATH=/usr/bin:/bin");
	f->env[1] = strdup("PYTHONPATH=/opt/mine");
}

static void unload_policy(struct policy_fixture *f)
{
	char cmd[128];

	sb_env_free(f->env);
	sb_policy_free(f->p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *env_get(char **env, const char *key)
{
	size_t kl = strlen(key);

	for (; *env; env++)
		if (strncmp(*env, key, kl) == 0 && (*env)[kl] == '=')
			return *env + kl + 1;
	return NULL;
}

START_TEST(agent_prepare_no_py_sandbox)
{
	struct policy_fixture f;
	struct sb_agent *a = (struct sb_agent *)1;
	int fd = 7;

	load_policy(&f, "py-sandbox=false\n");
	ck_assert_int_eq(sb_agent_prepare(f.p, SB_MODE_ENFORCE, &f.env, &a, &fd), 0);
	ck_assert_ptr_null(a);
	ck_assert_int_eq(fd, -1);
	ck_assert_ptr_null(env_get(f.env, SB_AGENT_ENV_FD));
	ck_assert_str_eq(env_get(f.env, "PYTHONPATH"), "/opt/mine");
	/* A missing agent is a valid argument everywhere. */
	ck_assert_int_eq(sb_agent_start(NULL, NULL, NULL), 0);
	sb_agent_finish(NULL);
	sb_agent_free(NULL);
	unload_policy(&f);
}
END_TEST

/* Read one record from the agent's end; -1 on error. */
static ssize_t read_record(int fd, char *buf, size_t cap)
{
	ssize_t n = recv(fd, buf, cap - 1, 0);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

START_TEST(agent_round_trip)
{
	struct policy_fixture f;
	struct sb_agent *a = NULL;
	struct collected c = { .n = 0 };
	char fdbuf[16], *rules = malloc(1 << 20), *big;
	size_t got = 0;
	int child_fd, mine;

	load_policy(&f, "python-import=json\npython-api=ALLOW:os.system\n");
	ck_assert_int_eq(sb_agent_prepare(f.p, SB_MODE_LEARN, &f.env, &a, &child_fd), 0);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_ge(child_fd, 3);

	/* The environment: fd number, package dir, bootstrap first on PYTHONPATH. */
	snprintf(fdbuf, sizeof(fdbuf), "%d", child_fd);
	ck_assert_str_eq(env_get(f.env, SB_AGENT_ENV_FD), fdbuf);
	ck_assert_ptr_nonnull(env_get(f.env, SB_AGENT_ENV_PKGDIR));
	const char *pp = env_get(f.env, "PYTHONPATH");
	ck_assert_ptr_nonnull(strstr(pp, "/bootstrap:/opt/mine"));
	ck_assert_str_eq(env_get(f.env, "PATH"), "/usr/bin:/bin");

	/* The program may read the package and the bootstrap, not their neighbours. */
	char canon[PATH_MAX], path[PATH_MAX + 32];
	ck_assert_ptr_nonnull(realpath(env_get(f.env, SB_AGENT_ENV_PKGDIR), canon));
	snprintf(path, sizeof(path), "%s/pysandboxes/_agent.py", canon);
	ck_assert_int_eq(sb_policy_check_path(f.p, path, strlen(path), SB_ACC_READ, NULL), SB_PATH_ALLOW);
	ck_assert_int_ne(sb_policy_check_path(f.p, path, strlen(path), SB_ACC_WRITE, NULL), SB_PATH_ALLOW);
	snprintf(path, sizeof(path), "%s/elsewhere.py", canon);
	ck_assert_int_eq(sb_policy_check_path(f.p, path, strlen(path), SB_ACC_READ, NULL), SB_PATH_NOT_EXPOSED);
	char boot[PATH_MAX];
	snprintf(boot, sizeof(boot), "%.*s", (int)strcspn(pp, ":"), pp);
	ck_assert_ptr_nonnull(realpath(boot, canon));
	snprintf(path, sizeof(path), "%s/sitecustomize.py", canon);
	ck_assert_int_eq(sb_policy_check_path(f.p, path, strlen(path), SB_ACC_READ, NULL), SB_PATH_ALLOW);

	mine = child_fd;
	ck_assert_int_eq(sb_agent_start(a, collect, &c), 0);
	ck_assert_int_eq(sb_agent_start(a, collect, &c), -EALREADY);

	/* The rules: records up to a newline, "mode" first. */
	while (got == 0 || rules[got - 1] != '\n') {
		ssize_t n = read_record(mine, rules + got, (1 << 20) - got);
		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	ck_assert_ptr_null(memchr(rules, '\n', got - 1));
	ck_assert_int_eq(strncmp(rules, "{\"mode\":\"learn\",\"version\":1", 27), 0);
	ck_assert_ptr_nonnull(strstr(rules, "\"os.system\":{\"category\":\"process-exec\",\"allow\":true"));

	/* A refusal note reaches the agent as one record. */
	struct sb_event *ev = calloc(1, sizeof(*ev));
	ev->kind = SB_EV_PATH;
	ev->verdict = SB_DENIED;
	ev->tid = 4242;
	ev->err = ENOENT;
	strcpy(ev->path, "/secret/key");
	/* Notes wait for the reader thread to have sent the rules whole. */
	int rc;
	for (int tries = 0; (rc = sb_agent_refusal(a, ev, "Access to '/secret/key' must be accepted by a rule.")) ==
			    -EAGAIN && tries < 5000; tries++)
		usleep(1000);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(read_record(mine, rules, 4096), 0);
	ck_assert_str_eq(rules, "{\"kind\":\"refusal\",\"object\":\"path\",\"tid\":4242,\"errno\":2,"
				"\"text\":\"Access to '/secret/key' must be accepted by a rule.\",\"path\":\"/secret/key\"}");
	ev->verdict = SB_ALLOWED;
	ck_assert_int_eq(sb_agent_refusal(a, ev, "x"), -EINVAL);
	free(ev);

	/* Messages back: good ones, garbage, an oversized record, two in one. */
	const char *m1 = "{\"kind\":\"import\",\"name\":\"yaml\",\"verdict\":\"would-deny\"}\n";
	const char *m2 = "not json at all";
	const char *m3 = "{\"kind\":\"env\",\"name\":\"HOME\"}\n{\"kind\":\"api\",\"name\":\"os.fork\","
			 "\"category\":\"process-exec\"}";
	ck_assert_int_gt(send(mine, m1, strlen(m1), 0), 0);
	ck_assert_int_gt(send(mine, m2, strlen(m2), 0), 0);
	big = malloc(SB_AGENT_MSG_MAX + 10);
	memset(big, ' ', SB_AGENT_MSG_MAX + 10);
	memcpy(big, m1, strlen(m1) - 1);
	ck_assert_int_gt(send(mine, big, SB_AGENT_MSG_MAX + 10, 0), 0);
	ck_assert_int_gt(send(mine, m3, strlen(m3), 0), 0);
	close(mine);

	sb_agent_finish(a);
	sb_agent_finish(a);
	ck_assert_int_eq(c.n, 3);
	ck_assert_int_eq(c.ev[0].kind, SB_EV_IMPORT);
	ck_assert_str_eq(c.ev[0].name, "yaml");
	ck_assert_int_eq(c.ev[1].kind, SB_EV_ENV);
	ck_assert_int_eq(c.ev[2].kind, SB_EV_API);
	ck_assert_str_eq(c.ev[2].name, "os.fork");
	sb_agent_free(a);
	free(big);
	free(rules);
	unload_policy(&f);
}
END_TEST

START_TEST(agent_finish_with_stray_holder)
{
	/* A process that keeps the agent's end open must not hold up the end of
	 * the run: finish() returns although the peer never closes. */
	struct policy_fixture f;
	struct sb_agent *a = NULL;
	int child_fd, mine;

	load_policy(&f, "python-import=*\n");
	ck_assert_int_eq(sb_agent_prepare(f.p, SB_MODE_ENFORCE, &f.env, &a, &child_fd), 0);
	mine = dup(child_fd);	/* a stray process holding the agent's end */
	ck_assert_int_eq(sb_agent_start(a, NULL, NULL), 0);
	sb_agent_finish(a);
	sb_agent_free(a);
	close(mine);
	close(child_fd);
	unload_policy(&f);
}
END_TEST

static Suite *agent_suite(void)
{
	Suite *s = suite_create("agent");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, agent_loadable_options, 0, sizeof(loadable_cases) / sizeof(loadable_cases[0]));
	tcase_add_loop_test(tc, agent_writes_bytecode_options, 0,
			    sizeof(bytecode_cases) / sizeof(bytecode_cases[0]));
	tcase_add_loop_test(tc, agent_parse_messages, 0, sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_test(tc, agent_parse_eval);
	tcase_add_test(tc, agent_parse_eval_refused);
	tcase_add_test(tc, agent_parse_details);
	tcase_add_test(tc, agent_parse_bounds);
	tcase_add_test(tc, agent_prepare_no_py_sandbox);
	tcase_add_test(tc, agent_round_trip);
	tcase_add_test(tc, agent_finish_with_stray_holder);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(agent_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
