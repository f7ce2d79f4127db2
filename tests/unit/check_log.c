/* Unit tests of the decision log (src/log.c): JSON lines parsed back with
 * cJSON, escaping of hostile names, bounded buffers, the human refusal lines.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static struct sb_event *new_event(enum sb_event_kind kind)
{
	struct sb_event *ev = calloc(1, sizeof(*ev));

	ck_assert_ptr_nonnull(ev);
	ev->ts.tv_sec = 1780000000;	/* 2026-05-28T20:26:40Z */
	ev->ts.tv_nsec = 123456789;
	ev->pid = 4242;
	ev->tid = 4243;
	ev->nr = 257;
	strcpy(ev->syscall, "openat");
	ev->kind = kind;
	ev->verdict = SB_DENIED;
	ev->err = ENOENT;
	ev->access = SB_ACC_READ;
	ev->category = -1;
	return ev;
}

static void set_v4(struct sb_event *ev, const char *ip, unsigned port)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ev->addr;

	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &s4->sin_addr), 1);
}

static void set_v6(struct sb_event *ev, const char *ip, unsigned port)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ev->addr;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET6, ip, &s6->sin6_addr), 1);
}

/* Serialise and parse back; the line must be exactly one line. */
static cJSON *roundtrip(const struct sb_event *ev)
{
	char buf[16384];
	int n = sb_event_to_json(ev, buf, sizeof(buf));
	cJSON *o;

	ck_assert_int_gt(n, 0);
	ck_assert_int_eq((int)strlen(buf), n);
	ck_assert_int_eq(buf[n - 1], '\n');
	ck_assert_ptr_null(memchr(buf, '\n', (size_t)n - 1));
	o = cJSON_Parse(buf);
	ck_assert_msg(o != NULL, "not JSON: %s", buf);
	return o;
}

static const char *sfield(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	ck_assert_msg(cJSON_IsString(v), "field %s missing or not a string", name);
	return v->valuestring;
}

static double nfield(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	ck_assert_msg(cJSON_IsNumber(v), "field %s missing or not a number", name);
	return v->valuedouble;
}

START_TEST(json_path_event_fields)
{
	static const struct sb_rule_ref ref = { "/etc/py/profile", 7, "expose-ro=/srv" };
	struct sb_event *ev = new_event(SB_EV_PATH);
	cJSON *o, *rule;

	strcpy(ev->path, "/home/u/.ssh/id_rsa");
	strcpy(ev->pyloc, "app/tools.py:42 in fetch()");
	strcpy(ev->importing, "paramiko");
	strcpy(ev->tip, "expose-ro=~/.ssh");
	ev->from_eval = true;
	ev->rule = &ref;
	o = roundtrip(ev);
	ck_assert_int_eq((int)nfield(o, "version"), SB_LOG_SCHEMA_VERSION);
	ck_assert_str_eq(sfield(o, "time"), "2026-05-28T20:26:40.123456Z");
	ck_assert_int_eq((int)nfield(o, "pid"), 4242);
	ck_assert_int_eq((int)nfield(o, "tid"), 4243);
	ck_assert_int_eq((int)nfield(o, "nr"), 257);
	ck_assert_str_eq(sfield(o, "syscall"), "openat");
	ck_assert_str_eq(sfield(o, "kind"), "path");
	ck_assert_str_eq(sfield(o, "object"), "/home/u/.ssh/id_rsa");
	ck_assert_str_eq(sfield(o, "intent"), "read");
	ck_assert_str_eq(sfield(o, "verdict"), "denied");
	ck_assert_str_eq(sfield(o, "errno"), "ENOENT");
	ck_assert_str_eq(sfield(o, "tip"), "expose-ro=~/.ssh");
	ck_assert_str_eq(sfield(o, "python"), "app/tools.py:42 in fetch()");
	ck_assert_str_eq(sfield(o, "importing"), "paramiko");
	ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "from_eval")));
	rule = cJSON_GetObjectItemCaseSensitive(o, "rule");
	ck_assert(cJSON_IsObject(rule));
	ck_assert_str_eq(sfield(rule, "file"), "/etc/py/profile");
	ck_assert_int_eq((int)nfield(rule, "line"), 7);
	ck_assert_str_eq(sfield(rule, "text"), "expose-ro=/srv");
	cJSON_Delete(o);
	free(ev);
}
END_TEST

START_TEST(json_allowed_event_is_minimal)
{
	struct sb_event *ev = new_event(SB_EV_PATH);
	cJSON *o;

	ev->verdict = SB_ALLOWED;
	ev->err = 0;
	ev->access = SB_ACC_READ | SB_ACC_WRITE;
	strcpy(ev->path, "/srv/data/x");
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "verdict"), "allowed");
	ck_assert_str_eq(sfield(o, "intent"), "read,write");
	/* No errno, no tip, no rule, no location when there is none. */
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "errno"));
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "tip"));
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "rule"));
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "python"));
	ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "from_eval")));
	cJSON_Delete(o);
	free(ev);
}
END_TEST

/* Hostile names: each comes back exactly (or, for bytes that are not UTF-8,
 * as the text \xHH), and never breaks the line. */
static const struct {
	const char *raw, *decoded;
} hostile[] = {
	{ "/tmp/a\"b", "/tmp/a\"b" },
	{ "/tmp/back\\slash", "/tmp/back\\slash" },
	{ "/tmp/new\nline", "/tmp/new\nline" },
	{ "/tmp/tab\there\r", "/tmp/tab\there\r" },
	{ "/tmp/ctl\x01\x1f\x7f", "/tmp/ctl\x01\x1f\x7f" },
	{ "/tmp/\"},\"verdict\":\"allowed", "/tmp/\"},\"verdict\":\"allowed" },
	{ "/tmp/caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80", "/tmp/caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80" },
	{ "/tmp/bad\xff", "/tmp/bad\\xff" },
	{ "/tmp/overlong\xc0\x80", "/tmp/overlong\\xc0\\x80" },
	{ "/tmp/surrogate\xed\xa0\x80", "/tmp/surrogate\\xed\\xa0\\x80" },
	{ "/tmp/cut\xe2\x82", "/tmp/cut\\xe2\\x82" },
	{ "/tmp/toobig\xf4\x90\x80\x80", "/tmp/toobig\\xf4\\x90\\x80\\x80" },
	{ "/tmp/u2028\xe2\x80\xa8", "/tmp/u2028\xe2\x80\xa8" },
};

START_TEST(json_escapes_hostile_paths)
{
	struct sb_event *ev = new_event(SB_EV_PATH);
	cJSON *o;

	strcpy(ev->path, hostile[_i].raw);
	strcpy(ev->pyloc, hostile[_i].raw);
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "object"), hostile[_i].decoded);
	ck_assert_str_eq(sfield(o, "python"), hostile[_i].decoded);
	cJSON_Delete(o);
	free(ev);
}
END_TEST

START_TEST(json_enospc_every_short_buffer)
{
	struct sb_event *ev = new_event(SB_EV_PATH);
	char full[16384], *small;
	int n;

	strcpy(ev->path, "/tmp/\"quoted\"\n\xff");
	strcpy(ev->pyloc, "x.py:1 in f()");
	n = sb_event_to_json(ev, full, sizeof(full));
	ck_assert_int_gt(n, 0);
	small = malloc((size_t)n + 1);
	/* Every capacity too small by any amount fails cleanly... */
	for (int cap = 0; cap <= n; cap++) {
		memset(small, 'X', (size_t)n + 1);
		ck_assert_int_eq(sb_event_to_json(ev, small, (size_t)cap), -ENOSPC);
		if (cap)
			ck_assert_int_eq(small[0], '\0');
	}
	/* ... and the exact size works. */
	ck_assert_int_eq(sb_event_to_json(ev, small, (size_t)n + 1), n);
	ck_assert_str_eq(small, full);
	free(small);
	free(ev);
}
END_TEST

START_TEST(json_net_event)
{
	struct sb_event *ev = new_event(SB_EV_NET);
	cJSON *o;

	strcpy(ev->syscall, "connect");
	ev->nr = 42;
	ev->err = ECONNREFUSED;
	ev->proto = SB_PROTO_TCP;
	ev->dir = SB_DIR_OUT;
	set_v4(ev, "10.0.0.1", 80);
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "kind"), "net");
	ck_assert_str_eq(sfield(o, "object"), "10.0.0.1:80");
	ck_assert_str_eq(sfield(o, "addr"), "10.0.0.1");
	ck_assert_int_eq((int)nfield(o, "port"), 80);
	ck_assert_str_eq(sfield(o, "proto"), "tcp");
	ck_assert_str_eq(sfield(o, "direction"), "out");
	ck_assert_str_eq(sfield(o, "intent"), "connect");
	ck_assert_str_eq(sfield(o, "errno"), "ECONNREFUSED");
	ck_assert_str_eq(sfield(o, "tip"), "net=ALLOW|TCP|10.0.0.1/32|80|OUT");
	cJSON_Delete(o);

	set_v6(ev, "::1", 443);
	ev->proto = SB_PROTO_UDP;
	strcpy(ev->syscall, "sendto");
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "object"), "[::1]:443");
	ck_assert_str_eq(sfield(o, "intent"), "send");
	ck_assert_str_eq(sfield(o, "tip"), "net=ALLOW|UDP|::1/128|443|OUT");
	cJSON_Delete(o);

	/* IPv4-mapped IPv6 is judged, hence shown, as IPv4. */
	set_v6(ev, "::ffff:192.0.2.7", 53);
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "object"), "192.0.2.7:53");
	cJSON_Delete(o);

	/* A wildcard bind is written '*' in the tip. */
	set_v4(ev, "0.0.0.0", 8000);
	ev->proto = SB_PROTO_TCP;
	ev->dir = SB_DIR_IN;
	strcpy(ev->syscall, "bind");
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "intent"), "bind");
	ck_assert_str_eq(sfield(o, "direction"), "in");
	ck_assert_str_eq(sfield(o, "tip"), "net=ALLOW|TCP|*|8000|IN");
	cJSON_Delete(o);
	free(ev);
}
END_TEST

START_TEST(json_agent_events)
{
	struct sb_event *ev = new_event(SB_EV_API);
	cJSON *o;

	ev->nr = -1;
	ev->syscall[0] = '\0';
	ev->err = 0;
	ev->verdict = SB_WOULD_DENY;
	ev->category = SB_API_PROCESS_EXEC;
	strcpy(ev->name, "os.system");
	o = roundtrip(ev);
	ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "nr"));
	ck_assert_str_eq(sfield(o, "kind"), "api");
	ck_assert_str_eq(sfield(o, "object"), "os.system");
	ck_assert_str_eq(sfield(o, "category"), "process-exec");
	ck_assert_str_eq(sfield(o, "verdict"), "would-deny");
	ck_assert_str_eq(sfield(o, "tip"), "python-api=ALLOW:os.system");
	cJSON_Delete(o);

	ev->kind = SB_EV_IMPORT;
	strcpy(ev->name, "requests.adapters");
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "intent"), "import");
	ck_assert_str_eq(sfield(o, "tip"), "python-import=requests");
	cJSON_Delete(o);

	ev->kind = SB_EV_ENV;
	strcpy(ev->name, "AWS_SECRET_ACCESS_KEY");
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "tip"), "env=AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}");
	cJSON_Delete(o);

	ev->kind = SB_EV_DNS;
	ev->verdict = SB_ALLOWED;
	strcpy(ev->name, "example.com");
	set_v4(ev, "93.184.216.34", 0);
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "object"), "example.com");
	ck_assert_str_eq(sfield(o, "addr"), "93.184.216.34");
	cJSON_Delete(o);

	ev->kind = SB_EV_PROC;
	ev->verdict = SB_DENIED;
	ev->category = SB_API_THREADS;
	strcpy(ev->syscall, "clone");
	o = roundtrip(ev);
	ck_assert_str_eq(sfield(o, "object"), "threads");
	ck_assert_str_eq(sfield(o, "category"), "threads");
	cJSON_Delete(o);
	free(ev);
}
END_TEST

/* ---- notices ---------------------------------------------------------- */

static void check_notice(const struct sb_event *ev, const char *want)
{
	char buf[16384];
	int n = sb_event_to_notice(ev, buf, sizeof(buf));

	ck_assert_int_eq(n, (int)strlen(want));
	ck_assert_str_eq(buf, want);
}

START_TEST(notice_path_denied_with_home_tip)
{
	struct sb_event *ev = new_event(SB_EV_PATH);

	setenv("HOME", "/home/u", 1);
	strcpy(ev->path, "/home/u/.ssh/id_rsa");
	strcpy(ev->pyloc, "app/tools.py:42 in fetch()");
	check_notice(ev, "python-sb: DENIED open '/home/u/.ssh/id_rsa' (read) at app/tools.py:42 in fetch(): "
			 "no expose rule; add expose-ro=~/.ssh\n");
	ev->verdict = SB_WOULD_DENY;
	check_notice(ev, "python-sb: WOULD DENY open '/home/u/.ssh/id_rsa' (read) at app/tools.py:42 in fetch(): "
			 "no expose rule; add expose-ro=~/.ssh\n");
	free(ev);
}
END_TEST

START_TEST(notice_supervisor_tip_wins)
{
	struct sb_event *ev = new_event(SB_EV_PATH);

	strcpy(ev->path, "/srv/x/y.txt");
	strcpy(ev->tip, "expose-ro=/srv/x");
	strcpy(ev->syscall, "newfstatat");
	check_notice(ev, "python-sb: DENIED stat '/srv/x/y.txt' (read): no expose rule; add expose-ro=/srv/x\n");
	free(ev);
}
END_TEST

/* No tip would expose the whole tree, every process's /proc entries or
 * every device, nor a process's own /proc entry (its number changes). */
START_TEST(notice_path_no_wide_tip)
{
	static const struct {
		const char *path;
		unsigned access;
		const char *tail;	/* after "(read|write): " */
	} cases[] = {
		{ "/proc/cpuinfo", SB_ACC_READ, "no expose rule (none is suggested for '/proc' whole)" },
		{ "/proc", SB_ACC_READ, "no expose rule (none is suggested for '/proc' whole)" },
		{ "/proc/4242/environ", SB_ACC_READ, "a process outside the sandbox" },
		{ "/proc/self/environ", SB_ACC_READ, "a process outside the sandbox" },
		{ "/proc/4242/mem", SB_ACC_WRITE,
		  "no expose rule (none is suggested for a process's /proc entries)" },
		{ "/dev/sb-no-such-device", SB_ACC_READ, "no expose rule (none is suggested for '/dev' whole)" },
		{ "/sb-no-such-file", SB_ACC_WRITE, "no expose rule (none is suggested for '/' whole)" },
		{ "/sys", SB_ACC_READ, "no expose rule (none is suggested for '/sys' whole)" },
		/* Narrower directories of the same trees keep their tip. */
		{ "/proc/sys/kernel/sb-no-such-file", SB_ACC_READ, "no expose rule; add expose-ro=/proc/sys/kernel" },
		{ "/proc/4242x/y", SB_ACC_READ, "no expose rule; add expose-ro=/proc/4242x" },
		{ "/dev/shm/sb-no-such-file", SB_ACC_WRITE, "no expose rule; add expose-rw=/dev/shm" },
	};
	static const struct sb_rule_ref root_ro = { "/p/.py-sandboxes", 1, "expose-ro=/" };
	struct sb_event *ev = new_event(SB_EV_PATH);
	char want[512], tip[64];
	cJSON *o;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(ev->path, cases[i].path);
		ev->access = cases[i].access;
		snprintf(want, sizeof(want), "python-sb: DENIED open '%s' (%s): %s\n", cases[i].path,
			 cases[i].access == SB_ACC_READ ? "read" : "write", cases[i].tail);
		check_notice(ev, want);
		o = roundtrip(ev);
		if (strstr(cases[i].tail, "; add ")) {
			ck_assert_str_eq(sfield(o, "tip"), strstr(cases[i].tail, "; add ") + 6);
		} else {
			ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "tip"));
			ck_assert_int_eq(sb_event_tip(ev, tip, sizeof(tip)), 0);
		}
		cJSON_Delete(o);
	}
	/* Read-only by a rule, with no narrower line to offer: said too. */
	strcpy(ev->path, "/dev/sb-no-such-device");
	ev->access = SB_ACC_READ | SB_ACC_WRITE;
	ev->err = EACCES;
	ev->rule = &root_ro;
	check_notice(ev, "python-sb: DENIED open '/dev/sb-no-such-device' (read,write): read-only: rule "
			 "'expose-ro=/' from /p/.py-sandboxes(1) (none is suggested for '/dev' whole)\n");
	free(ev);
}
END_TEST

START_TEST(notice_path_rules)
{
	static const struct sb_rule_ref ign = { "/p/.py-sandboxes", 12, "ignore=.env" };
	static const struct sb_rule_ref ro = { "/p/.py-sandboxes", 20, "expose-ro=./data" };
	static const struct sb_rule_ref cli = { ".", 0, "expose-ro=./data" };
	struct sb_event *ev = new_event(SB_EV_PATH);

	strcpy(ev->path, "/p/.env");
	ev->rule = &ign;
	check_notice(ev, "python-sb: DENIED open '/p/.env' (read): hidden by rule 'ignore=.env' from "
			 "/p/.py-sandboxes(12)\n");
	strcpy(ev->path, "/nonexistent-dir/data/f");
	ev->rule = &ro;
	ev->access = SB_ACC_WRITE;
	ev->err = EACCES;
	check_notice(ev, "python-sb: DENIED open '/nonexistent-dir/data/f' (write): read-only: rule "
			 "'expose-ro=./data' from /p/.py-sandboxes(20); add expose-rw=/nonexistent-dir/data\n");
	ev->rule = &cli;
	check_notice(ev, "python-sb: DENIED open '/nonexistent-dir/data/f' (write): read-only: rule "
			 "'expose-ro=./data' from the command line; add expose-rw=/nonexistent-dir/data\n");
	/* The policy file itself: nothing can allow it. */
	ev->rule = NULL;
	strcpy(ev->path, "/p/.py-sandboxes");
	check_notice(ev, "python-sb: DENIED open '/p/.py-sandboxes' (write): the active policy files are "
			 "write-protected\n");
	free(ev);
}
END_TEST

START_TEST(notice_hostile_path_stays_one_line)
{
	struct sb_event *ev = new_event(SB_EV_PATH);
	char buf[16384];

	strcpy(ev->path, "/nonexistent-dir/a'b\nc\x1b[31m\xff");
	ck_assert_int_gt(sb_event_to_notice(ev, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "python-sb: DENIED open '/nonexistent-dir/a\\'b\\x0ac\\x1b[31m\\xff' (read): "
			      "no expose rule; add expose-ro=/nonexistent-dir\n");
	free(ev);
}
END_TEST

/* A cloud metadata service: the tip stays exact, with a warning; its
 * neighbours are ordinary link-local addresses. */
static void check_metadata_notices(struct sb_event *ev)
{
	static const char warn[] = " (a cloud metadata service: it hands out this machine's credentials)";
	static const struct {
		const char *addr, *shown, *bracketed, *net;
		bool v6, metadata;
	} cases[] = {
		{ "169.254.169.254", "169.254.169.254:80", "[169.254.169.254]:80", "169.254.169.254/32", false, true },
		{ "::ffff:169.254.169.254", "169.254.169.254:80", "[169.254.169.254]:80", "169.254.169.254/32", true,
		  true },
		{ "fd00:ec2::254", "[fd00:ec2::254]:80", "[fd00:ec2::254]:80", "fd00:ec2::254/128", true, true },
		{ "169.254.169.253", "169.254.169.253:80", "[169.254.169.253]:80", "169.254.169.253/32", false,
		  false },
	};
	char want[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].v6)
			set_v6(ev, cases[i].addr, 80);
		else
			set_v4(ev, cases[i].addr, 80);
		snprintf(want, sizeof(want),
			 "python-sb: DENIED connect %s (tcp): Connection to %s DENIED by implicit default policy%s; "
			 "add net=ALLOW|TCP|%s|80|OUT\n",
			 cases[i].shown, cases[i].bracketed, cases[i].metadata ? warn : "", cases[i].net);
		check_notice(ev, want);
	}
}

START_TEST(notice_net)
{
	static const struct sb_rule_ref deny = { "~/.config/py-sandboxes/user-py-sandboxes.profile", 1,
						 "net=DENY|*|10.0.0.0/8|*|OUT" };
	struct sb_event *ev = new_event(SB_EV_NET);

	strcpy(ev->syscall, "connect");
	ev->proto = SB_PROTO_TCP;
	ev->dir = SB_DIR_OUT;
	set_v4(ev, "10.0.0.1", 80);
	check_notice(ev, "python-sb: DENIED connect 10.0.0.1:80 (tcp): Connection to [10.0.0.1]:80 DENIED by "
			 "implicit default policy; add net=ALLOW|TCP|10.0.0.1/32|80|OUT\n");
	ev->rule = &deny;
	check_notice(ev, "python-sb: DENIED connect 10.0.0.1:80 (tcp): Connection to [10.0.0.1]:80 DENIED by "
			 "explicit rule 'net=DENY|*|10.0.0.0/8|*|OUT' from "
			 "~/.config/py-sandboxes/user-py-sandboxes.profile(1)\n");
	ev->rule = NULL;
	set_v6(ev, "::1", 9);
	strcpy(ev->pyloc, "evil.py:9 in exfiltrate()");
	check_notice(ev, "python-sb: DENIED connect [::1]:9 (tcp) at evil.py:9 in exfiltrate(): Connection to "
			 "[::1]:9 DENIED by implicit default policy; add net=ALLOW|TCP|::1/128|9|OUT\n");
	ev->pyloc[0] = '\0';
	check_metadata_notices(ev);
	free(ev);
}
END_TEST

START_TEST(notice_process_and_agent)
{
	struct sb_event *ev = new_event(SB_EV_PROC);

	strcpy(ev->syscall, "clone");
	ev->category = SB_API_THREADS;
	check_notice(ev, "python-sb: DENIED clone (threads): the python-api category 'threads' is not "
			 "granted; add python-api=ALLOW:threads\n");
	ev->kind = SB_EV_EXEC;
	strcpy(ev->syscall, "execve");
	strcpy(ev->path, "/bin/sh");
	check_notice(ev, "python-sb: DENIED exec '/bin/sh': no exec rule allows it; add exec=/bin/sh\n");
	ev->kind = SB_EV_API;
	ev->syscall[0] = '\0';
	ev->category = SB_API_PROCESS_EXEC;
	strcpy(ev->name, "os.system");
	check_notice(ev, "python-sb: DENIED call os.system(): denied by the API guard (category: "
			 "process-exec); add python-api=ALLOW:os.system\n");
	free(ev);
}
END_TEST

START_TEST(notice_enospc)
{
	struct sb_event *ev = new_event(SB_EV_PATH);
	char buf[16384], small[64];
	int n;

	strcpy(ev->path, "/nonexistent-dir/file");
	n = sb_event_to_notice(ev, buf, sizeof(buf));
	ck_assert_int_gt(n, (int)sizeof(small));
	ck_assert_int_eq(sb_event_to_notice(ev, small, sizeof(small)), -ENOSPC);
	ck_assert_int_eq(sb_event_to_notice(ev, buf, (size_t)n), -ENOSPC);
	ck_assert_int_eq(sb_event_to_notice(ev, buf, (size_t)n + 1), n);
	free(ev);
}
END_TEST

/* The worst event: every string full, every byte needing an escape. */
START_TEST(bounds_hold_for_the_worst_event)
{
	static char file[PATH_MAX], text[PATH_MAX];
	static struct sb_rule_ref ref = { file, 1, text };
	struct sb_event *ev = new_event(SB_EV_PATH);
	char *buf = malloc(SB_LOG_LINE_MAX);
	cJSON *o;
	int n;

	memset(ev->path, '\x01', sizeof(ev->path) - 1);
	ev->path[0] = '/';
	memset(ev->tip, '\x02', sizeof(ev->tip) - 1);
	memset(ev->pyloc, '\x03', sizeof(ev->pyloc) - 1);
	memset(ev->importing, '\x04', sizeof(ev->importing) - 1);
	memset(file, '\x05', sizeof(file) - 1);
	memset(text, '\x06', sizeof(text) - 1);
	ev->rule = &ref;
	n = sb_event_to_json(ev, buf, SB_LOG_LINE_MAX);
	ck_assert_int_gt(n, 0);
	o = cJSON_Parse(buf);
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq((int)strlen(sfield(o, "object")), (int)sizeof(ev->path) - 1);
	cJSON_Delete(o);
	n = sb_event_to_notice(ev, buf, SB_NOTICE_MAX);
	ck_assert_int_gt(n, 0);
	ck_assert_ptr_null(memchr(buf, '\n', (size_t)n - 1));
	ck_assert_ptr_nonnull(strstr(buf, "..."));
	free(buf);
	free(ev);
}
END_TEST

START_TEST(category_names_round_trip)
{
	for (int c = 0; c < SB_API__COUNT; c++) {
		const char *name = sb_api_category_name(c);

		ck_assert_ptr_nonnull(name);
		ck_assert_int_eq(sb_api_category_from_name(name), c);
	}
	ck_assert_ptr_null(sb_api_category_name(-1));
	ck_assert_ptr_null(sb_api_category_name(SB_API__COUNT));
	ck_assert_int_eq(sb_api_category_from_name("nope"), -1);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("json");

	tcase_add_test(tc, json_path_event_fields);
	tcase_add_test(tc, json_allowed_event_is_minimal);
	tcase_add_loop_test(tc, json_escapes_hostile_paths, 0, (int)(sizeof(hostile) / sizeof(hostile[0])));
	tcase_add_test(tc, json_enospc_every_short_buffer);
	tcase_add_test(tc, json_net_event);
	tcase_add_test(tc, json_agent_events);
	suite_add_tcase(s, tc);
	tc = tcase_create("notice");
	tcase_add_test(tc, notice_path_denied_with_home_tip);
	tcase_add_test(tc, notice_supervisor_tip_wins);
	tcase_add_test(tc, notice_path_no_wide_tip);
	tcase_add_test(tc, notice_path_rules);
	tcase_add_test(tc, notice_hostile_path_stays_one_line);
	tcase_add_test(tc, notice_net);
	tcase_add_test(tc, notice_process_and_agent);
	tcase_add_test(tc, notice_enospc);
	tcase_add_test(tc, bounds_hold_for_the_worst_event);
	tcase_add_test(tc, category_names_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(log_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
