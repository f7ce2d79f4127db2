/* Unit tests of the learner: generalisation (table-driven, on a real
 * directory tree), merging into rule files, the journal, the recorder against
 * real policies (sb_policy_load), and the audit summary.
 *
 * Paths in the tables use @T for a scratch tree under /var/tmp, @U for one
 * under /tmp (to see the ${TMPDIR:-/tmp} default), @u for @U's name and @D
 * for the project directory of a merge test.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drift.h"
#include "learn.h"
#include "learn_int.h"
#include "log.h"
#include "policy.h"

static char T[PATH_MAX], U[PATH_MAX];
static char D[PATH_MAX];	/* the current merge test's project (@D) */

/* ---- scratch tree ------------------------------------------------------ */

static void mk(const char *root, const char *rel)
{
	char path[PATH_MAX * 2], *p;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	n = strlen(path);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	if (path[n - 1] == '/')
		return;
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		exit(99);	/* also before any test runs: a harness error */
	}
	fputs("x\n", f);
	fclose(f);
}

static void build_tree(void)
{
	static const char *const files[] = {
		"proj/data/a.txt", "proj/data/b.txt", "proj/data/sub/c.txt", "proj/out/", "proj/app/main.py",
		"proj/.env", "proj/run.sh", "proj/n1/f", "proj/n1/n2/f", "proj/n1/n2/n3/f", "home/notes.txt",
		"home/.ssh/id_rsa", "home/.cache/tool/x.bin", "home/proj2/f.txt", "venv/share/data/d.txt",
		"venv/share/hf/m.bin", "venv/bin/tool", "tmp/job/f.txt", "etc-like/x.conf",
	};
	char tmpl[] = "/var/tmp/sblearn-XXXXXX", tmpl2[] = "/tmp/sblearn-u-XXXXXX";

	if (!mkdtemp(tmpl) || !realpath(tmpl, T) || !mkdtemp(tmpl2) || !realpath(tmpl2, U)) {
		perror("mkdtemp");
		exit(99);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		mk(T, files[i]);
	mk(U, "work/f.txt");
}

static void remove_tree(const char *root)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", root);
}

/* @T, @U, @u replaced; malloc'ed. */
static char *subst(const char *s)
{
	struct sbuf b = { 0 };

	for (; *s; s++) {
		if (s[0] == '@' && s[1] == 'T') {
			sbuf_add(&b, T);
			s++;
		} else if (s[0] == '@' && s[1] == 'U') {
			sbuf_add(&b, U);
			s++;
		} else if (s[0] == '@' && s[1] == 'D') {
			sbuf_add(&b, D);
			s++;
		} else if (s[0] == '@' && s[1] == 'u') {
			sbuf_add(&b, strrchr(U, '/') + 1);
			s++;
		} else {
			sbuf_addn(&b, s, 1);
		}
	}
	ck_assert(!b.oom);
	return b.s ? b.s : strdup("");
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* ---- building learners -------------------------------------------------- */

struct env {
	char *v[16];
	size_t n;
};

static void env_from(struct env *e, const char *lines)
{
	char *copy = subst(lines), *save = NULL;

	memset(e, 0, sizeof(*e));
	for (char *t = strtok_r(copy, "\n", &save); t && e->n < 15; t = strtok_r(NULL, "\n", &save))
		e->v[e->n++] = strdup(t);
	free(copy);
}

static void env_free(struct env *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
}

static struct sb_learn *learner(const struct sb_policy *p, const char *env_lines, const char *cwd)
{
	struct env e;
	struct sb_learn *l;
	char *c = subst(cwd ? cwd : "@T/proj");
	struct sb_learn_opts o = {
		.policy = p, .cwd = c, .hosts_path = LEARN_DATA "/hosts", .datadir = RULES_DIR,
	};

	env_from(&e, env_lines ? env_lines : "HOME=@T/home");
	o.envp = e.v;
	ck_assert_int_eq(sb_learn_new(&o, &l), 0);
	env_free(&e);
	free(c);
	return l;
}

static void parse_addr(const char *ip, int *family, uint8_t *addr)
{
	if (inet_pton(AF_INET, ip, addr) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, ip, addr) == 1)
		*family = AF_INET6;
	else
		ck_abort_msg("bad address %s", ip);
}

/* The little language of the tables, one operation per line:
 *   r|w|rw|m PATH       read / write / both / metadata only
 *   x PATH              an executable started
 *   net tcp|udp out|in ADDR PORT
 *   dns NAME ADDR       a name the program resolved
 *   env NAME | imp MODULE | api QUALNAME CATEGORY | cat CATEGORY
 *   eval PROFILE|- syntax|import|call|attribute|magic|site TOKEN
 *   why LOCATION        the Python location of the following operations ("-": none) */
static void run_ops(struct sb_learn *l, const char *ops)
{
	char *copy = subst(ops), *save = NULL, why[256] = "";

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char op[16], a[PATH_MAX], b[PATH_MAX], c[64], d[16];
		int n = sscanf(line, "%15s %4095s %4095s %63s %15s", op, a, b, c, d);
		struct lnet net = { 0 };

		ck_assert_msg(n >= 2, "bad op '%s'", line);
		if (!strcmp(op, "why")) {
			snprintf(why, sizeof(why), "%s", strcmp(a, "-") ? line + 4 : "");
		} else if (!strcmp(op, "r") || !strcmp(op, "w") || !strcmp(op, "rw") || !strcmp(op, "m")) {
			unsigned acc = !strcmp(op, "w") ? SB_ACC_WRITE : !strcmp(op, "rw") ? SB_ACC_READ | SB_ACC_WRITE
											: SB_ACC_READ;
			ck_assert_int_eq(sb_learn_store_path(l, a, acc, strcmp(op, "m") != 0, why), 0);
		} else if (!strcmp(op, "x")) {
			ck_assert_int_eq(sb_learn_store_exec(l, a, why), 0);
		} else if (!strcmp(op, "net")) {
			ck_assert_int_eq(n, 5);
			net.proto = !strcmp(a, "udp") ? SB_PROTO_UDP : SB_PROTO_TCP;
			net.dir = !strcmp(b, "in") ? SB_DIR_IN : SB_DIR_OUT;
			parse_addr(c, &net.family, net.addr);
			net.port = (uint16_t)atoi(d);
			ck_assert_int_eq(sb_learn_store_net(l, &net, why), 0);
		} else if (!strcmp(op, "dns")) {
			parse_addr(b, &net.family, net.addr);
			ck_assert_int_eq(sb_learn_store_dns(l, a, net.family, net.addr), 0);
		} else if (!strcmp(op, "env")) {
			ck_assert_int_eq(sb_learn_store_env(l, a, why), 0);
		} else if (!strcmp(op, "imp")) {
			ck_assert_int_eq(sb_learn_store_import(l, a, why), 0);
		} else if (!strcmp(op, "api")) {
			ck_assert_int_eq(sb_learn_store_api(l, a, sb_api_category_from_name(b), why), 0);
		} else if (!strcmp(op, "eval")) {
			static const char *const keys[SB_EVAL__COUNT] = {
				"syntax", "import", "call", "attribute", "magic", "site",
			};
			int k = 0;

			ck_assert_int_eq(n, 4);
			while (k < SB_EVAL__COUNT && strcmp(keys[k], b))
				k++;
			ck_assert_int_lt(k, SB_EVAL__COUNT);
			ck_assert_int_eq(sb_learn_store_eval(l, strcmp(a, "-") ? a : "", (enum sb_eval_key)k, c, why), 0);
		} else if (!strcmp(op, "cat")) {
			ck_assert_int_eq(sb_learn_store_category(l, sb_api_category_from_name(a), why), 0);
		} else {
			ck_abort_msg("unknown op '%s'", op);
		}
	}
	free(copy);
}

static char *lines_of(struct sb_learn *l)
{
	char *text = NULL;
	struct sb_diag d;

	sb_diag_init(&d);
	ck_assert_int_eq(sb_learn_lines(l, &text, &d), 0);
	ck_assert_msg(d.n == 0, "unexpected diagnostic: %s", d.n ? d.items[0].msg : "");
	sb_diag_free(&d);
	return text;
}

/* ---- generalisation table ------------------------------------------------ */

#define HOME_ENV "HOME=@T/home"

static const struct gen_case {
	const char *name, *env, *cwd, *ops, *expect;
} gen_cases[] = {
	/* files: reduction, modes, nesting */
	{ "file read gives its directory", NULL, NULL, "r @T/proj/data/a.txt", "expose-ro=./data\n" },
	{ "directory listing gives itself", NULL, NULL, "r @T/proj/data", "expose-ro=./data\n" },
	{ "write gives expose-rw", NULL, NULL, "w @T/proj/out/report.txt", "expose-rw=./out\n" },
	{ "read and write merge to rw", NULL, NULL, "r @T/proj/data/a.txt\nw @T/proj/data/b.txt",
	  "expose-rw=./data\n" },
	{ "nested same mode collapses", NULL, NULL, "r @T/proj/data/a.txt\nr @T/proj/data/sub/c.txt",
	  "expose-ro=./data\n" },
	{ "rw nested under ro is kept", NULL, NULL, "r @T/proj/data/a.txt\nw @T/proj/data/sub/c.txt",
	  "expose-ro=./data\nexpose-rw=./data/sub\n" },
	{ "ro nested under rw is kept", NULL, NULL, "w @T/proj/data/a.txt\nr @T/proj/data/sub/c.txt",
	  "expose-ro=./data/sub\nexpose-rw=./data\n" },
	{ "the nearest rule decides nesting", NULL, NULL,
	  "w @T/proj/n1/f\nr @T/proj/n1/n2/f\nw @T/proj/n1/n2/n3/f",
	  "expose-ro=./n1/n2\nexpose-rw=./n1\nexpose-rw=./n1/n2/n3\n" },
	/* files: spelling */
	{ "the cwd itself is .", NULL, NULL, "r @T/proj/.env", "expose-ro=.\n" },
	{ "a file in HOME gives bare ~", NULL, NULL, "r @T/home/notes.txt", "expose-ro=~\n" },
	{ "under HOME is ~/", NULL, NULL, "r @T/home/.ssh/id_rsa", "expose-ro=~/.ssh\n" },
	{ "HOME never swallows what is below", NULL, NULL, "r @T/home/notes.txt\nr @T/home/.cache/tool/x.bin",
	  "expose-ro=~\nexpose-ro=~/.cache/tool\n" },
	{ "a cwd inside HOME is ./", NULL, "@T/home/proj2", "r @T/home/proj2/f.txt\nr @T/home/.ssh/id_rsa",
	  "expose-ro=.\nexpose-ro=~/.ssh\n" },
	{ "tool directory ${VIRTUAL_ENV}", HOME_ENV "\nVIRTUAL_ENV=@T/venv", NULL, "r @T/venv/share/data/d.txt",
	  "expose-ro=${VIRTUAL_ENV}/share/data\n" },
	{ "longest tool directory wins", HOME_ENV "\nVIRTUAL_ENV=@T/venv\nHF_HOME=@T/venv/share/hf", NULL,
	  "r @T/venv/share/hf/m.bin", "expose-ro=${HF_HOME}\n" },
	{ "tool directory before the cwd", HOME_ENV "\nVIRTUAL_ENV=@T/venv", "@T",
	  "r @T/venv/share/data/d.txt\nr @T/etc-like/x.conf",
	  "expose-ro=${VIRTUAL_ENV}/share/data\nexpose-ro=./etc-like\n" },
	{ "TMPDIR", HOME_ENV "\nTMPDIR=@T/tmp", NULL, "w @T/tmp/job/f.txt", "expose-rw=${TMPDIR:-/tmp}/job\n" },
	{ "TMP", HOME_ENV "\nTMP=@T/tmp", NULL, "w @T/tmp/job/f.txt", "expose-rw=${TMP:-/tmp}/job\n" },
	{ "TEMP", HOME_ENV "\nTEMP=@T/tmp", NULL, "w @T/tmp/job/f.txt", "expose-rw=${TEMP:-/tmp}/job\n" },
	{ "unset TMPDIR means /tmp", NULL, NULL, "w @U/work/f.txt", "expose-rw=${TMPDIR:-/tmp}/@u/work\n" },
	{ "absolute otherwise", NULL, NULL, "r @T/etc-like/x.conf", "expose-ro=@T/etc-like\n" },
	{ "system directories stay absolute", NULL, NULL, "r /etc/passwd", "expose-ro=/etc\n" },
	/* files: what is never learned */
	{ "never /proc, /sys, /dev", NULL, NULL, "r /proc/self/status\nr /sys/kernel\nw /dev/null\nr /proc", "" },
	{ "a read of what does not exist", NULL, NULL, "r @T/proj/missing.txt\nm @T/nope/x", "" },
	{ "a write where nothing remains: nearest directory", HOME_ENV "\nTMPDIR=@T/tmp", NULL,
	  "w @T/tmp/gone/deeper/f", "expose-rw=${TMPDIR:-/tmp}\n" },
	{ "never the root", NULL, NULL, "r /\nm /\nw /nonexistent-sb-dir/x/y", "" },
	{ "metadata walks through ancestors", NULL, NULL, "m @T\nm @T/proj\nm @T/home", "" },
	{ "metadata on the way to a file", NULL, NULL,
	  "m @T/proj/data\nm @T/proj/data/sub\nr @T/proj/data/sub/c.txt", "expose-ro=./data/sub\n" },
	{ "metadata of a lone directory", NULL, NULL, "m @T/home/.cache", "expose-ro=~/.cache\n" },
	{ "metadata of a file gives its directory", NULL, NULL, "m @T/proj/data/a.txt", "expose-ro=./data\n" },
	/* why comments */
	{ "why: the first location", NULL, NULL,
	  "why app.py:3 in main()\nr @T/proj/data/a.txt\nwhy x.py:9 in g()\nr @T/proj/data/b.txt",
	  "expose-ro=./data\n# why: app.py:3 in main()\n" },
	{ "why: the earliest known location", NULL, NULL,
	  "r @T/proj/data/a.txt\nwhy late.py:1 in f()\nr @T/proj/data/b.txt",
	  "expose-ro=./data\n# why: late.py:1 in f()\n" },
	{ "why: a collapsed child's location moves up", NULL, NULL,
	  "why a.py:1 in f()\nr @T/proj/data/sub/c.txt\nwhy b.py:2 in g()\nr @T/proj/data/a.txt",
	  "expose-ro=./data\n# why: a.py:1 in f()\n" },
	/* exec */
	{ "exec absolute", NULL, NULL, "x /usr/bin/git", "exec=/usr/bin/git\n" },
	{ "exec under a tool directory", HOME_ENV "\nVIRTUAL_ENV=@T/venv", NULL, "x @T/venv/bin/tool",
	  "exec=${VIRTUAL_ENV}/bin/tool\n" },
	{ "exec under the cwd stays absolute", NULL, NULL, "x @T/proj/run.sh", "exec=@T/proj/run.sh\n" },
	/* network */
	{ "an address is /32", NULL, NULL, "net tcp out 192.0.2.1 8080", "net=ALLOW|TCP|192.0.2.1/32|8080|OUT\n" },
	{ "ports aggregated and sorted", NULL, NULL,
	  "net tcp out 192.0.2.1 443\nnet tcp out 192.0.2.1 80\nnet tcp out 192.0.2.1 8080\nnet tcp out 192.0.2.1 443",
	  "net=ALLOW|TCP|192.0.2.1/32|80,443,8080|OUT\n" },
	{ "a resolved name", NULL, NULL, "dns example.com 93.184.216.34\nnet tcp out 93.184.216.34 443",
	  "net=ALLOW|TCP|example.com|443|OUT\n" },
	{ "a hosts-file name", NULL, NULL, "net tcp out 10.1.2.3 5432", "net=ALLOW|TCP|db.internal|5432|OUT\n" },
	{ "a resolved name before the hosts file", NULL, NULL, "dns api.local 10.1.2.3\nnet tcp out 10.1.2.3 5432",
	  "net=ALLOW|TCP|api.local|5432|OUT\n" },
	{ "loopback by its hosts name", NULL, NULL, "net tcp out 127.0.0.1 8000", "net=ALLOW|TCP|localhost|8000|OUT\n" },
	{ "a host from the environment", HOME_ENV "\nDB_HOST=db.internal", NULL, "net tcp out 10.1.2.3 5432",
	  "net=ALLOW|TCP|${DB_HOST}|5432|OUT\n" },
	{ "an address from the environment", HOME_ENV "\nUPSTREAM=192.0.2.10", NULL, "net tcp out 192.0.2.10 80",
	  "net=ALLOW|TCP|${UPSTREAM}|80|OUT\n" },
	{ "a port from a *PORT* variable only", HOME_ENV "\nTIMEOUT=8443\nAPP_PORT=8443", NULL,
	  "net tcp out 192.0.2.1 8443\nnet tcp out 192.0.2.1 80", "net=ALLOW|TCP|192.0.2.1/32|80,${APP_PORT}|OUT\n" },
	{ "port variable names in any case", HOME_ENV "\nhttp_Port=9000", NULL, "net tcp in 127.0.0.1 9000",
	  "net=ALLOW|TCP|localhost|${http_Port}|IN\n" },
	{ "a wildcard bind is *", NULL, NULL, "net tcp in 0.0.0.0 8000\nnet tcp in :: 8001",
	  "net=ALLOW|TCP|*|8000,8001|IN\n" },
	{ "IPv6 is /128", NULL, NULL, "net tcp out 2001:db8::1 443", "net=ALLOW|TCP|2001:db8::1/128|443|OUT\n" },
	{ "a cloud metadata service is flagged for the reviewer", NULL, NULL,
	  "net tcp out 192.0.2.1 80\nnet tcp out 169.254.169.254 80\nnet tcp out fd00:ec2::254 80",
	  "# careful: a cloud metadata service, it hands out this machine's credentials; keep only if the program needs them\n"
	  "net=ALLOW|TCP|169.254.169.254/32|80|OUT\n"
	  "net=ALLOW|TCP|192.0.2.1/32|80|OUT\n"
	  "# careful: a cloud metadata service, it hands out this machine's credentials; keep only if the program needs them\n"
	  "net=ALLOW|TCP|fd00:ec2::254/128|80|OUT\n" },
	{ "protocols and directions apart", NULL, NULL,
	  "net udp out 192.0.2.1 53\nnet tcp out 192.0.2.1 53\nnet tcp in 192.0.2.1 53",
	  "net=ALLOW|TCP|192.0.2.1/32|53|IN\nnet=ALLOW|TCP|192.0.2.1/32|53|OUT\nnet=ALLOW|UDP|192.0.2.1/32|53|OUT\n" },
	/* environment */
	{ "env sorted, once", NULL, NULL, "env ZED\nenv ALPHA\nenv ZED", "env=ALPHA=${ALPHA}\nenv=ZED=${ZED}\n" },
	/* imports */
	{ "imports classified", NULL, NULL, "imp requests\nimp json\nimp subprocess\nimp cgi\nimp _socket\nimp zlib",
	  "# \u26a0 Dangerous!\npython-import=subprocess\n# Standard Python\npython-import=_socket, json, zlib\n"
	  "# \u26a0 Deprecated Python module\npython-import=cgi\n"
	  "# External modules (Are you sure about the origin?)\npython-import=requests\n" },
	{ "external modules one per line", NULL, NULL, "imp yaml\nimp httpx",
	  "# External modules (Are you sure about the origin?)\npython-import=httpx\npython-import=yaml\n" },
	{ "imports wrapped at 70 characters", NULL, NULL,
	  "imp urllib\nimp typing\nimp threading\nimp tempfile\nimp pathlib\nimp logging\nimp itertools\n"
	  "imp hashlib\nimp functools\nimp datetime\nimp dataclasses\nimp contextlib\nimp collections\n"
	  "imp base64\nimp asyncio\nimp argparse",
	  "# Standard Python\n"
	  "python-import=argparse, asyncio, base64, collections, contextlib, dataclasses\n"
	  "python-import=datetime, functools, hashlib, itertools, logging, pathlib, tempfile\n"
	  "python-import=threading, typing, urllib\n" },
	{ "why on a wrapped import line", NULL, NULL, "imp json\nwhy m.py:2 in <module>()\nimp re",
	  "# Standard Python\npython-import=json, re\n# why: m.py:2 in <module>()\n" },
	/* python-api */
	{ "a category seen by the supervisor", NULL, NULL, "cat threads",
	  "# threads: concurrency primitives\npython-api=ALLOW:threads\n" },
	{ "a function seen by the agent", NULL, NULL, "api os.system process-exec",
	  "# \u26a0 process-exec: runs code outside the patched interpreter\npython-api=ALLOW:os.system\n" },
	{ "the category covers its functions", NULL, NULL, "api os.system process-exec\ncat process-exec",
	  "# \u26a0 process-exec: runs code outside the patched interpreter\npython-api=ALLOW:process-exec\n" },
	{ "categories in registry order", NULL, NULL, "cat threads\napi pickle.loads deserialization\ncat process-control",
	  "# process-control: kills processes, exhausts host resources\npython-api=ALLOW:process-control\n"
	  "# threads: concurrency primitives\npython-api=ALLOW:threads\n"
	  "# \u26a0 deserialization: rebuilds arbitrary objects from bytes\npython-api=ALLOW:pickle.loads\n" },
	{ "every function learned gives the category", NULL, NULL,
	  "api ctypes.CDLL native\napi ctypes.cast native\napi ctypes.string_at native\napi ctypes.wstring_at native",
	  "# \u26a0 native: native code and arbitrary memory access\npython-api=ALLOW:native\n" },
	{ "some functions stay functions", NULL, NULL, "api ctypes.cast native\napi ctypes.CDLL native",
	  "# \u26a0 native: native code and arbitrary memory access\npython-api=ALLOW:ctypes.CDLL\n"
	  "python-api=ALLOW:ctypes.cast\n" },
	{ "why on a category", NULL, NULL, "why t.py:4 in run()\ncat threads",
	  "# threads: concurrency primitives\npython-api=ALLOW:threads\n# why: t.py:4 in run()\n" },
	/* all blocks */
	{ "blocks in file order", NULL, NULL,
	  "cat threads\nimp json\nnet tcp out 192.0.2.1 80\nx /usr/bin/git\nr @T/proj/data/a.txt\nenv FOO",
	  "env=FOO=${FOO}\nexpose-ro=./data\nexec=/usr/bin/git\nnet=ALLOW|TCP|192.0.2.1/32|80|OUT\n"
	  "# Standard Python\npython-import=json\n# threads: concurrency primitives\npython-api=ALLOW:threads\n" },
};

START_TEST(generalisation)
{
	const struct gen_case *c = &gen_cases[_i];
	struct sb_learn *l = learner(NULL, c->env, c->cwd);
	char *want = subst(c->expect), *got;

	run_ops(l, c->ops);
	got = lines_of(l);
	ck_assert_msg(strcmp(got, want) == 0, "case '%s':\n--- want\n%s--- got\n%s", c->name, want, got);
	free(got);
	free(want);
	sb_learn_free(l);
}
END_TEST

/* Values from a hostile program never become other rules than the learned ones. */
static const char *const hostile_dirs[] = {
	"a\nexpose-rw=", "b#c", "${HOME}", "d,e", "f|g", "h'i", "j\"k", "trail ", "back\\slash", "del\x7f",
};

START_TEST(hostile_directory_names)
{
	struct sb_learn *l = learner(NULL, NULL, NULL);
	char dir[PATH_MAX * 2], file[PATH_MAX * 2 + 8], *text;
	struct sb_diag d;

	snprintf(dir, sizeof(dir), "%s/proj/hostile", T);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/proj/hostile/%s", T, hostile_dirs[_i]);
	ck_assert_int_eq(mkdir(dir, 0755) == 0 || errno == EEXIST, 1);
	snprintf(file, sizeof(file), "%s/f.txt", dir);
	put(file, "x");
	ck_assert_int_eq(sb_learn_store_path(l, file, SB_ACC_READ, true, NULL), 0);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_learn_lines(l, &text, &d), 0);
	ck_assert_str_eq(text, "");
	ck_assert_int_eq((int)sb_diag_count(&d, SB_DIAG_WARNING), 1);
	ck_assert_ptr_null(strchr(d.items[0].msg, '\n'));
	sb_diag_free(&d);
	free(text);
	sb_learn_free(l);
}
END_TEST

START_TEST(hostile_names_and_locations)
{
	struct sb_learn *l = learner(NULL, NULL, NULL);
	struct lnet n = { .family = AF_INET, .port = 80, .proto = SB_PROTO_TCP, .dir = SB_DIR_OUT };
	char *file = subst("@T/proj/data/a.txt"), *text;
	struct sb_diag d;

	inet_pton(AF_INET, "192.0.2.9", n.addr);
	ck_assert_int_eq(sb_learn_store_path(l, file, SB_ACC_READ, true, "x.py:1\nexpose-rw=/"), 0);
	ck_assert_int_eq(sb_learn_store_dns(l, "evil|*|*|OUT", AF_INET, n.addr), 0);
	ck_assert_int_eq(sb_learn_store_net(l, &n, NULL), 0);
	ck_assert_int_eq(sb_learn_store_import(l, "os\npython-import=*", NULL), 0);
	ck_assert_int_eq(sb_learn_store_api(l, "os.system\npython-api=ALLOW:*", SB_API_PROCESS_EXEC, NULL), 0);
	ck_assert_int_eq(sb_learn_store_env(l, "A\nB", NULL), 0);
	ck_assert_int_eq(sb_learn_store_exec(l, "/tmp/x\nexec=/bin/sh", NULL), 0);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_learn_lines(l, &text, &d), 0);
	/* The name that cannot be written gives way to the address. */
	ck_assert_str_eq(text, "expose-ro=./data\n# why: x.py:1?expose-rw=/\nnet=ALLOW|TCP|192.0.2.9/32|80|OUT\n");
	ck_assert_int_eq((int)sb_diag_count(&d, SB_DIAG_WARNING), 3);
	sb_diag_free(&d);
	free(text);
	free(file);
	sb_learn_free(l);
}
END_TEST

/* ---- eval ----------------------------------------------------------------- */

static const struct eval_case {
	const char *ops, *want;
} eval_cases[] = {
	/* A group only when every node of it was seen; groups first, sorted. */
	{ "why p.py:1 in <module>()\neval - syntax BinOp\neval - syntax UnaryOp\neval - syntax Compare\n"
	  "eval - syntax ListComp\neval - syntax SetComp\neval - syntax DictComp\neval - syntax GeneratorExp\n"
	  "eval - syntax comprehension",
	  "eval-syntax=arith, comprehension, Compare\n# why: p.py:1 in <module>()\n" },
	/* Key order; runtime-observed keys marked; the f-string advice before format. */
	{ "eval - magic __name__\neval - attribute split\neval - attribute format\neval - call sum\n"
	  "eval - call len\neval - import json\neval - syntax Lambda",
	  "eval-syntax=Lambda\neval-import=json\neval-call=len, sum\n"
	  "# Prefer an f-string (f\"{x}\") to str.format(): its attribute reads are checked\n"
	  "#   statically, where a format template is only checked at run time.\n"
	  "eval-attribute=format, split                    # \u26a0 runtime-observed\n"
	  "eval-magic=__name__                    # \u26a0 runtime-observed\n" },
	/* A call site's own namespace: the comment, and eval-call only when
	 * bare evaluations needed builtins. */
	{ "eval - site tools.py:66\neval - syntax Call\neval llm call len\neval llm site t.py:3\neval llm site a.py:1",
	  "eval-syntax=Call\n# eval-call not emitted: the namespace came from the call site\n"
	  "#   (tools.py:66). Set eval-namespace=closed to declare it here.\n"
	  "# eval-call below is for the other evaluations: the namespace came from the call site\n"
	  "#   (a.py:1, t.py:3). Set eval-namespace=closed to declare it here.\neval-call:llm=len\n" },
};

START_TEST(eval_block_lines)
{
	struct sb_learn *l = learner(NULL, NULL, NULL);
	char *text;

	run_ops(l, eval_cases[_i].ops);
	text = lines_of(l);
	ck_assert_str_eq(text, eval_cases[_i].want);
	free(text);
	sb_learn_free(l);
}
END_TEST

/* Tokens that a rule line could not hold are refused at the door. */
START_TEST(eval_hostile_tokens)
{
	struct sb_learn *l = learner(NULL, NULL, NULL);
	static const char *const bad[] = { "*", "a b", "len\neval-call=open", "1x", "", "a,b", "a=b" };
	char *text;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(sb_learn_store_eval(l, "", SB_EVAL_CALL, bad[i], NULL), -EINVAL);
	ck_assert_int_eq(sb_learn_store_eval(l, "x=y", SB_EVAL_CALL, "len", NULL), -EINVAL);
	ck_assert_int_eq(sb_learn_store_eval(l, "", SB_EVAL_CONTEXT_SITE, "a.py:1\neval-call=open", NULL), -EINVAL);
	ck_assert_int_eq(sb_learn_store_eval(l, "", SB_EVAL__COUNT, "len", NULL), -EINVAL);
	/* The loader knows the syntax words: an unknown one would make the
	 * learned file unreadable.  A refusal's reason is not a construct. */
	ck_assert_int_eq(sb_learn_store_eval(l, "", SB_EVAL_SYNTAX, "BiincludeCall", NULL), -EINVAL);
	ck_assert_int_eq(sb_learn_store_eval(l, "", SB_EVAL_REFUSED, "eval-timeout=1s", NULL), -EINVAL);
	text = lines_of(l);
	ck_assert_str_eq(text, "");
	free(text);
	sb_learn_free(l);
}
END_TEST

/* ---- pieces ------------------------------------------------------------- */

START_TEST(reduce_and_spell)
{
	struct sb_learn *l = learner(NULL, NULL, NULL);
	char *d = NULL, *want = subst("@T/proj/data"), *sp;

	ck_assert_int_eq(sb_learn_reduce_path(l, want, SB_ACC_READ, &d), 1);
	ck_assert_str_eq(d, want);
	free(d);
	ck_assert_int_eq(sb_learn_reduce_path(l, "/proc/1/environ", SB_ACC_READ, &d), 0);
	ck_assert_ptr_null(d);
	sp = sb_learn_spell_dir(l, want);
	ck_assert_str_eq(sp, "./data");
	free(sp);
	free(want);
	sb_learn_free(l);
}
END_TEST

START_TEST(wrap_single_long_name)
{
	char *names[] = { "a_module_name_that_is_much_longer_than_seventy_characters_all_by_itself_x", "b" };
	char **lines;
	size_t n;

	ck_assert_int_eq(sb_wrap_imports(names, 2, 70, &lines, &n), 0);
	ck_assert_int_eq((int)n, 2);
	ck_assert_str_eq(lines[0], "python-import=a_module_name_that_is_much_longer_than_seventy_characters_all_by_itself_x");
	ck_assert_str_eq(lines[1], "python-import=b");
	free(lines[0]);
	free(lines[1]);
	free(lines);
}
END_TEST

START_TEST(missing_module_lists_warn)
{
	struct sb_learn_opts o = { .cwd = "/", .datadir = "/nonexistent-sb-data" };
	struct sb_learn *l;
	struct sb_diag d;
	char *text;

	ck_assert_int_eq(sb_learn_new(&o, &l), 0);
	run_ops(l, "imp json\nimp _io");
	sb_diag_init(&d);
	ck_assert_int_eq(sb_learn_lines(l, &text, &d), 0);
	/* Without the lists only the leading underscore says "standard". */
	ck_assert_str_eq(text, "# Standard Python\npython-import=_io\n"
			       "# External modules (Are you sure about the origin?)\npython-import=json\n");
	ck_assert_int_eq((int)sb_diag_count(&d, SB_DIAG_WARNING), 3);
	sb_diag_free(&d);
	free(text);
	sb_learn_free(l);
}
END_TEST

/* ---- merging ------------------------------------------------------------ */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	struct sbuf b = { 0 };
	char buf[4096];
	size_t n;

	ck_assert_msg(f != NULL, "cannot read %s", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sbuf_addn(&b, buf, n);
	fclose(f);
	return b.s ? b.s : strdup("");
}

/* Replace every "YYYY/MM/DD at HH:MM" by DATE, checking the format. */
static char *undate(const char *text)
{
	regex_t re;
	regmatch_t m;
	struct sbuf b = { 0 };
	const char *p = text;

	ck_assert_int_eq(regcomp(&re, "[0-9]{4}/[0-9]{2}/[0-9]{2} at [0-9]{2}:[0-9]{2}", REG_EXTENDED), 0);
	while (regexec(&re, p, 1, &m, 0) == 0) {
		sbuf_addn(&b, p, (size_t)m.rm_so);
		sbuf_add(&b, "DATE");
		p += m.rm_eo;
	}
	sbuf_add(&b, p);
	regfree(&re);
	return b.s;
}

/* A scratch project with data/ and out/, the rule file copied from a fixture. */
static char *project(const char *fixture)
{
	char tmpl[] = "/var/tmp/sblearn-merge-XXXXXX", *dir, path[PATH_MAX];

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	dir = realpath(tmpl, NULL);
	snprintf(D, sizeof(D), "%s", dir);
	mk(dir, "data/a.txt");
	mk(dir, "out/");
	if (fixture) {
		char *text;

		snprintf(path, sizeof(path), "%s/%s", LEARN_DATA, fixture);
		text = slurp(path);
		snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
		put(path, text);
		free(text);
	}
	return dir;
}

static struct sb_learn *project_learner(const char *dir)
{
	struct sb_learn_opts o = { .cwd = dir, .hosts_path = LEARN_DATA "/hosts", .datadir = RULES_DIR };
	char *env[] = { "HOME=/nonexistent-sb-home", NULL };
	struct sb_learn *l;

	o.envp = env;
	ck_assert_int_eq(sb_learn_new(&o, &l), 0);
	return l;
}

static int write_rules(struct sb_learn *l, const char *dir, char **msg)
{
	char path[PATH_MAX];
	struct sb_diag d;
	int rc;

	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	sb_diag_init(&d);
	rc = sb_learn_write(l, path, RULES_DIR "/py-sandboxes.template", msg, &d);
	ck_assert_msg(sb_diag_count(&d, SB_DIAG_ERROR) == 0, "error: %s", d.n ? d.items[0].msg : "");
	sb_diag_free(&d);
	return rc;
}

static void check_file(const char *dir, const char *name, const char *expected_fixture)
{
	char path[PATH_MAX], *got, *want, *ugot;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	got = slurp(path);
	ugot = undate(got);
	snprintf(path, sizeof(path), "%s/%s", LEARN_DATA, expected_fixture);
	want = slurp(path);
	ck_assert_msg(strcmp(ugot, want) == 0, "--- want\n%s--- got\n%s", want, ugot);
	free(got);
	free(ugot);
	free(want);
}

static bool exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* No temporary file left next to the rule file. */
static void check_no_temp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		ck_assert_msg(strncmp(e->d_name, "..py-sandboxes", 14) != 0 && !strstr(e->d_name, ".XXXX") &&
				      !(e->d_name[0] == '.' && strstr(e->d_name, ".py-sandboxes.") &&
					!strstr(e->d_name, ".old")),
			      "left behind: %s", e->d_name);
	closedir(d);
}

/* Everything between an "# Add rules" header and the blank line closing
 * its block removed: what the merge started from. */
static char *without_added(const char *text)
{
	struct sbuf b = { 0 };
	bool skipping = false;

	for (const char *p = text, *nl; *p; p = nl + 1) {
		size_t n;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (!skipping && strncmp(p, "# Add rules (", 13) == 0)
			skipping = true;
		else if (skipping && n == 0)
			skipping = false;
		else if (!skipping)
			sbuf_addn(&b, p, n + (nl ? 1 : 0));
		if (!nl)
			break;
	}
	return b.s ? b.s : strdup("");
}

static mode_t mode_of(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_mode & 07777;
}

START_TEST(merge_new_file_from_template)
{
	static const char *const blocks[] = {
		"# Add rules (DATE)\nenv=DEMO_KEY=${DEMO_KEY}\n\n# </learning_guard_envs>",
		"# Add rules (DATE)\nexpose-ro=./data\nexpose-rw=./out\n\n# </learning_guard_files>",
		"# Add rules (DATE)\nnet=ALLOW|TCP|localhost|8000|OUT\n\n# </learning_guard_socket>",
		"# Add rules (DATE)\n# Standard Python\npython-import=json\n\n# </learning_guard_import>",
		"# Add rules (DATE)\n# threads: concurrency primitives\npython-api=ALLOW:threads\n\n# </learning_guard_api>",
	};
	char *dir = project(NULL), *msg = NULL, *got, *ugot, *tpl, *base, path[PATH_MAX];
	struct sb_learn *l = project_learner(dir);
	mode_t old = umask(027);

	run_ops(l, "env DEMO_KEY\nr @D/data/a.txt\nw @D/out/r.txt\nnet tcp out 127.0.0.1 8000\nimp json\ncat threads");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	umask(old);
	ck_assert_str_eq(msg, "Write all learning rules in '.py-sandboxes'.\n"
			      "Check and update this file to validate the rules.");
	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	got = slurp(path);
	ugot = undate(got);
	for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++)
		ck_assert_msg(strstr(ugot, blocks[i]), "missing block:\n%s\nin:\n%s", blocks[i], ugot);
	/* Everything else is the template, untouched. */
	tpl = slurp(RULES_DIR "/py-sandboxes.template");
	base = without_added(got);
	ck_assert_str_eq(base, tpl);
	ck_assert_int_eq(mode_of(dir, ".py-sandboxes"), 0640);
	ck_assert(!exists(dir, ".py-sandboxes.old"));
	check_no_temp(dir);
	free(base);
	free(tpl);
	free(ugot);
	free(got);
	free(msg);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(merge_existing_with_markers)
{
	char *dir = project("existing.py-sandboxes"), *msg = NULL, *orig, *old, path[PATH_MAX];
	struct sb_learn *l = project_learner(dir);

	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	ck_assert_int_eq(chmod(path, 0640), 0);
	orig = slurp(path);
	run_ops(l, "why app.py:1 in <module>()\nenv FOO\nwhy -\nenv HOME\nr @D/data/a.txt\nw @D/out/new.txt\n"
		   "x /usr/bin/git\nnet tcp out 127.0.0.1 8000\nimp json\nimp requests\ncat process-exec");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	ck_assert_str_eq(msg, "Write all learning rules in '.py-sandboxes'.\n"
			      "The old version is here '.py-sandboxes.old'.\n"
			      "Check and update this file to validate the rules.");
	check_file(dir, ".py-sandboxes", "existing.expected");
	snprintf(path, sizeof(path), "%s/.py-sandboxes.old", dir);
	old = slurp(path);
	ck_assert_str_eq(old, orig);
	ck_assert_int_eq(mode_of(dir, ".py-sandboxes"), 0640);
	ck_assert_int_eq(mode_of(dir, ".py-sandboxes.old"), 0640);
	check_no_temp(dir);
	free(msg);
	free(old);
	sb_learn_free(l);

	/* A second run: the next backup is .old_1, and holds the first result. */
	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	free(orig);
	orig = slurp(path);
	l = project_learner(dir);
	run_ops(l, "env BAR\nenv FOO");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	ck_assert_str_eq(msg, "Write all learning rules in '.py-sandboxes'.\n"
			      "The old version is here '.py-sandboxes.old_1'.\n"
			      "Check and update this file to validate the rules.");
	snprintf(path, sizeof(path), "%s/.py-sandboxes.old_1", dir);
	old = slurp(path);
	ck_assert_str_eq(old, orig);
	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	free(old);
	old = slurp(path);
	/* Only the new variable, under a second header. */
	ck_assert_ptr_nonnull(strstr(old, "env=BAR=${BAR}\n\n# </learning_guard_envs>"));
	ck_assert_ptr_null(strstr(strstr(old, "env=FOO=${FOO}") + 1, "env=FOO=${FOO}"));
	free(old);
	free(orig);
	free(msg);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(merge_missing_marker_appends)
{
	char *dir = project("nomarkers.py-sandboxes"), *msg = NULL;
	struct sb_learn *l = project_learner(dir);

	run_ops(l, "env FOO\nw @D/out/x\nr @D/data/a.txt");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	check_file(dir, ".py-sandboxes", "nomarkers.expected");
	free(msg);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(merge_exec_block_when_present)
{
	char *dir = project("withexec.py-sandboxes"), *msg = NULL;
	struct sb_learn *l = project_learner(dir);

	run_ops(l, "w @D/out/x\nx /usr/bin/git");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	check_file(dir, ".py-sandboxes", "withexec.expected");
	free(msg);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(merge_nothing_new_writes_nothing)
{
	char *dir = project("existing.py-sandboxes"), *msg = (char *)"x", *before, *after, path[PATH_MAX];
	struct sb_learn *l = project_learner(dir);
	struct stat st1, st2;

	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	before = slurp(path);
	ck_assert_int_eq(stat(path, &st1), 0);
	/* Everything already there, verbatim (a trailing comment does not count). */
	run_ops(l, "env HOME\nr @D/data/a.txt\nimp json");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	ck_assert_ptr_null(msg);
	after = slurp(path);
	ck_assert_str_eq(after, before);
	ck_assert_int_eq(stat(path, &st2), 0);
	ck_assert_int_eq((int)st1.st_ino, (int)st2.st_ino);
	ck_assert(!exists(dir, ".py-sandboxes.old"));
	sb_learn_free(l);
	free(before);
	free(after);

	/* Nothing learned at all: no file is created. */
	unlink(path);
	l = project_learner(dir);
	msg = (char *)"x";
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	ck_assert_ptr_null(msg);
	ck_assert(!exists(dir, ".py-sandboxes"));
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(merge_learn_line_in_message)
{
	char *dir = project("learnline.py-sandboxes"), *msg = NULL;
	struct sb_learn *l = project_learner(dir);

	run_ops(l, "env FOO");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	ck_assert_str_eq(msg, "Write all learning rules in '.py-sandboxes'. Remove the 'learn' parameter to use "
			      "the sandboxes.\nThe old version is here '.py-sandboxes.old'.\n"
			      "Check and update this file to validate the rules.");
	free(msg);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(merge_through_symlink)
{
	char *dir = project(NULL), *msg = NULL, *text, link[PATH_MAX], real[PATH_MAX];
	struct sb_learn *l = project_learner(dir);
	struct stat st;

	snprintf(real, sizeof(real), "%s/real.rules", dir);
	snprintf(link, sizeof(link), "%s/.py-sandboxes", dir);
	text = slurp(LEARN_DATA "/existing.py-sandboxes");
	put(real, text);
	free(text);
	ck_assert_int_eq(symlink("real.rules", link), 0);
	run_ops(l, "env FOO");
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	text = slurp(real);
	ck_assert_ptr_nonnull(strstr(text, "env=FOO=${FOO}"));
	ck_assert(exists(dir, "real.rules.old"));
	ck_assert_ptr_nonnull(strstr(msg, "Write all learning rules in '.py-sandboxes'."));
	free(text);
	free(msg);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(merge_without_template_keeps_lines)
{
	char *dir = project(NULL), *msg = NULL, *text, path[PATH_MAX];
	struct sb_learn *l = project_learner(dir);
	struct sb_diag d;

	run_ops(l, "env FOO");
	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_learn_write(l, path, "/nonexistent-sb-template", &msg, &d), 0);
	ck_assert_int_eq((int)sb_diag_count(&d, SB_DIAG_WARNING), 1);
	sb_diag_free(&d);
	text = slurp(path);
	ck_assert_ptr_nonnull(strstr(text, "env=FOO=${FOO}\n\n# </learning_guard_envs>"));
	free(text);
	free(msg);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

/* ---- journal ------------------------------------------------------------ */

static const char journal_ops[] =
	"why a.py:1 in f()\nenv FOO\nwhy -\nr @D/data/a.txt\nw @D/out/x\nnet tcp out 10.1.2.3 5432\n"
	"dns example.com 93.184.216.34\nnet tcp out 93.184.216.34 443\nimp requests\napi os.system process-exec\n"
	"cat threads\nx /usr/bin/git\nwhy t.py:2 in g()\neval - syntax BinOp\neval llm call len\n"
	"eval - site t.py:9";

START_TEST(journal_replay_restores_everything)
{
	char *dir = project(NULL), *jpath, *want, *got, path[PATH_MAX];
	struct sb_learn *l = project_learner(dir), *l2;
	unsigned long n = 0;

	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	jpath = sb_learn_journal_name(path);
	ck_assert_int_eq(sb_learn_journal_open(l, jpath), 0);
	run_ops(l, journal_ops);
	ck_assert_int_eq(sb_learn_journal_close(l, false), 0);
	want = lines_of(l);
	ck_assert_str_ne(want, "");

	l2 = project_learner(dir);
	ck_assert_int_eq(sb_learn_replay(l2, jpath, &n), 0);
	ck_assert_int_eq((int)n, 13);	/* one line per item */
	got = lines_of(l2);
	ck_assert_str_eq(got, want);
	free(got);

	/* A line cut short by a SIGKILL is skipped, the rest is kept. */
	FILE *f = fopen(jpath, "a");
	fputs("{\"k\":\"env\",\"key\":\"BRO", f);
	fclose(f);
	sb_learn_free(l2);
	l2 = project_learner(dir);
	ck_assert_int_eq(sb_learn_replay(l2, jpath, &n), 0);
	got = lines_of(l2);
	ck_assert_str_eq(got, want);
	free(got);
	sb_learn_free(l2);

	/* A missing journal is no error; close(remove) deletes it. */
	ck_assert_int_eq(sb_learn_replay(l, "/nonexistent-sb-journal", &n), 0);
	ck_assert_int_eq((int)n, 0);
	ck_assert_int_eq(sb_learn_journal_open(l, jpath), 0);
	ck_assert_int_eq(sb_learn_journal_close(l, true), 0);
	ck_assert_int_eq(access(jpath, F_OK), -1);
	free(want);
	free(jpath);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

static struct sb_event *ev_new(enum sb_event_kind kind, const char *syscall, enum sb_verdict v)
{
	struct sb_event *ev = calloc(1, sizeof(*ev));

	ck_assert_ptr_nonnull(ev);
	ev->kind = kind;
	ev->verdict = v;
	ev->category = -1;
	ev->pid = ev->tid = 100;
	ev->nr = kind >= SB_EV_ENV ? -1 : 1;
	snprintf(ev->syscall, sizeof(ev->syscall), "%s", syscall);
	return ev;
}

static void record_path(struct sb_learn *l, const char *syscall, const char *path, unsigned access,
			enum sb_verdict v, int err)
{
	struct sb_event *ev = ev_new(SB_EV_PATH, syscall, v);
	char *p = subst(path);

	snprintf(ev->path, sizeof(ev->path), "%s", p);
	ev->access = access;
	ev->err = err;
	sb_learn_record(l, ev);
	free(p);
	free(ev);
}

static void record_net(struct sb_learn *l, const char *syscall, const char *ip, unsigned port, unsigned dir,
		       enum sb_verdict v)
{
	struct sb_event *ev = ev_new(SB_EV_NET, syscall, v);
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ev->addr;

	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &s4->sin_addr), 1);
	ev->proto = SB_PROTO_TCP;
	ev->dir = dir;
	sb_learn_record(l, ev);
	free(ev);
}

static void record_named(struct sb_learn *l, enum sb_event_kind kind, const char *syscall, const char *name,
			 int category, enum sb_verdict v)
{
	struct sb_event *ev = ev_new(kind, syscall, v);

	snprintf(ev->name, sizeof(ev->name), "%.*s", (int)sizeof(ev->name) - 1, name);
	if (kind == SB_EV_EXEC)
		snprintf(ev->path, sizeof(ev->path), "%s", name);
	ev->category = category;
	sb_learn_record(l, ev);
	free(ev);
}

START_TEST(journal_survives_sigkill)
{
	char *dir = project(NULL), *jpath, *got, path[PATH_MAX];
	struct sb_learn *l;
	pid_t pid;
	int status;

	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	jpath = sb_learn_journal_name(path);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		l = project_learner(dir);
		if (sb_learn_journal_open(l, jpath))
			_exit(3);
		record_named(l, SB_EV_ENV, "", "SECRET_TOKEN", -1, SB_WOULD_DENY);
		record_path(l, "openat", "@D/data/a.txt", SB_ACC_READ, SB_WOULD_DENY, ENOENT);
		record_net(l, "connect", "127.0.0.1", 8000, SB_DIR_OUT, SB_WOULD_DENY);
		/* No close, no write: python-sb killed in the middle of the run. */
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	l = project_learner(dir);
	ck_assert_int_eq(sb_learn_replay(l, jpath, NULL), 0);
	got = lines_of(l);
	ck_assert_str_eq(got, "env=SECRET_TOKEN=${SECRET_TOKEN}\nexpose-ro=./data\nnet=ALLOW|TCP|localhost|8000|OUT\n");
	free(got);
	free(jpath);
	sb_learn_free(l);
	remove_tree(dir);
	free(dir);
}
END_TEST

static int threads_of_self(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Past a batch, the journal is flushed by a thread of its own (the caller
 * holds the learner's lock); every line is in the file at once, and the
 * thread ends with the journal, whether it is kept or removed. */
START_TEST(journal_flushes_off_the_caller)
{
	char *dir = project(NULL), *jpath, path[PATH_MAX], name[64];
	int base = threads_of_self();
	struct sb_learn *l;
	unsigned long n;

	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	jpath = sb_learn_journal_name(path);
	for (int keep = 0; keep < 2; keep++) {
		l = project_learner(dir);
		ck_assert_int_eq(sb_learn_journal_open(l, jpath), 0);
		ck_assert_int_eq(threads_of_self(), base + 1);
		for (int i = 0; i < 200; i++) {
			snprintf(name, sizeof(name), "SB_VAR_%d", i);
			record_named(l, SB_EV_ENV, "", name, -1, SB_WOULD_DENY);
		}
		ck_assert_int_eq(sb_learn_journal_open(l, jpath), 0);	/* reopened: one thread still */
		ck_assert_int_eq(threads_of_self(), base + 1);
		ck_assert_int_eq(sb_learn_journal_close(l, !keep), 0);
		ck_assert_int_eq(threads_of_self(), base);
		sb_learn_free(l);
		if (keep) {
			l = project_learner(dir);
			ck_assert_int_eq(sb_learn_replay(l, jpath, &n), 0);
			ck_assert_uint_eq(n, 200);
			sb_learn_free(l);
		} else {
			ck_assert_int_eq(access(jpath, F_OK), -1);
		}
	}
	unlink(jpath);
	free(jpath);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(journal_name)
{
	char *n = sb_learn_journal_name("/a/b/.py-sandboxes");

	ck_assert_str_eq(n, "/a/b/.py-sandboxes.journal");
	free(n);
	n = sb_learn_journal_name("/a/b/app.rules");
	ck_assert_str_eq(n, "/a/b/.app.rules.journal");
	free(n);
}
END_TEST

/* ---- the recorder against real policies --------------------------------- */

static struct sb_policy *load_policy(const char *dir, const char *text)
{
	char path[PATH_MAX];
	char *env[] = { "HOME=/nonexistent-sb-home", "FOO=1", NULL };
	struct sb_load_opts o = {
		.config_path = path, .envp = env, .cwd = dir, .template_path = RULES_DIR "/py-sandboxes.template",
		.hosts_path = LEARN_DATA "/hosts", .no_dns = true,
	};
	struct sb_policy *p = NULL;
	struct sb_diag d;
	int rc;

	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	if (text)
		put(path, text);
	sb_diag_init(&d);
	rc = sb_policy_load(&o, &p, &d);
	ck_assert_msg(rc == 0 && !sb_diag_has_errors(&d), "policy load: %d %s", rc,
		      d.n ? sb_diag_format(&d.items[0]) : "");
	sb_diag_free(&d);
	return p;
}

/* The interpreter as the supervisor names it: canonical. */
static char PYTHON_EXE[PATH_MAX];

static struct sb_learn *policy_learner(const struct sb_policy *p, const char *dir)
{
	struct sb_learn_opts o = {
		.policy = p, .cwd = dir, .hosts_path = LEARN_DATA "/hosts", .datadir = RULES_DIR,
		.python_exe = PYTHON_EXE, .audit = true,
	};
	char *env[] = { "HOME=/nonexistent-sb-home", NULL };
	struct sb_learn *l;

	o.envp = env;
	ck_assert_int_eq(sb_learn_new(&o, &l), 0);
	return l;
}

/* What a small program does, as the supervisor and the agent report it in
 * learning mode: what the policy would refuse comes as SB_WOULD_DENY with
 * the errno it would have given (ENOENT for a path not exposed). */
static void program_events(struct sb_learn *l, const char *python)
{
	record_named(l, SB_EV_EXEC, "execve", python, -1, SB_ALLOWED);	/* the launch */
	record_path(l, "openat", "@D/data/a.txt", SB_ACC_READ, SB_WOULD_DENY, ENOENT);
	record_path(l, "openat", "@D/data", SB_ACC_READ, SB_WOULD_DENY, ENOENT);
	record_path(l, "openat", "@D/out/r.txt", SB_ACC_READ | SB_ACC_WRITE, SB_WOULD_DENY, ENOENT);
	record_path(l, "openat", "@D/missing.txt", SB_ACC_READ, SB_WOULD_DENY, ENOENT);
	record_path(l, "newfstatat", "@D", SB_ACC_READ, SB_WOULD_DENY, ENOENT);
	/* Allowed by the supervisor's own rules (an ancestor of an exposure). */
	record_path(l, "newfstatat", "@T/etc-like", SB_ACC_READ, SB_ALLOWED, 0);
	record_path(l, "openat", "@T/etc-like/x.conf", SB_ACC_READ, SB_ALLOWED, 0);
	record_path(l, "openat", "/proc/self/status", SB_ACC_READ, SB_WOULD_DENY, ENOENT);
	record_net(l, "connect", "127.0.0.1", 8000, SB_DIR_OUT, SB_WOULD_DENY);
	record_net(l, "bind", "0.0.0.0", 8001, SB_DIR_IN, SB_WOULD_DENY);
	record_named(l, SB_EV_ENV, "", "FOO", -1, SB_WOULD_DENY);
	record_named(l, SB_EV_ENV, "", "BAR", -1, SB_WOULD_DENY);
	record_named(l, SB_EV_IMPORT, "", "json.decoder", -1, SB_WOULD_DENY);
	record_named(l, SB_EV_IMPORT, "", "requests.adapters", -1, SB_WOULD_DENY);
	record_named(l, SB_EV_PROC, "clone", "", SB_API_THREADS, SB_WOULD_DENY);
	record_named(l, SB_EV_PROC, "kill", "", SB_API_PROCESS_CONTROL, SB_WOULD_DENY);
	record_named(l, SB_EV_EXEC, "execve", "/usr/bin/git", SB_API_PROCESS_EXEC, SB_WOULD_DENY);
}

START_TEST(record_skips_what_the_policy_allows)
{
	char *dir = project(NULL), *got, *want;
	struct sb_policy *p = load_policy(dir, "expose-ro=./data\nnet=ALLOW|TCP|127.0.0.1|8000|OUT\n"
					       "python-import=json\nenv=FOO=${FOO}\npython-api=ALLOW:threads\n");
	struct sb_learn *l = policy_learner(p, dir);

	program_events(l, PYTHON_EXE);
	got = lines_of(l);
	want = subst("env=BAR=${BAR}\nexpose-ro=/usr/bin\nexpose-rw=./out\nexec=/usr/bin/git\n"
		     "net=ALLOW|TCP|*|8001|IN\n"
		     "# External modules (Are you sure about the origin?)\npython-import=requests\n"
		     "# \u26a0 process-exec: runs code outside the patched interpreter\npython-api=ALLOW:process-exec\n"
		     "# process-control: kills processes, exhausts host resources\npython-api=ALLOW:process-control\n");
	ck_assert_msg(strcmp(got, want) == 0, "--- want\n%s--- got\n%s", want, got);
	free(got);
	free(want);
	sb_learn_free(l);
	sb_policy_free(p);
	remove_tree(dir);
	free(dir);
}
END_TEST

/* The promise of learning: the learned file, loaded, allows everything the
 * learned run did, and learning the same run again adds nothing. */
START_TEST(learned_policy_allows_the_learned_run)
{
	char *dir = project(NULL), *msg = NULL, *got, path[PATH_MAX];
	struct sb_learn *l = policy_learner(NULL, dir);
	struct sb_policy *p;
	struct in_addr lo, any;
	char *a_txt = subst("@D/data/a.txt"), *r_txt = subst("@D/out/r.txt");

	program_events(l, PYTHON_EXE);
	ck_assert_int_eq(write_rules(l, dir, &msg), 0);
	ck_assert_ptr_nonnull(msg);
	free(msg);
	sb_learn_free(l);
	snprintf(path, sizeof(path), "%s/.py-sandboxes", dir);
	p = load_policy(dir, NULL);

	ck_assert_int_eq(sb_policy_check_path(p, a_txt, strlen(a_txt), SB_ACC_READ, NULL), SB_PATH_ALLOW);
	ck_assert_int_eq(sb_policy_check_path(p, r_txt, strlen(r_txt), SB_ACC_WRITE, NULL), SB_PATH_ALLOW);
	inet_pton(AF_INET, "127.0.0.1", &lo);
	inet_pton(AF_INET, "0.0.0.0", &any);
	ck_assert_int_eq(sb_policy_check_net(p, AF_INET, &lo, 8000, SB_PROTO_TCP, SB_DIR_OUT, NULL), SB_NET_ALLOW);
	ck_assert_int_eq(sb_policy_check_net(p, AF_INET, &any, 8001, SB_PROTO_TCP, SB_DIR_IN, NULL), SB_NET_ALLOW);
	ck_assert(sb_policy_env_covers(p, "BAR"));
	ck_assert(sb_policy_import_allowed(p, "requests"));
	ck_assert(sb_policy_api_granted(p, SB_API_THREADS));
	ck_assert(sb_policy_api_granted(p, SB_API_PROCESS_CONTROL));
	ck_assert(sb_policy_check_exec(p, "/usr/bin/git", NULL));

	l = policy_learner(p, dir);
	program_events(l, PYTHON_EXE);
	got = lines_of(l);
	ck_assert_str_eq(got, "");
	free(got);
	sb_learn_free(l);
	sb_policy_free(p);
	free(a_txt);
	free(r_txt);
	remove_tree(dir);
	free(dir);
}
END_TEST

START_TEST(audit_summary_lists_each_refusal_once)
{
	char *dir = project(NULL), *text = NULL;
	struct sb_policy *p = load_policy(dir, "expose-ro=./data\n");
	struct sb_learn *l = policy_learner(p, dir);
	struct sb_event *ev;

	char *want;

	mk(dir, "out/secret");
	ck_assert_int_eq(sb_learn_audit_summary(l, &text), 0);
	ck_assert_str_eq(text, "");
	free(text);
	record_path(l, "openat", "@D/data/a.txt", SB_ACC_READ, SB_ALLOWED, 0);
	for (int i = 0; i < 2; i++) {
		ev = ev_new(SB_EV_PATH, "openat", SB_WOULD_DENY);
		snprintf(ev->path, sizeof(ev->path), "%s/out/secret", dir);
		ev->access = SB_ACC_READ;
		snprintf(ev->pyloc, sizeof(ev->pyloc), "evil.py:%d in steal()", 10 + i);
		sb_learn_record(l, ev);
		free(ev);
	}
	record_net(l, "connect", "10.0.0.1", 80, SB_DIR_OUT, SB_WOULD_DENY);
	ck_assert_int_eq(sb_learn_audit_summary(l, &text), 2);
	ck_assert_msg(strstr(text, "python-sb: audit: 2 distinct access(es) would have been refused "
				   "(3 event(s): files 2, network 1)\n"), "%s", text);
	/* The tip is spelled from python-sb's own directory (here the test's). */
	ck_assert_int_gt(asprintf(&want, "  WOULD DENY open '%s/out/secret' (read) at evil.py:10 in steal(): "
				  "no expose rule; add expose-ro=%s/out [2 times]\n", dir, dir), 0);
	ck_assert_msg(strstr(text, want), "want\n%s\nin\n%s", want, text);
	free(want);
	ck_assert_msg(strstr(text, "  WOULD DENY connect 10.0.0.1:80 (tcp): Connection to [10.0.0.1]:80 DENIED "
				   "by implicit default policy; add net=ALLOW|TCP|10.0.0.1/32|80|OUT\n"),
		      "%s", text);
	ck_assert_msg(strstr(text, "lines that would allow them (review before adding):\n  expose-ro=./out\n"
				   "  # why: evil.py:10 in steal()\n  net=ALLOW|TCP|10.0.0.1/32|80|OUT\n"),
		      "%s", text);
	free(text);
	sb_learn_free(l);
	sb_policy_free(p);
	remove_tree(dir);
	free(dir);
}
END_TEST


/* ---- drift ---------------------------------------------------------------- */

static struct sb_drift_result drift(const char *old, const char *new, char **text)
{
	char a[] = "/var/tmp/sbdrift-a-XXXXXX", b[] = "/var/tmp/sbdrift-b-XXXXXX";
	struct sb_drift_result res;
	struct sb_diag d;
	int fa = mkstemp(a), fb = mkstemp(b);

	ck_assert(fa >= 0 && fb >= 0);
	close(fa);
	close(fb);
	put(a, old);
	put(b, new);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_drift_compare(a, b, text, &res, &d), 0);
	sb_diag_free(&d);
	unlink(a);
	unlink(b);
	return res;
}

static const struct drift_case {
	const char *name, *old, *new;
	bool differ, widens;
	const char *line;	/* a line the report must have, or NULL */
} drift_cases[] = {
	{ "comments, order and headers do not count", "expose-ro=./a\n# x\nenv=A=${A}\n",
	  "# Add rules (2026/01/01 at 10:00)\nenv=A=${A}  # why\n\nexpose-ro=./a\n", false, false, NULL },
	{ "list items compare one by one", "python-import=json, re\n", "python-import=re,json\n", false, false, NULL },
	{ "net ports and case", "net=ALLOW|tcp|h|80,443|OUT\n", "net=ALLOW|TCP|h|443,80|OUT\n", false, false, NULL },
	{ "an added exposure widens", "expose-ro=./a\n", "expose-ro=./a\nexpose-rw=./b\n", true, true,
	  "  + expose-rw=./b   (widens)\n" },
	{ "a removed exposure narrows", "expose-ro=./a\nexpose-rw=./b\n", "expose-ro=./a\n", true, false,
	  "  - expose-rw=./b\n" },
	{ "an added port widens", "net=ALLOW|TCP|h|80|OUT\n", "net=ALLOW|TCP|h|80,8080|OUT\n", true, true,
	  "  + net=ALLOW|TCP|h|8080|OUT   (widens)\n" },
	{ "a removed deny widens", "net=DENY|*|10.0.0.0/8|*|OUT\n", "", true, true,
	  "  - net=DENY|*|10.0.0.0/8|*|OUT   (widens)\n" },
	{ "an added ignore narrows", "", "ignore=.env\n", true, false, "  + ignore=.env\n" },
	{ "a removed lock widens", "learn=false\n", "", true, true, "  - learn=false   (widens)\n" },
	{ "api deny items", "python-api=DENY:os.system, os.popen\n", "python-api=DENY:os.system\n", true, true,
	  "  - python-api=DENY:os.popen   (widens)\n" },
	{ "the first exec= narrows", "", "exec=/usr/bin/git\n", true, false, "  + exec=/usr/bin/git\n" },
	{ "another exec= widens", "exec=/usr/bin/git\n", "exec=/usr/bin/git\nexec=/bin/sh\n", true, true,
	  "  + exec=/bin/sh   (widens)\n" },
	{ "the last exec= removed widens", "exec=/usr/bin/git\n", "", true, true,
	  "  - exec=/usr/bin/git   (widens)\n" },
	{ "a changed setting counts", "os-sandbox=landlock\n", "os-sandbox=none\n", true, true,
	  "  + os-sandbox=none   (widens)\n" },
	{ "a comment inside quotes is no comment", "include \"a#b\"\n", "include \"a#b\"  # c\n", false, false, NULL },
};

START_TEST(drift_table)
{
	const struct drift_case *c = &drift_cases[_i];
	char *text = NULL;
	struct sb_drift_result r = drift(c->old, c->new, &text);

	ck_assert_msg(r.differ == c->differ && r.widens == c->widens, "case '%s': differ %d widens %d\n%s", c->name,
		      r.differ, r.widens, text);
	if (c->line)
		ck_assert_msg(strstr(text, c->line), "case '%s': no '%s' in\n%s", c->name, c->line, text);
	free(text);
}
END_TEST

START_TEST(drift_missing_file)
{
	struct sb_drift_result r;
	struct sb_diag d;
	char *text = NULL;

	sb_diag_init(&d);
	ck_assert_int_eq(sb_drift_compare("/nonexistent-sb-a", "/nonexistent-sb-b", &text, &r, &d), -ENOENT);
	ck_assert(sb_diag_has_errors(&d));
	ck_assert_ptr_null(text);
	sb_diag_free(&d);
}
END_TEST

static Suite *learn_suite(void)
{
	Suite *s = suite_create("learn");
	TCase *tc = tcase_create("generalisation");

	tcase_add_loop_test(tc, generalisation, 0, (int)(sizeof(gen_cases) / sizeof(gen_cases[0])));
	tcase_add_loop_test(tc, hostile_directory_names, 0, (int)(sizeof(hostile_dirs) / sizeof(hostile_dirs[0])));
	tcase_add_test(tc, hostile_names_and_locations);
	tcase_add_test(tc, reduce_and_spell);
	tcase_add_test(tc, wrap_single_long_name);
	tcase_add_test(tc, missing_module_lists_warn);
	tcase_add_loop_test(tc, eval_block_lines, 0, (int)(sizeof(eval_cases) / sizeof(eval_cases[0])));
	tcase_add_test(tc, eval_hostile_tokens);
	suite_add_tcase(s, tc);
	tc = tcase_create("merge");
	tcase_add_test(tc, merge_new_file_from_template);
	tcase_add_test(tc, merge_existing_with_markers);
	tcase_add_test(tc, merge_missing_marker_appends);
	tcase_add_test(tc, merge_exec_block_when_present);
	tcase_add_test(tc, merge_nothing_new_writes_nothing);
	tcase_add_test(tc, merge_learn_line_in_message);
	tcase_add_test(tc, merge_through_symlink);
	tcase_add_test(tc, merge_without_template_keeps_lines);
	suite_add_tcase(s, tc);
	tc = tcase_create("journal");
	tcase_add_test(tc, journal_replay_restores_everything);
	tcase_add_test(tc, journal_survives_sigkill);
	tcase_add_test(tc, journal_flushes_off_the_caller);
	tcase_add_test(tc, journal_name);
	suite_add_tcase(s, tc);
	tc = tcase_create("recorder");
	tcase_add_test(tc, record_skips_what_the_policy_allows);
	tcase_add_test(tc, learned_policy_allows_the_learned_run);
	tcase_add_test(tc, audit_summary_lists_each_refusal_once);
	suite_add_tcase(s, tc);
	tc = tcase_create("drift");
	tcase_add_loop_test(tc, drift_table, 0, (int)(sizeof(drift_cases) / sizeof(drift_cases[0])));
	tcase_add_test(tc, drift_missing_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	build_tree();
	if (!realpath("/usr/bin/python3", PYTHON_EXE))
		snprintf(PYTHON_EXE, sizeof(PYTHON_EXE), "/usr/bin/python3");
	sr = srunner_create(learn_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_tree(T);
	remove_tree(U);
	return failed ? 1 : 0;
}
