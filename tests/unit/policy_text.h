/* A policy loaded from a string, for unit tests that need one but do not
 * test the loader (check_filter, check_supervisor).  Header-only like
 * pydebug_fixtures.h: each test program includes it once. */
#ifndef POLICY_TEXT_H
#define POLICY_TEXT_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "policy.h"

/* The rule file is written to a temporary file, loaded (no DNS), removed. */
static inline struct sb_policy *policy_from_text(const char *text)
{
	char path[] = "/tmp/sb-unit-policy-XXXXXX";
	int fd = mkstemp(path);
	struct sb_load_opts o = { .config_path = path, .cwd = "/tmp", .no_dns = true };
	struct sb_policy *p = NULL;
	struct sb_diag d;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	sb_diag_init(&d);
	ck_assert_int_eq(sb_policy_load(&o, &p, &d), 0);
	sb_diag_free(&d);
	unlink(path);
	return p;
}

#endif
