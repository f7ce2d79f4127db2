/* Every key: valid forms load cleanly, invalid forms give the exact upstream
 * text at the right file(line). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check_policy.h"

/* Lines that must load with no diagnostic at all.  The temp dir holds the
 * directories d/ and d/sub/ and the file afile. */
static const char *const valid_cases[] = {
	"py-sandbox=",
	"py-sandbox=TRUE",
	"py-sandbox=none",
	"os-sandbox= Landlock ",
	"os-sandbox=none",
	"os-sandbox=subprocess",
	"os-sandbox=unshare",
	"os-sandbox=firejail",
	"os-sandbox=qemu",
	"os-sandbox=auto",
	"remote-result-guard=off",
	"remote-result-guard=",
	"remote-result-mode=data_only",
	"remote-result-mode=default",
	"port=0",
	"port=65535",
	"port= 48000 ",
	"env=A=",
	"env=A=b=c",
	"env=*_KEY=${*_KEY}",
	"env=*_KEY=fixed",
	"env=TMPDIR=${TMPDIR:-${TEMP:-${TMP:-/tmp}}}",
	"unenv=A*",
	"unenv=HOME",
	"expose-ro=.",
	"expose-ro=~",
	"expose-rw=./d/",
	"expose-ro=./d\nexpose-ro=d/../d",
	"expose-ro=d\nexpose-rw=d/sub",
	"ignore=*.log",
	"ignore=/abs/*",
	"ignore=data/*.csv",
	"net=ALLOW|tcp|0.0.0.0/0|443|OUT",
	"net=DENY|*|10.0.0.0/8|*|OUT",
	"net=ALLOW|TCP,udp|::1|80,443|IN,OUT",
	"net=ALLOW|any|*|8000-|*",
	"net=ALLOW|udp|192.168.1.7/24||OUT",
	"net=ALLOW|tcp|10.0.0.1/255.0.0.0|1-2|IN",
	"net=ALLOW|tcp|localhost|80|OUT",
	"net=ALLOW|tcp|ip6-localhost|80, 81 ,|OUT",
	"net=ALLOW| tcp , udp |fe80::/10|*|OUT,IN",
	"python-import=*",
	"python-import=json, re ,os",
	"python-import=",
	"python-api=ALLOW:*",
	"python-api=DENY:process-exec, os.system",
	"python-api=ALLOW: threads , native",
	"python-api=DENY:*",
	"python-api=ALLOW:builtins.eval",
	"eval-syntax=arith, compare, Lambda",
	"eval-syntax=DENY:loop",
	"eval-attribute=DENY:format, format_map",
	"eval-attribute=str-methods, up*",
	"eval-magic=__len__",
	"eval-import=math",
	"eval-namespace=closed",
	"eval-timeout=250ms",
	"eval-timeout=1.5",
	"eval-timeout=2m",
	"eval-max-iterations=100_000",
	"eval-max-alloc=10MB",
	"eval-max-alloc=1_000",
	"eval-max-call-depth:calc=5",
	"eval-timeout=1s\neval-timeout:calc=2s",
	"bwrap.share-net=yes",
	"firejail.net=docker0",
	"unshare.map-root-user=",
	"qemu.memory=2G",
	"qemu.unknown_key=1",
	"limit-as=2G",
	"limit-fsize=512m",
	"limit-cpu=unlimited",
	"limit-nproc=64",
	"exec=/bin/sh",
	"exec=/usr/bin/*",
	"exec=sh",
	"learn=false",
	"{ a template placeholder }",
};

START_TEST(key_valid)
{
	char *d;

	tp_mkdir("d/sub");
	tp_write("afile", "x");
	tp_setenv("PATH=/usr/bin:/bin");
	tp_load(valid_cases[_i]);
	d = tp_diag_dump();
	ck_assert_msg(tp.rc == 0 && tp.diag.n == 0, "<%s> rc=%d diags:\n%s", valid_cases[_i], tp.rc, d);
	free(d);
}
END_TEST

#define FMT "Format: <DENY,ALLOW>|<TCP,UDP list or *>|<ip/mask>, *|<port list>|<IN, OUT>."
#define CATS "['deserialization', 'dynamic-code', 'introspection', 'native', 'privileges', 'process-control', " \
	     "'process-exec', 'threads']"

static const struct {
	const char *text;
	const char *diag;	/* the whole formatted error */
} invalid_cases[] = {
	/* general keys */
	{ "py-sandbox=maybe", ".py-sandboxes(1): Invalid value 'maybe' for py-sandbox. Use true or false." },
	{ "py-sandbox=YES", ".py-sandboxes(1): Invalid value 'yes' for py-sandbox. Use true or false." },
	{ "os-sandbox=docker", ".py-sandboxes(1): Invalid os-sandbox 'docker'." },
	{ "os-sandbox=_task", ".py-sandboxes(1): Invalid os-sandbox '_task'." },
	{ "os-sandbox=", ".py-sandboxes(1): Invalid os-sandbox ''." },
	{ "remote-result-guard=maybe",
	  ".py-sandboxes(1): Invalid value 'maybe' for remote-result-guard. Use true or false." },
	{ "remote-result-mode=pickle",
	  ".py-sandboxes(1): Invalid value 'pickle' for remote-result-mode. Use objects or data-only." },
	{ "port=-1", ".py-sandboxes(1): Port must be a positive value" },
	{ "port=abc", ".py-sandboxes(1): Port must be a positive value" },
	{ "port=70000", ".py-sandboxes(1): Port must be a positive value" },
	{ "port=", ".py-sandboxes(1): Port must be a positive value" },
	/* environment */
	{ "env=FOO", ".py-sandboxes(1): Detect a missing '=' in rule: env=FOO." },
	{ "env==x", ".py-sandboxes(1): In 'env==x', the variable name is empty." },
	{ "env=A=${B:C}", ".py-sandboxes(1): In 'env=A=${B:C}', invalid substitution '${B:C}': use ${NAME} or ${NAME:-default}." },
	{ "env=A=${*_K}", ".py-sandboxes(1): In 'env=A=${*_K}', a pattern in the value needs a pattern in the name." },
	{ "unenv=", ".py-sandboxes(1): In 'unenv=', the variable name is empty." },
	/* files */
	{ "expose-ro=a,b", ".py-sandboxes(1): In 'expose-ro=a,b', expected a single path (no comma)." },
	{ "expose-rw=", ".py-sandboxes(1): In 'expose-rw=', path must be set." },
	{ "expose-ro=./missing", ".py-sandboxes(1): In 'expose-ro=./missing', path 'missing' must exist." },
	{ "expose-ro=d/../nope/x", ".py-sandboxes(1): In 'expose-ro=d/../nope/x', path 'nope/x' must exist." },
	{ "expose-ro=/nonexistent/x", ".py-sandboxes(1): In 'expose-ro=/nonexistent/x', path '/nonexistent/x' must exist." },
	{ "expose-ro=./afile", ".py-sandboxes(1): In 'expose-ro=./afile', path must be a directory." },
	{ "expose-ro=./d\n#\nexpose-rw=d/", ".py-sandboxes(3): In 'expose-rw=d/', invalidate another rule from '.py-sandboxes(1)'." },
	{ "ignore=", ".py-sandboxes(1): In 'ignore=', pattern must be set." },
	/* network */
	{ "net=ERROR", ".py-sandboxes(1): 'net=ERROR' has incorrect number of parts separated by '|'. Expected 5, got 1. " FMT },
	{ "net=ALLOW|tcp|1.2.3.4|80",
	  ".py-sandboxes(1): 'net=ALLOW|tcp|1.2.3.4|80' has incorrect number of parts separated by '|'. Expected 5, got 4. " FMT },
	{ "net=ERROR|tcp|127.0.0.1/32|8000|IN",
	  ".py-sandboxes(1): 'net=ERROR|tcp|127.0.0.1/32|8000|IN' use an invalid action. Must be 'ALLOW' or 'DENY'." },
	{ "net=allow|tcp|127.0.0.1|80|IN",
	  ".py-sandboxes(1): 'net=allow|tcp|127.0.0.1|80|IN' use an invalid action. Must be 'ALLOW' or 'DENY'." },
	{ "net=ALLOW||1.2.3.4|80|OUT", ".py-sandboxes(1): 'net=ALLOW||1.2.3.4|80|OUT' has empty socket specs." },
	{ "net=ALLOW|tcp,any|1.2.3.4|80|OUT",
	  ".py-sandboxes(1): In 'net=ALLOW|tcp,any|1.2.3.4|80|OUT', 'ANY' must be used alone, not combined with other specifiers." },
	{ "net=ALLOW|*,udp|1.2.3.4|80|OUT",
	  ".py-sandboxes(1): In 'net=ALLOW|*,udp|1.2.3.4|80|OUT', '*' must be used alone, not combined with other specifiers." },
	{ "net=ALLOW|sctp|1.2.3.4|80|OUT",
	  ".py-sandboxes(1): 'net=ALLOW|sctp|1.2.3.4|80|OUT' has unknown socket specifier 'SCTP'. Valid specifiers: any, TCP, UDP." },
	{ "net=ALLOW|tcp| |80|OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp| |80|OUT', network part must be set." },
	{ "net=ALLOW|tcp|1.2.3.4|80|out", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|80|out', direction is not 'IN' or 'OUT'." },
	{ "net=ALLOW|tcp|1.2.3.4|80|IN, OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|80|IN, OUT', direction is not 'IN' or 'OUT'." },
	{ "net=ALLOW|tcp|1.2.3.4|80|OUT|x", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|80|OUT|x', direction is not 'IN' or 'OUT'." },
	{ "net=ALLOW|tcp|1.2.3.4|80|", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|80|', direction is not 'IN' or 'OUT'." },
	{ "net=ALLOW|tcp|1.2.3.4|abc|OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|abc|OUT', invalid port list." },
	{ "net=ALLOW|tcp|1.2.3.4|-80|OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|-80|OUT', invalid port list." },
	{ "net=ALLOW|tcp|1.2.3.4|80-70|OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|80-70|OUT', invalid port list." },
	{ "net=ALLOW|tcp|1.2.3.4|70000|OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|70000|OUT', invalid port list." },
	{ "net=ALLOW|tcp|1.2.3.4|1-70000|OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|1-70000|OUT', invalid port list." },
	{ "net=ALLOW|tcp|1.2.3.4|80,*|OUT", ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4|80,*|OUT', invalid port list." },
	{ "net=DENY|tcp|no.such.host.invalid|80|OUT",
	  ".py-sandboxes(1): In 'net=DENY|tcp|no.such.host.invalid|80|OUT', invalid network specification. That does not resolve to any network." },
	/* python-import has only warnings; python-api: */
	{ "python-api=os.system",
	  ".py-sandboxes(1): In 'python-api=os.system', expected the form 'ACTION:target', with ACTION in ['ALLOW', 'DENY']." },
	{ "python-api=PERMIT:threads",
	  ".py-sandboxes(1): In 'python-api=PERMIT:threads', unknown action 'PERMIT', expected one of ['ALLOW', 'DENY']." },
	{ "python-api=ALLOW:threads, DENY:native",
	  ".py-sandboxes(1): In 'python-api=ALLOW:threads, DENY:native', one action per line: do not mix ALLOW and DENY." },
	{ "python-api=ALLOW:threads,deny",
	  ".py-sandboxes(1): In 'python-api=ALLOW:threads,deny', one action per line: do not mix ALLOW and DENY." },
	{ "python-api=ALLOW:", ".py-sandboxes(1): In 'python-api=ALLOW:', empty target." },
	{ "python-api=ALLOW:threads,,native", ".py-sandboxes(1): In 'python-api=ALLOW:threads,,native', empty target." },
	{ "python-api=ALLOW:thread",
	  ".py-sandboxes(1): In 'python-api=ALLOW:thread', unknown category 'thread', expected one of " CATS "." },
	{ "python-api=DENY:os.sistem", ".py-sandboxes(1): In 'python-api=DENY:os.sistem', 'os.sistem' is not a registered sensitive function." },
	{ "python-api=ALLOW:dynamic-code\neval-call=len",
	  ".py-sandboxes(1): In 'python-api=ALLOW:dynamic-code', granting dynamic-code turns the eval guard off: it cannot be combined with eval-* rules." },
	/* eval */
	{ "eval-syntax=lop", ".py-sandboxes(1): In 'eval-syntax=lop', unknown syntax token 'lop', closest known token is 'loop'." },
	{ "eval-syntax=Xyzzy123", ".py-sandboxes(1): In 'eval-syntax=Xyzzy123', unknown syntax token 'Xyzzy123'." },
	{ "eval-syntax=arith*", ".py-sandboxes(1): In 'eval-syntax=arith*', a pattern is not accepted on eval-syntax: the vocabulary is finite." },
	{ "eval-call=len, DENY:eval",
	  ".py-sandboxes(1): In 'eval-call=len, DENY:eval', DENY: applies to a whole line; put `eval-call=DENY:eval` on a line of its own." },
	{ "eval-call=len,,x", ".py-sandboxes(1): In 'eval-call=len,,x', empty target." },
	{ "eval-timout=2s", ".py-sandboxes(1): In 'eval-timout=2s', unknown key 'eval-timout', closest known token is 'eval-timeout'." },
	{ "eval-timeout=2s\neval-timeout=3s",
	  ".py-sandboxes(2): In 'eval-timeout=3s', eval-timeout is set twice in this profile (already at line 1): a scalar is not a set." },
	{ "eval-timeout=abc", ".py-sandboxes(1): In 'eval-timeout=abc', could not convert string to float: 'abc'" },
	{ "eval-max-nodes=5k", ".py-sandboxes(1): In 'eval-max-nodes=5k', invalid literal for int() with base 10: '5k'" },
	{ "eval-max-depth=DENY:3", ".py-sandboxes(1): In 'eval-max-depth=DENY:3', eval-max-depth: `DENY:` and patterns apply to list keys only." },
	{ "eval-namespace=open",
	  ".py-sandboxes(1): In 'eval-namespace=open', eval-namespace: unknown mode 'open', expected one of ['adaptive', 'closed', 'caller']." },
	{ "eval-max-alloc=-1MB", ".py-sandboxes(1): In 'eval-max-alloc=-1MB', eval-max-alloc: the value must not be negative." },
	/* providers, limits, exec */
	{ "docker.net=x", ".py-sandboxes(1): In 'docker.net=x', unknown provider 'docker'. Use one of: bwrap, firejail, qemu, unshare." },
	{ "landlock.x=1", ".py-sandboxes(1): In 'landlock.x=1', unknown provider 'landlock'. Use one of: bwrap, firejail, qemu, unshare." },
	{ "limit-as=12Q", ".py-sandboxes(1): Invalid value '12Q' for limit-as. Use a number of bytes (K, M or G suffix allowed) or unlimited." },
	{ "limit-nproc=-1", ".py-sandboxes(1): Invalid value '-1' for limit-nproc. Use a number or unlimited." },
	{ "limit-cpu=10s", ".py-sandboxes(1): Invalid value '10s' for limit-cpu. Use a number or unlimited." },
	{ "limit-nofile=10\nlimit-nofile=20", ".py-sandboxes(1) and .py-sandboxes(2): Multiple limit-nofile parameters." },
	{ "exec=", ".py-sandboxes(1): In 'exec=', path must be set." },
	{ "exec=./nope", ".py-sandboxes(1): In 'exec=./nope', path './nope' must exist." },
	{ "exec=no-such-binary-xyz", ".py-sandboxes(1): In 'exec=no-such-binary-xyz', 'no-such-binary-xyz' was not found in PATH." },
};

START_TEST(key_invalid)
{
	tp_mkdir("d");
	tp_write("afile", "x");
	tp_setenv("PATH=/usr/bin:/bin");
	ck_assert_int_eq(tp_load(invalid_cases[_i].text), -EINVAL);
	ck_assert_ptr_null(tp.p);
	ck_assert_diag(SB_DIAG_ERROR, invalid_cases[_i].diag);
	ck_assert_uint_eq(sb_diag_count(&tp.diag, SB_DIAG_ERROR), 1);
}
END_TEST

static const struct {
	const char *text;
	const char *diag;
} warning_cases[] = {
	{ "net=ALLOW|tcp|no.such.host.invalid|80|OUT",
	  ".py-sandboxes(1): In 'net=ALLOW|tcp|no.such.host.invalid|80|OUT', invalid network specification. That does not "
	  "resolve to any network. Rule ignored: it allows nothing." },
	{ "net=ALLOW|tcp|1.2.3.4/33|80|OUT",
	  ".py-sandboxes(1): In 'net=ALLOW|tcp|1.2.3.4/33|80|OUT', invalid network specification. That does not resolve "
	  "to any network. Rule ignored: it allows nothing." },
	{ "python-import=json, a.b",
	  ".py-sandboxes(1): In 'python-import=json, a.b', 'a.b' is a dotted name: imports are judged on their top-level "
	  "name, so it never matches." },
	{ "eval-call=getattr",
	  ".py-sandboxes(1): eval-call=getattr grants a sensitive builtin: it is neutralised by a guarded shim or reaches "
	  "its own guard, but it widens the reachable surface." },
	{ "eval-attribute=format",
	  ".py-sandboxes(1): eval-attribute=format grants a method that resolves attributes in C from the contents of the "
	  "string: its template is checked at run time, field by field." },
};

START_TEST(key_warning)
{
	ck_assert_int_eq(tp_load(warning_cases[_i].text), 0);
	ck_assert_diag(SB_DIAG_WARNING, warning_cases[_i].diag);
	ck_assert_uint_eq(sb_diag_count(&tp.diag, SB_DIAG_ERROR), 0);
}
END_TEST

static const struct {
	const char *text;
	bool py;
	enum sb_os_sandbox os;
	bool guard;
	enum sb_remote_result_mode mode;
	long port;
} settings_cases[] = {
	{ "port=1", true, SB_OS_AUTO, true, SB_RESULT_DATA_ONLY, 1 },
	{ "py-sandbox=0\nos-sandbox=BWRAP", false, SB_OS_BWRAP, true, SB_RESULT_DATA_ONLY, -1 },
	{ "py-sandbox=false\nos-sandbox=landlock", false, SB_OS_LANDLOCK, true, SB_RESULT_DATA_ONLY, -1 },
	{ "remote-result-guard=0\nremote-result-mode=objects", true, SB_OS_AUTO, false, SB_RESULT_OBJECTS, -1 },
	{ "remote-result-guard=on\nremote-result-mode=data-only", true, SB_OS_AUTO, true, SB_RESULT_DATA_ONLY, -1 },
	{ "os-sandbox=firejail\nport=48000", true, SB_OS_FIREJAIL, true, SB_RESULT_DATA_ONLY, 48000 },
};

START_TEST(settings_values)
{
	const struct sb_settings *st;

	ck_assert_int_eq(tp_load(settings_cases[_i].text), 0);
	st = sb_policy_settings(tp.p);
	ck_assert_int_eq(st->py_sandbox, settings_cases[_i].py);
	ck_assert_int_eq(st->os_sandbox, settings_cases[_i].os);
	ck_assert_int_eq(st->remote_result_guard, settings_cases[_i].guard);
	ck_assert_int_eq(st->remote_result_mode, settings_cases[_i].mode);
	ck_assert_int_eq(st->port, settings_cases[_i].port);
	ck_assert(st->config_exists);
	ck_assert(!st->learn_locked);
}
END_TEST

static const struct {
	const char *text;
	enum sb_limit_kind kind;
	unsigned long long value;
} limit_cases[] = {
	{ "limit-nproc=64", SB_LIMIT_NPROC, 64 },
	{ "limit-as=2G", SB_LIMIT_AS, 2ULL << 30 },
	{ "limit-as=512M", SB_LIMIT_AS, 512ULL << 20 },
	{ "limit-as=300k", SB_LIMIT_AS, 300ULL << 10 },
	{ "limit-fsize=1000", SB_LIMIT_FSIZE, 1000 },
	{ "limit-fsize=1MB", SB_LIMIT_FSIZE, 1ULL << 20 },
	{ "limit-nofile=50", SB_LIMIT_NOFILE, 50 },
	{ "limit-cpu=unlimited", SB_LIMIT_CPU, (unsigned long long)RLIM_INFINITY },
};

START_TEST(limits_values)
{
	const struct sb_settings *st;

	tp_cli("limit-nofile=7");
	ck_assert_int_eq(tp_load(limit_cases[_i].text), 0);
	st = sb_policy_settings(tp.p);
	ck_assert(st->limit_set[limit_cases[_i].kind]);
	if (limit_cases[_i].kind != SB_LIMIT_NOFILE)
		ck_assert_uint_eq(st->limit[limit_cases[_i].kind], limit_cases[_i].value);
	else
		ck_assert_uint_eq(st->limit[SB_LIMIT_NOFILE], 7);	/* the command line wins */
	for (int k = 0; k < SB_LIMIT__COUNT; k++)
		ck_assert(st->limit_set[k] == (k == (int)limit_cases[_i].kind || k == SB_LIMIT_NOFILE));
}
END_TEST

START_TEST(providers_stored)
{
	const struct sb_provider_param *pp;

	ck_assert_int_eq(tp_load("bwrap.share-net=yes\nqemu.bogus=1\nqemu.memory=2G\nunshare.map-root-user=\n"
				 "firejail.seccomp.keep=a,b\n"), 0);
	ck_assert_uint_eq(sb_policy_provider_params(tp.p, &pp), 4);
	ck_assert_str_eq(pp[0].provider, "bwrap");
	ck_assert_str_eq(pp[0].key, "share-net");
	ck_assert_str_eq(pp[0].value, "yes");
	ck_assert_uint_eq(pp[0].ref->line, 1);
	ck_assert_str_eq(pp[1].provider, "qemu");
	ck_assert_str_eq(pp[1].key, "memory");
	ck_assert_str_eq(pp[2].key, "map-root-user");
	ck_assert_str_eq(pp[2].value, "");
	ck_assert_str_eq(pp[3].key, "seccomp.keep");
	ck_assert_str_eq(pp[3].value, "a,b");
}
END_TEST

TCase *tcase_keys(void)
{
	TCase *tc = tcase_create("keys");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, key_valid, 0, sizeof(valid_cases) / sizeof(valid_cases[0]));
	tcase_add_loop_test(tc, key_invalid, 0, sizeof(invalid_cases) / sizeof(invalid_cases[0]));
	tcase_add_loop_test(tc, key_warning, 0, sizeof(warning_cases) / sizeof(warning_cases[0]));
	tcase_add_loop_test(tc, settings_values, 0, sizeof(settings_cases) / sizeof(settings_cases[0]));
	tcase_add_loop_test(tc, limits_values, 0, sizeof(limit_cases) / sizeof(limit_cases[0]));
	tcase_add_test(tc, providers_stored);
	return tc;
}
