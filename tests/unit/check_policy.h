/* Shared helpers of the policy unit tests (tests/unit/check_policy*.c).
 *
 * Each test runs in its own forked process (Check's default) with a fresh
 * temporary directory holding the rule file ".py-sandboxes"; that directory
 * is the cwd handed to the loader, so messages name ".py-sandboxes(<line>)". */
#ifndef CHECK_POLICY_H
#define CHECK_POLICY_H

#include <check.h>
#include <stdbool.h>

#include "diag.h"
#include "policy.h"

#define TP_ENV_MAX 64

struct tp {
	char dir[256];		/* canonical temp dir (also the cwd given to the loader) */
	char *env[TP_ENV_MAX + 1];
	size_t n_env;
	const char *cli[32];
	size_t n_cli;
	struct sb_load_opts opts;
	struct sb_diag diag;
	struct sb_policy *p;
	int rc;
};

extern struct tp tp;

void tp_setup(void);
void tp_teardown(void);

/* Paths and files under the temp dir. */
const char *tp_path(const char *rel);	/* static rotating buffers */
void tp_write(const char *rel, const char *text);
void tp_mkdir(const char *rel);
void tp_setenv(const char *kv);		/* "K=V" into the loader's envp */
void tp_cli(const char *rule);		/* a command-line rule */

/* Write `text` as .py-sandboxes (NULL: no file) and load it. */
int tp_load(const char *text);

/* Diagnostics. */
bool tp_diag_has(enum sb_diag_level lvl, const char *formatted);
char *tp_diag_dump(void);	/* every item, one per line (malloc'ed) */
#define ck_assert_diag(lvl, s)                                                                     \
	do {                                                                                       \
		char *_d = tp_diag_dump();                                                         \
		ck_assert_msg(tp_diag_has((lvl), (s)), "missing diag <%s>; got:\n%s", (s), _d);    \
		free(_d);                                                                          \
	} while (0)
#define ck_assert_loaded()                                                                         \
	do {                                                                                       \
		char *_d = tp_diag_dump();                                                         \
		ck_assert_msg(tp.rc == 0 && tp.p, "load failed rc=%d:\n%s", tp.rc, _d);            \
		free(_d);                                                                          \
	} while (0)

/* Suites. */
TCase *tcase_lex(void);
TCase *tcase_lock(void);
TCase *tcase_keys(void);
TCase *tcase_env(void);
TCase *tcase_paths(void);
TCase *tcase_net(void);
TCase *tcase_api(void);
TCase *tcase_eval(void);
TCase *tcase_describe(void);

#endif
