/* libFuzzer target: the learn-file merger (sb_learn_write, src/learn.h) on a
 * hostile existing rule file, with learned items both fixed and fuzzed, and
 * the journal an interrupted run leaves (sb_learn_replay).
 *
 * Input: a control byte, then NUL-separated fields: the existing rule file
 * (markers, duplicates, odd lines...), a directory name the "program"
 * creates and uses, an environment variable name, a host name, a module
 * name, a python-api function, a Python location (the "# why:" text), and a
 * learning journal.  Control bits: 1 = no existing file (the template is
 * merged into), 2 = learn the fuzzed items too, 4 = replay the journal
 * first, 8 = make the rule file a symbolic link to another file.
 *
 * As python-sb does, the existing file is loaded as the policy (when it
 * loads), the learner records events against it, and the result is written.
 *
 * Promises checked:
 *  - the write succeeds, atomically: no temporary file is left, the old file
 *    is kept byte for byte as .old (or .old_N), and a file that was a
 *    symbolic link stays one;
 *  - nothing is written, and no backup made, when nothing was new;
 *  - every line of the old file is still there, or commented out as
 *    superseded;
 *  - when the old file loaded, the new one loads too (and so does a file
 *    written from the template). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event.h"
#include "fuzz_input.h"
#include "fuzz_learnenv.h"
#include "learn.h"
#include "policy.h"


static struct lenv env;

struct fields {
	char file[16384], dirname[256], envname[SB_EV_NAME_MAX], host[SB_EV_NAME_MAX];
	char module[SB_EV_NAME_MAX], api[SB_EV_NAME_MAX], why[SB_EV_LOC_MAX], journal[16384];
	size_t file_len, journal_len;
};

static struct sb_event *ev_new(enum sb_event_kind kind, const char *syscall, const char *why)
{
	static struct sb_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.verdict = SB_WOULD_DENY;
	ev.nr = -1;
	ev.category = -1;
	snprintf(ev.syscall, sizeof(ev.syscall), "%s", syscall);
	snprintf(ev.pyloc, sizeof(ev.pyloc), "%s", why);
	return &ev;
}

static void rec_path(struct sb_learn *l, const char *path, unsigned access, const char *why)
{
	struct sb_event *ev = ev_new(SB_EV_PATH, "openat", why);

	snprintf(ev->path, sizeof(ev->path), "%s", path);
	ev->access = access;
	ev->err = ENOENT;
	sb_learn_record(l, ev);
}

static void rec_name(struct sb_learn *l, enum sb_event_kind kind, const char *name, int cat, const char *why)
{
	struct sb_event *ev = ev_new(kind, kind == SB_EV_ENV ? "env" : kind == SB_EV_IMPORT ? "import" : "api", why);

	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->category = cat;
	sb_learn_record(l, ev);
}

static void rec_net(struct sb_learn *l, int family, const char *ip, uint16_t port, const char *host, const char *why)
{
	struct sb_event *ev = ev_new(host ? SB_EV_DNS : SB_EV_NET, host ? "dns" : "connect", why);

	ev->addr.ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ev->addr;
		inet_pton(AF_INET, ip, &in->sin_addr);
		in->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ev->addr;
		inet_pton(AF_INET6, ip, &in6->sin6_addr);
		in6->sin6_port = htons(port);
	}
	ev->proto = SB_PROTO_TCP;
	ev->dir = SB_DIR_OUT;
	if (host)
		snprintf(ev->name, sizeof(ev->name), "%s", host);
	sb_learn_record(l, ev);
}

static void mkdir_p(const char *dir, const char *sub)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	mkdir(path, 0755);
}

/* What every run learns: reads and writes under the launch directory, a
 * program, a connection to a resolved name, environment, imports, api. */
static void learn_fixed(struct sb_learn *l, const char *why)
{
	char path[PATH_MAX];
	struct sb_event *ev;

	snprintf(path, sizeof(path), "%s/data/input.csv", env.dir);
	rec_path(l, path, SB_ACC_READ, why);
	snprintf(path, sizeof(path), "%s/out/result.txt", env.dir);
	rec_path(l, path, SB_ACC_READ | SB_ACC_WRITE, why);
	ev = ev_new(SB_EV_EXEC, "execve", why);
	snprintf(ev->path, sizeof(ev->path), "/usr/bin/env");
	ev->access = SB_ACC_EXEC;
	sb_learn_record(l, ev);
	rec_net(l, AF_INET, "192.0.2.1", 443, "example.com", why);
	rec_net(l, AF_INET, "192.0.2.1", 443, NULL, why);
	rec_net(l, AF_INET6, "::1", 8080, NULL, why);
	rec_name(l, SB_EV_ENV, "API_KEY", -1, why);
	rec_name(l, SB_EV_IMPORT, "json.decoder", -1, why);
	rec_name(l, SB_EV_IMPORT, "requests", -1, why);
	rec_name(l, SB_EV_API, "subprocess.Popen", SB_API_PROCESS_EXEC, why);
	ev = ev_new(SB_EV_PROC, "clone", why);
	ev->category = SB_API_THREADS;
	sb_learn_record(l, ev);
}

/* The fuzzed items: a directory of any name the program made and used,
 * and names of every kind. */
static void learn_fuzzed(struct sb_learn *l, const struct fields *f, uint8_t ctl)
{
	char path[PATH_MAX];

	if (f->dirname[0] && !strchr(f->dirname, '/') && strcmp(f->dirname, ".") && strcmp(f->dirname, "..")) {
		snprintf(path, sizeof(path), "%s/work/%s", env.dir, f->dirname);
		if (mkdir(path, 0755) == 0 || errno == EEXIST) {
			snprintf(path, sizeof(path), "%s/work/%s/f", env.dir, f->dirname);
			rec_path(l, path, ctl & 0x10 ? SB_ACC_READ | SB_ACC_WRITE : SB_ACC_READ, f->why);
		}
	}
	rec_name(l, SB_EV_ENV, f->envname, -1, f->why);
	rec_net(l, AF_INET, "192.0.2.7", 8443, f->host, f->why);
	rec_net(l, AF_INET, "192.0.2.7", 8443, NULL, f->why);
	rec_name(l, SB_EV_IMPORT, f->module, -1, f->why);
	rec_name(l, SB_EV_API, f->api, (ctl >> 5) % (SB_API__COUNT + 1) - 1, f->why);
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, n, f) != n)
		abort();
	fclose(f);
}

/* Each old line is kept verbatim, or commented out as superseded. */
static void check_lines_kept(const char *old, const char *now)
{
	for (const char *l = old; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		bool found = false;

		for (const char *m = now; *m && !found;) {
			const char *mnl = strchr(m, '\n');
			size_t mn = mnl ? (size_t)(mnl - m) : strlen(m);

			found = (mn == n && memcmp(m, l, n) == 0) ||
				(mn > 2 && m[0] == '#' && strstr(m, "# superseded by ") && mn > n &&
				 memmem(m, mn, l + strspn(l, " \t"), n - strspn(l, " \t")) != NULL);
			m = mnl ? mnl + 1 : m + mn;
		}
		if (!found) {
			fprintf(stderr, "line lost: '%.*s'\n", (int)n, l);
			FUZZ_CHECK(!"every old line is kept");
		}
		l = nl ? nl + 1 : l + n;
	}
}

static void split_fields(struct fin *in, struct fields *f)
{
	f->file_len = fin_str(in, f->file, sizeof(f->file));
	fin_str(in, f->dirname, sizeof(f->dirname));
	fin_str(in, f->envname, sizeof(f->envname));
	fin_str(in, f->host, sizeof(f->host));
	fin_str(in, f->module, sizeof(f->module));
	fin_str(in, f->api, sizeof(f->api));
	fin_str(in, f->why, sizeof(f->why));
	f->journal_len = fin_str(in, f->journal, sizeof(f->journal));
}

static void run_one(const struct fields *f, uint8_t ctl)
{
	char target[PATH_MAX], journal[PATH_MAX], backup[PATH_MAX], *msg = NULL, *now, *old;
	bool exists = !(ctl & 1), loaded;
	struct sb_policy *p = NULL;
	struct sb_learn *l;
	struct sb_diag d;
	struct stat st;
	size_t n, oldn;
	int rc;

	lenv_clean(&env);
	mkdir_p(env.dir, "data");
	mkdir_p(env.dir, "out");
	mkdir_p(env.dir, "work");
	snprintf(target, sizeof(target), "%s/real-rules", env.dir);
	if (exists) {
		if (ctl & 8) {
			write_file(target, f->file, f->file_len);
			if (symlink("real-rules", env.cfg) < 0)
				abort();
		} else {
			write_file(env.cfg, f->file, f->file_len);
		}
	}
	p = lenv_load(&env, false);
	loaded = p != NULL;
	l = lenv_learner(&env, p);
	if (ctl & 4) {
		unsigned long items = 0;

		snprintf(journal, sizeof(journal), "%s/journal", env.dir);
		write_file(journal, f->journal, f->journal_len);
		rc = sb_learn_replay(l, journal, &items);
		FUZZ_CHECK(rc == 0 || rc == -ENOMEM || rc == -EIO);
	}
	learn_fixed(l, f->why);
	if (ctl & 2)
		learn_fuzzed(l, f, ctl);

	sb_diag_init(&d);
	rc = sb_learn_write(l, env.cfg, env.tmpl, &msg, &d);
	sb_diag_free(&d);
	FUZZ_CHECK(rc == 0);
	lenv_check_no_temp(&env);
	if (ctl & 8 && exists)
		FUZZ_CHECK(lstat(env.cfg, &st) == 0 && S_ISLNK(st.st_mode));
	snprintf(backup, sizeof(backup), "%s.old", ctl & 8 && exists ? target : env.cfg);
	now = lenv_slurp(env.cfg, &n);
	if (!msg) {
		/* Nothing new: the file is as it was, and no backup. */
		FUZZ_CHECK(exists);
		FUZZ_CHECK(now && n == f->file_len && memcmp(now, f->file, n) == 0);
		FUZZ_CHECK(access(backup, F_OK) < 0);
	} else {
		FUZZ_CHECK(now != NULL);
		if (exists) {
			old = lenv_slurp(backup, &oldn);
			FUZZ_CHECK(old && oldn == f->file_len && memcmp(old, f->file, oldn) == 0);
			free(old);
			check_lines_kept(f->file, now);
		}
		if (loaded || !exists) {
			struct sb_policy *q = lenv_load(&env, true);

			if (!q) {
				fprintf(stderr, "---- before ----\n%s\n---- after ----\n%s\n----\n",
					exists ? f->file : "(template)", now);
				FUZZ_CHECK(!"the merged rule file loads when the old one did");
			}
			sb_policy_free(q);
		}
	}
	free(now);
	free(msg);
	sb_learn_free(l);
	sb_policy_free(p);
	if (ctl & 2 && f->dirname[0] && !strchr(f->dirname, '/')) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/work/%s", env.dir, f->dirname);
		rmdir(path);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fields f;
	struct fin in = { data, size };
	uint8_t ctl;

	if (!env.dir[0])
		lenv_init(&env, "fuzz_learn_merge");
	ctl = fin_u8(&in);
	memset(&f, 0, sizeof(f));
	split_fields(&in, &f);
	run_one(&f, ctl);
	return 0;
}
