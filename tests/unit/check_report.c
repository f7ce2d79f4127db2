/* Unit tests of --report (src/report.c): format selection, deduplication and
 * counts, SARIF locations relative to the working directory, hostile strings,
 * the size cap and the atomic write.  Every document written is parsed back
 * with cJSON and checked by the strict validators of
 * tests/integration/report-validate.py (SARIF 2.1.0 structure, JUnit schema
 * shape, the JSON schema), run with the configured interpreter.
 */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

static char tmpdir[64];
static char oldcwd[PATH_MAX];

/* Each test runs in a fresh directory that is also its working directory,
 * so "relative to the cwd" has a known meaning. */
static void setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_report.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	ck_assert_ptr_nonnull(getcwd(oldcwd, sizeof(oldcwd)));
	ck_assert_int_eq(chdir(tmpdir), 0);
}

static void teardown(void)
{
	char cmd[128];

	if (chdir(oldcwd) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

static struct sb_event *new_event(enum sb_event_kind kind, enum sb_verdict v)
{
	struct sb_event *ev = calloc(1, sizeof(*ev));

	ck_assert_ptr_nonnull(ev);
	ev->ts.tv_sec = 1780000000;
	ev->pid = ev->tid = 4242;
	ev->nr = 257;
	strcpy(ev->syscall, "openat");
	ev->kind = kind;
	ev->verdict = v;
	ev->err = v == SB_DENIED ? ENOENT : 0;
	ev->access = SB_ACC_READ;
	ev->category = -1;
	return ev;
}

static void set_v4(struct sb_event *ev, const char *ip, unsigned port, unsigned dir)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ev->addr;

	s4->sin_family = AF_INET;
	s4->sin_port = htons((uint16_t)port);
	ck_assert_int_eq(inet_pton(AF_INET, ip, &s4->sin_addr), 1);
	ev->proto = SB_PROTO_TCP;
	ev->dir = dir;
	strcpy(ev->syscall, dir == SB_DIR_IN ? "bind" : "connect");
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
	s[n] = '\0';
	fclose(f);
	return s;
}

/* The strict validators (Python, no network). */
static void validate(const char *path)
{
	const char *py = getenv("SB_PYTHON");
	char cmd[3 * PATH_MAX];
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s'", py && *py ? py : "python3", REPORT_VALIDATOR, path);
	st = system(cmd);
	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s is not valid (status %d)", path, st);
}

static struct sb_report *report_at(const char *name)
{
	struct sb_report *r = NULL;

	ck_assert_int_eq(sb_report_new(name, &r), 0);
	ck_assert_ptr_nonnull(r);
	return r;
}

static cJSON *write_and_parse(struct sb_report *r, const char *name, int status, const char *config)
{
	char *text;
	cJSON *doc;

	ck_assert_int_eq(sb_report_write(r, status, config), 0);
	validate(name);
	text = slurp(name);
	doc = cJSON_Parse(text);
	ck_assert_msg(doc != NULL, "not JSON: %s", text);
	free(text);
	return doc;
}

static cJSON *path(cJSON *o, const char *p)
{
	char key[64];

	while (o && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		if (key[0] >= '0' && key[0] <= '9')
			o = cJSON_GetArrayItem(o, atoi(key));
		else
			o = cJSON_GetObjectItemCaseSensitive(o, key);
		p += n + (p[n] == '.');
	}
	return o;
}

static const char *str_at(cJSON *o, const char *p)
{
	cJSON *v = path(o, p);

	ck_assert_msg(cJSON_IsString(v), "%s is not a string", p);
	return v->valuestring;
}

static double num_at(cJSON *o, const char *p)
{
	cJSON *v = path(o, p);

	ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", p);
	return v->valuedouble;
}

/* ---- format selection ------------------------------------------------------ */

static const struct {
	const char *path;
	int format;
} formats[] = {
	{ "out.sarif", SB_REPORT_SARIF }, { "dir/OUT.SARIF", SB_REPORT_SARIF },
	{ "r.xml", SB_REPORT_JUNIT }, { "/tmp/r.Xml", SB_REPORT_JUNIT },
	{ "r.json", SB_REPORT_JSON }, { "a.b.json", SB_REPORT_JSON },
	{ "r.txt", -EINVAL }, { "r.sarif.txt", -EINVAL }, { "sarif", -EINVAL },
	{ ".json", -EINVAL }, { "dir/.xml", -EINVAL }, { "", -EINVAL }, { "r.jsonl", -EINVAL },
};

START_TEST(format_from_extension)
{
	struct sb_report *r = (struct sb_report *)1;
	int rc = sb_report_new(formats[_i].path, &r);

	ck_assert_int_eq(sb_report_format_of(formats[_i].path), formats[_i].format);
	if (formats[_i].format < 0) {
		ck_assert_int_eq(rc, -EINVAL);
		ck_assert_ptr_null(r);
	} else {
		ck_assert_int_eq(rc, 0);
		sb_report_free(r);
	}
}
END_TEST

/* ---- families ---------------------------------------------------------------- */

START_TEST(family_names)
{
	struct sb_event *ev = new_event(SB_EV_PATH, SB_DENIED);

	ck_assert_str_eq(sb_report_family(ev), "file-read");
	ev->access = SB_ACC_READ | SB_ACC_WRITE;
	ck_assert_str_eq(sb_report_family(ev), "file-write");
	ev->kind = SB_EV_NET;
	ev->dir = SB_DIR_OUT;
	ck_assert_str_eq(sb_report_family(ev), "net-connect");
	ev->dir = SB_DIR_IN;
	ck_assert_str_eq(sb_report_family(ev), "net-bind");
	ev->kind = SB_EV_EXEC;
	ck_assert_str_eq(sb_report_family(ev), "exec");
	ev->kind = SB_EV_PROC;
	ck_assert_str_eq(sb_report_family(ev), "process");
	ev->kind = SB_EV_API;
	ck_assert_str_eq(sb_report_family(ev), "python-api");
	ev->kind = SB_EV_UNIX;
	ck_assert_str_eq(sb_report_family(ev), "unix-socket");
	free(ev);
}
END_TEST

/* ---- dedup, counts, levels ----------------------------------------------------- */

START_TEST(dedup_counts_and_levels)
{
	struct sb_report *r = report_at("out.json");
	struct sb_event *ev = new_event(SB_EV_PATH, SB_WOULD_DENY);
	unsigned long events = 0;
	cJSON *doc;

	strcpy(ev->path, "/srv/secret.txt");
	for (int i = 0; i < 3; i++)
		sb_report_add(r, ev);
	ev->verdict = SB_ALLOWED;	/* allowed events are not findings */
	sb_report_add(r, ev);
	ev->verdict = SB_DENIED;
	snprintf(ev->pyloc, sizeof(ev->pyloc), "%s/app/tool.py:7 in load()", tmpdir);
	sb_report_add(r, ev);
	ev->access = SB_ACC_WRITE;	/* another family, same object: another finding */
	sb_report_add(r, ev);
	ck_assert_uint_eq(sb_report_count(r, &events), 2);
	ck_assert_uint_eq(events, 5);

	doc = write_and_parse(r, "out.json", 0, NULL);
	ck_assert_int_eq((int)num_at(doc, "summary.distinct"), 2);
	ck_assert_int_eq((int)num_at(doc, "summary.events"), 5);
	ck_assert_str_eq(str_at(doc, "violations.0.family"), "file-read");
	ck_assert_int_eq((int)num_at(doc, "violations.0.count"), 4);
	ck_assert_int_eq((int)num_at(doc, "violations.0.denied"), 1);
	ck_assert_int_eq((int)num_at(doc, "violations.0.would_deny"), 3);
	ck_assert_str_eq(str_at(doc, "violations.0.verdict"), "denied");
	/* the first event had no location: a later one gives it */
	ck_assert_int_eq((int)num_at(doc, "violations.0.line"), 7);
	ck_assert_str_eq(str_at(doc, "violations.0.function"), "load");
	ck_assert_str_eq(str_at(doc, "violations.0.tip"), "expose-ro=/srv");
	ck_assert_str_eq(str_at(doc, "violations.1.family"), "file-write");
	ck_assert_ptr_null(path(doc, "config")->valuestring);
	cJSON_Delete(doc);
	sb_report_free(r);
	free(ev);
}
END_TEST

/* ---- SARIF ------------------------------------------------------------------------- */

static const struct sb_rule_ref deny_rule = { ".py-sandboxes", 4, "net=DENY|*|10.0.0.0/8|*|OUT" };

static void add_mixed(struct sb_report *r)
{
	struct sb_event *ev = new_event(SB_EV_PATH, SB_DENIED);

	strcpy(ev->path, "/etc/shadow");
	snprintf(ev->pyloc, sizeof(ev->pyloc), "%s/app/tools.py:42 in fetch()", tmpdir);
	sb_report_add(r, ev);
	sb_report_add(r, ev);

	memset(ev->pyloc, 0, sizeof(ev->pyloc));
	ev->kind = SB_EV_NET;
	ev->err = ECONNREFUSED;
	set_v4(ev, "10.255.255.1", 80, SB_DIR_OUT);
	ev->rule = &deny_rule;
	sb_report_add(r, ev);

	ev->rule = NULL;
	ev->verdict = SB_WOULD_DENY;
	ev->kind = SB_EV_API;
	ev->category = 0;	/* process-exec */
	strcpy(ev->syscall, "api");
	strcpy(ev->name, "os.system");
	strcpy(ev->pyloc, "/opt/elsewhere/lib x.py:3 in run()");
	sb_report_add(r, ev);

	ev->kind = SB_EV_EXEC;
	strcpy(ev->path, "/usr/bin/curl");
	strcpy(ev->pyloc, "<string>:1 in <module>()");
	sb_report_add(r, ev);
	free(ev);
}

START_TEST(sarif_structure_and_locations)
{
	struct sb_report *r = report_at("out.sarif");
	cJSON *doc, *res;
	char cfg[128], root[128];

	add_mixed(r);
	snprintf(cfg, sizeof(cfg), "%s/.py-sandboxes", tmpdir);
	doc = write_and_parse(r, "out.sarif", 0, cfg);
	ck_assert_str_eq(str_at(doc, "version"), "2.1.0");
	ck_assert_str_eq(str_at(doc, "runs.0.tool.driver.name"), "python-sb");
	ck_assert_str_eq(str_at(doc, "runs.0.tool.driver.version"), PACKAGE_VERSION);
	snprintf(root, sizeof(root), "file://%s/", tmpdir);
	ck_assert_str_eq(str_at(doc, "runs.0.originalUriBaseIds.SRCROOT.uri"), root);
	ck_assert_int_eq(cJSON_GetArraySize(path(doc, "runs.0.results")), 4);

	/* a denied read located at the Python line, relative to the cwd */
	res = path(doc, "runs.0.results.0");
	ck_assert_str_eq(str_at(res, "ruleId"), "file-read");
	ck_assert_str_eq(str_at(res, "level"), "error");
	ck_assert_int_eq((int)num_at(res, "occurrenceCount"), 2);
	ck_assert_str_eq(str_at(res, "locations.0.physicalLocation.artifactLocation.uri"), "app/tools.py");
	ck_assert_str_eq(str_at(res, "locations.0.physicalLocation.artifactLocation.uriBaseId"), "SRCROOT");
	ck_assert_int_eq((int)num_at(res, "locations.0.physicalLocation.region.startLine"), 42);
	ck_assert_str_eq(str_at(res, "locations.0.logicalLocations.0.name"), "fetch");
	ck_assert_ptr_nonnull(strstr(str_at(res, "message.text"), "/etc/shadow"));
	ck_assert_ptr_nonnull(strstr(str_at(res, "message.text"), "[2 times]"));
	ck_assert_str_eq(str_at(res, "ruleId"),
			 str_at(doc, "runs.0.tool.driver.rules.0.id"));	/* ruleIndex 0 */

	/* no Python location: the deciding rule's line, and it is also related */
	res = path(doc, "runs.0.results.1");
	ck_assert_str_eq(str_at(res, "ruleId"), "net-connect");
	ck_assert_str_eq(str_at(res, "locations.0.physicalLocation.artifactLocation.uri"), ".py-sandboxes");
	ck_assert_int_eq((int)num_at(res, "locations.0.physicalLocation.region.startLine"), 4);
	ck_assert_str_eq(str_at(res, "relatedLocations.0.message.text"), deny_rule.text);
	ck_assert_ptr_nonnull(strstr(str_at(res, "message.text"), "DENIED by explicit rule"));

	/* would-deny is a warning; a path outside the cwd is an absolute, encoded URI */
	res = path(doc, "runs.0.results.2");
	ck_assert_str_eq(str_at(res, "ruleId"), "python-api");
	ck_assert_str_eq(str_at(res, "level"), "warning");
	ck_assert_str_eq(str_at(res, "locations.0.physicalLocation.artifactLocation.uri"),
			 "file:///opt/elsewhere/lib%20x.py");
	ck_assert_ptr_null(path(res, "locations.0.physicalLocation.artifactLocation.uriBaseId"));
	ck_assert_str_eq(str_at(res, "properties.tip"), "python-api=ALLOW:os.system");

	/* code without a file: the rule file, the Python text as the message */
	res = path(doc, "runs.0.results.3");
	ck_assert_str_eq(str_at(res, "ruleId"), "exec");
	ck_assert_str_eq(str_at(res, "locations.0.physicalLocation.artifactLocation.uri"), ".py-sandboxes");
	ck_assert_str_eq(str_at(res, "locations.0.message.text"), "<string>:1 in <module>()");
	cJSON_Delete(doc);
	sb_report_free(r);
}
END_TEST

START_TEST(sarif_empty_run_is_valid)
{
	struct sb_report *r = report_at("empty.sarif");
	cJSON *doc = write_and_parse(r, "empty.sarif", 0, NULL);

	ck_assert_int_eq(cJSON_GetArraySize(path(doc, "runs.0.results")), 0);
	ck_assert_int_eq((int)num_at(doc, "runs.0.invocations.0.exitCode"), 0);
	cJSON_Delete(doc);
	sb_report_free(r);
}
END_TEST

/* ---- JUnit ---------------------------------------------------------------------------- */

START_TEST(junit_one_case_per_family)
{
	struct sb_report *r = report_at("out.xml");
	char *x;

	struct sb_event *ev = new_event(SB_EV_EVAL, SB_WOULD_DENY);

	add_mixed(r);
	/* An evaluated construct no eval-* rule allows: its own family. */
	strcpy(ev->syscall, "eval");
	strcpy(ev->name, "BinOp");
	strcpy(ev->tip, "eval-syntax=BinOp");
	sb_report_add(r, ev);
	free(ev);
	ck_assert_int_eq(sb_report_write(r, 1, ".py-sandboxes"), 0);
	validate("out.xml");
	x = slurp("out.xml");
	ck_assert_ptr_nonnull(strstr(x, "<testsuites name=\"python-sb\" tests=\"12\" failures=\"5\""));
	ck_assert_ptr_nonnull(strstr(x, "<testcase name=\"eval\""));
	ck_assert_ptr_nonnull(strstr(x, "eval-syntax=BinOp"));
	ck_assert_ptr_nonnull(strstr(x, "<testcase name=\"file-read\""));
	ck_assert_ptr_nonnull(strstr(x, "<testcase name=\"dns\" classname=\"python-sb.policy\" time=\"0\"/>"));
	ck_assert_ptr_nonnull(strstr(x, "type=\"would-deny\""));
	ck_assert_ptr_nonnull(strstr(x, "<property name=\"exit_status\" value=\"1\"/>"));
	free(x);
	sb_report_free(r);
}
END_TEST

/* ---- hostile strings ---------------------------------------------------------------------- */

static const char *const hostile[] = {
	"/tmp/a\"b<c>&d'e",
	"/tmp/]]></failure><testcase name=\"x\"/>",
	"/tmp/ctl\x01\x02\x1b[31m\x7f",
	"/tmp/new\nline\ttab\rcr",
	"/tmp/bad\xff\xfe utf8 \xc3\x28 \xed\xa0\x80 \xef\xbf\xbe",
	"/tmp/ok \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	"/tmp/%41 ?#[]@!$&'()*+,;= spaces",
};

START_TEST(hostile_strings_stay_valid)
{
	static const char *const names[] = { "h.sarif", "h.xml", "h.json" };
	struct sb_event *ev = new_event(SB_EV_PATH, SB_DENIED);

	snprintf(ev->path, sizeof(ev->path), "%s", hostile[_i]);
	snprintf(ev->pyloc, sizeof(ev->pyloc), "%s:9 in f\x01()", hostile[_i]);
	snprintf(ev->tip, sizeof(ev->tip), "expose-ro=%s", hostile[_i]);
	for (size_t k = 0; k < 3; k++) {
		struct sb_report *r = report_at(names[k]);

		sb_report_add(r, ev);
		ck_assert_int_eq(sb_report_write(r, 0, hostile[_i]), 0);
		validate(names[k]);	/* parses strictly, so nothing broke out */
		sb_report_free(r);
	}
	free(ev);
}
END_TEST

/* ---- limits ---------------------------------------------------------------------------------- */

START_TEST(cap_counts_dropped_events)
{
	struct sb_report *r = report_at("cap.json");
	struct sb_event *ev = new_event(SB_EV_PATH, SB_DENIED);
	unsigned long events;
	cJSON *doc;

	for (int i = 0; i < SB_REPORT_MAX_ITEMS + 5; i++) {
		snprintf(ev->path, sizeof(ev->path), "/tmp/f%d", i);
		sb_report_add(r, ev);
	}
	ck_assert_uint_eq(sb_report_count(r, &events), SB_REPORT_MAX_ITEMS);
	ck_assert_uint_eq(events, SB_REPORT_MAX_ITEMS + 5);
	/* a known object is still counted once the store is full */
	strcpy(ev->path, "/tmp/f0");
	sb_report_add(r, ev);
	doc = write_and_parse(r, "cap.json", 0, NULL);
	ck_assert_int_eq((int)num_at(doc, "summary.dropped_events"), 5);
	ck_assert_int_eq((int)num_at(doc, "violations.0.count"), 2);
	cJSON_Delete(doc);
	sb_report_free(r);
	free(ev);
}
END_TEST

/* The supervisor's event thread and the agent's thread add at once. */
#define ADDERS 4
#define PER_ADDER 5000

static void *adder(void *arg)
{
	struct sb_report *r = arg;
	struct sb_event *ev = new_event(SB_EV_PATH, SB_WOULD_DENY);

	for (int i = 0; i < PER_ADDER; i++) {
		snprintf(ev->path, sizeof(ev->path), "/tmp/shared%d", i % 50);
		sb_report_add(r, ev);
	}
	free(ev);
	return NULL;
}

START_TEST(concurrent_adds_lose_nothing)
{
	struct sb_report *r = report_at("mt.json");
	pthread_t t[ADDERS];
	unsigned long events = 0;
	cJSON *doc, *v;
	double sum = 0;

	for (int i = 0; i < ADDERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, adder, r), 0);
	for (int i = 0; i < ADDERS; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(sb_report_count(r, &events), 50);
	ck_assert_uint_eq(events, ADDERS * PER_ADDER);
	doc = write_and_parse(r, "mt.json", 0, NULL);
	cJSON_ArrayForEach(v, path(doc, "violations"))
		sum += num_at(v, "count");
	ck_assert_int_eq((int)sum, ADDERS * PER_ADDER);
	cJSON_Delete(doc);
	sb_report_free(r);
}
END_TEST

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

START_TEST(write_is_atomic_and_fails_cleanly)
{
	struct sb_report *r = report_at("missing-dir/out.sarif");
	struct stat before, after;
	char old[8] = "";
	FILE *f;
	int oldfd;

	ck_assert_int_eq(sb_report_write(r, 0, NULL), -ENOENT);
	ck_assert_int_eq(count_entries("."), 0);
	sb_report_free(r);

	f = fopen("out.sarif", "w");
	ck_assert_ptr_nonnull(f);
	fputs("old", f);
	fclose(f);
	/* held open, the old inode cannot be reused by the new file */
	oldfd = open("out.sarif", O_RDONLY);
	ck_assert_int_ge(oldfd, 0);
	ck_assert_int_eq(fstat(oldfd, &before), 0);
	r = report_at("out.sarif");
	ck_assert_int_eq(sb_report_write(r, 0, NULL), 0);
	ck_assert_int_eq(sb_report_write(r, 3, NULL), 0);	/* again: replaced */
	ck_assert_int_eq(stat("out.sarif", &after), 0);
	ck_assert_uint_ne(before.st_ino, after.st_ino);	/* renamed over, not rewritten */
	ck_assert_int_eq(read(oldfd, old, sizeof(old) - 1), 3);
	ck_assert_str_eq(old, "old");
	close(oldfd);
	ck_assert_int_eq(count_entries("."), 1);		/* no temporary left */
	validate("out.sarif");
	sb_report_free(r);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, format_from_extension, 0, (int)(sizeof(formats) / sizeof(formats[0])));
	tcase_add_test(tc, family_names);
	tcase_add_test(tc, dedup_counts_and_levels);
	tcase_add_test(tc, sarif_structure_and_locations);
	tcase_add_test(tc, sarif_empty_run_is_valid);
	tcase_add_test(tc, junit_one_case_per_family);
	tcase_add_loop_test(tc, hostile_strings_stay_valid, 0, (int)(sizeof(hostile) / sizeof(hostile[0])));
	tcase_add_test(tc, cap_counts_dropped_events);
	tcase_add_test(tc, concurrent_adds_lose_nothing);
	tcase_add_test(tc, write_is_atomic_and_fails_cleanly);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(report_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
