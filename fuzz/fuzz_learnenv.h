/* Shared by the learner targets (fuzz_learn_merge, fuzz_agent_msg): a
 * private directory, loading a rule file there, and the promise that a
 * rule file written by the learner loads again.  Header-only. */
#ifndef SB_FUZZ_LEARNENV_H
#define SB_FUZZ_LEARNENV_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "fuzz_input.h"
#include "learn.h"
#include "policy.h"

struct lenv {
	char dir[128];		/* private directory (tmpfs when there is one: the writer fsyncs) */
	char cfg[160];		/* <dir>/.py-sandboxes */
	char hosts[160];
	char tmpl[PATH_MAX];	/* the source tree's template */
};

static char *lenv_env[] = {
	"HOME=/nonexistent-home", "PATH=/usr/bin:/bin", "TMPDIR=/nonexistent-tmp", "LANG=C.UTF-8",
	"API_KEY=k", "PORT=8080", NULL,
};

static inline void lenv_init(struct lenv *e, const char *name)
{
	char tmpl[128];
	FILE *f;

	snprintf(tmpl, sizeof(tmpl), "%s/%s.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", name);
	if (!mkdtemp(tmpl))
		abort();
	snprintf(e->dir, sizeof(e->dir), "%s", tmpl);
	snprintf(e->cfg, sizeof(e->cfg), "%s/.py-sandboxes", e->dir);
	snprintf(e->hosts, sizeof(e->hosts), "%s/hosts", e->dir);
	snprintf(e->tmpl, sizeof(e->tmpl), "%s/rules/py-sandboxes.template", SB_SRCDIR);
	f = fopen(e->hosts, "w");
	if (!f)
		abort();
	fputs("127.0.0.1 localhost\n192.0.2.1 example.com\n2001:db8::1 v6.example.com\n", f);
	fclose(f);
}

/* Load <dir>/.py-sandboxes as python-sb would from <dir>.  NULL when it
 * does not load; the diagnostics are printed when `loud`. */
static inline struct sb_policy *lenv_load(const struct lenv *e, bool loud)
{
	struct sb_load_opts o = {
		.config_path = e->cfg, .envp = lenv_env, .cwd = e->dir, .template_path = e->tmpl,
		.hosts_path = e->hosts, .no_dns = true,
	};
	struct sb_policy *p = NULL;
	struct sb_diag d;

	sb_diag_init(&d);
	if (sb_policy_load(&o, &p, &d) != 0) {
		for (size_t i = 0; loud && i < d.n; i++) {
			char *s = sb_diag_format(&d.items[i]);

			fprintf(stderr, "load: %s\n", s ? s : "?");
			free(s);
		}
		p = NULL;
	}
	sb_diag_free(&d);
	return p;
}

static inline struct sb_learn *lenv_learner(const struct lenv *e, const struct sb_policy *p)
{
	struct sb_learn_opts o = {
		.policy = p, .envp = lenv_env, .cwd = e->dir, .python_prefix = "/nonexistent-prefix",
		.python_exe = "/nonexistent-prefix/bin/python3", .hosts_path = e->hosts,
	};
	struct sb_learn *l = NULL;

	if (sb_learn_new(&o, &l) != 0)
		abort();
	return l;
}

/* The whole file, NUL-terminated (*len without the NUL); NULL if missing. */
static inline char *lenv_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s = NULL;
	size_t n = 0, cap = 0, k;
	char chunk[4096];

	if (!f)
		return NULL;
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (n + k + 1 > cap) {
			cap = (n + k + 1) * 2;
			if (!(s = realloc(s, cap)))
				abort();
		}
		memcpy(s + n, chunk, k);
		n += k;
	}
	fclose(f);
	if (!s && !(s = calloc(1, 1)))
		abort();
	s[n] = '\0';
	*len = n;
	return s;
}

/* Only the writer's own files may be left in the directory: the rule file,
 * its backups, the hosts file and the directories the target made. */
static inline void lenv_check_no_temp(const struct lenv *e)
{
	DIR *d = opendir(e->dir);
	struct dirent *de;

	if (!d)
		abort();
	while ((de = readdir(d))) {
		if (de->d_name[0] != '.' || !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, ".py-sandboxes") || !strncmp(de->d_name, ".py-sandboxes.old", 17))
			continue;
		fprintf(stderr, "left behind: %s\n", de->d_name);
		FUZZ_CHECK(!"the atomic write leaves no temporary file");
	}
	closedir(d);
}

/* Remove every regular file of the directory but the hosts file. */
static inline void lenv_clean(const struct lenv *e)
{
	DIR *d = opendir(e->dir);
	struct dirent *de;
	char path[PATH_MAX];

	if (!d)
		abort();
	while ((de = readdir(d))) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", e->dir, de->d_name);
		if (strcmp(de->d_name, "hosts") && lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
			unlink(path);
	}
	closedir(d);
}

#endif
