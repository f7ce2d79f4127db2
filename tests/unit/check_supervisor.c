/* Unit tests of the supervisor's syscall table (rules/syscalls.in) and filter
 * generation.  The live behaviour is tested by tests/integration/sup-*.py. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sup_priv.h"
#include "policy_text.h"

/* Calls that must never reach the listener (sydbox postmortem 2021-06-23). */
static const char *const never_notified[] = {
	"exit", "exit_group", "wait4", "waitid", "rt_sigreturn", "rt_sigaction", "rt_sigprocmask",
	"read", "write", "close", "mmap", "futex",
};

/* The legacy calls aarch64 does not have (asm-generic dropped them). */
static const char *const not_on_aarch64[] = {
	"open", "creat", "stat", "lstat", "access", "readlink", "mkdir", "unlink", "rmdir", "rename",
	"link", "symlink", "chmod", "chown", "lchown", "utime", "utimes", "futimesat", "mknod",
	"fork", "vfork", "uselib", "iopl", "ioperm", "inotify_add_watch",
};

static bool listed(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return true;
	return false;
}

START_TEST(table_rows_resolve_native)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		const struct sb_syscall_row *r = &sb_syscall_rows[i];

		if (!r->name[0])
			continue;
		ck_assert_msg(sb_syscall_row_nr(r) >= 0, "%s does not resolve on this architecture", r->name);
	}
}
END_TEST

START_TEST(table_rows_resolve_aarch64)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		const struct sb_syscall_row *r = &sb_syscall_rows[i];
		int nr;

		if (!r->name[0] || r->nr >= 0)
			continue;
		nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_AARCH64, r->name);
		if (listed(r->name, not_on_aarch64, sizeof(not_on_aarch64) / sizeof(*not_on_aarch64)))
			continue;
		ck_assert_msg(nr >= 0, "%s does not resolve on aarch64", r->name);
	}
}
END_TEST

START_TEST(table_one_handler_per_call)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		for (size_t j = i + 1; j < sb_syscall_nrows; j++) {
			const struct sb_syscall_row *a = &sb_syscall_rows[i], *b = &sb_syscall_rows[j];

			if (!a->name[0] || strcmp(a->name, b->name) != 0)
				continue;
			ck_assert_msg(a->handler == b->handler, "%s has two handlers", a->name);
		}
	}
}
END_TEST

START_TEST(table_never_notifies_exit_and_signals)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		const struct sb_syscall_row *r = &sb_syscall_rows[i];

		ck_assert_msg(!listed(r->name, never_notified, sizeof(never_notified) / sizeof(*never_notified)),
			      "%s must stay in the kernel", r->name);
	}
}
END_TEST

START_TEST(table_every_notified_call_has_a_kind)
{
	for (size_t i = 0; i < sb_syscall_nrows; i++) {
		const struct sb_syscall_row *r = &sb_syscall_rows[i];

		if (r->handler)
			ck_assert_msg(r->kind >= 0, "%s: notified without an event kind", r->name);
		else
			ck_assert_msg(r->action == SB_FA_ERRNO || r->action == SB_FA_ERRNO_IF ||
				      r->action == SB_FA_ERRNO_IF_NE,
				      "%s: notified without a handler", r->name);
	}
}
END_TEST


/* Filters for every mode, with and without the process categories. */
static const struct {
	const char *policy;
	enum sb_mode mode;
} filter_cases[] = {
	{ "expose-ro=/tmp\n", SB_MODE_ENFORCE },
	{ "expose-ro=/tmp\n", SB_MODE_LEARN },
	{ "expose-ro=/tmp\n", SB_MODE_AUDIT },
	{ "python-api=ALLOW:threads\npython-api=ALLOW:process-exec\n", SB_MODE_ENFORCE },
	{ "python-api=ALLOW:*\n", SB_MODE_ENFORCE },
};

START_TEST(filter_builds)
{
	struct sb_policy *p = policy_from_text(filter_cases[_i].policy);
	struct sb_filter f;

	ck_assert_int_eq(sb_filter_build(p, filter_cases[_i].mode, &f), 0);
	ck_assert_ptr_nonnull(f.insns);
	ck_assert_int_gt(f.len, 20);
	ck_assert_int_le(f.len, 4096);
	sb_filter_free(&f);
	ck_assert_ptr_null(f.insns);
	sb_policy_free(p);
}
END_TEST

/* Granting categories keeps their calls in the kernel: a smaller program. */
START_TEST(filter_grants_shrink)
{
	struct sb_policy *none = policy_from_text("expose-ro=/tmp\n"), *all = policy_from_text("python-api=ALLOW:*\n");
	struct sb_filter a, b;

	ck_assert_int_eq(sb_filter_build(none, SB_MODE_ENFORCE, &a), 0);
	ck_assert_int_eq(sb_filter_build(all, SB_MODE_ENFORCE, &b), 0);
	ck_assert_int_lt(b.len, a.len);
	sb_filter_free(&a);
	sb_filter_free(&b);
	sb_policy_free(none);
	sb_policy_free(all);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("supervisor");
	TCase *t = tcase_create("table");

	tcase_add_test(t, table_rows_resolve_native);
	tcase_add_test(t, table_rows_resolve_aarch64);
	tcase_add_test(t, table_one_handler_per_call);
	tcase_add_test(t, table_never_notifies_exit_and_signals);
	tcase_add_test(t, table_every_notified_call_has_a_kind);
	suite_add_tcase(s, t);
	t = tcase_create("filter");
	tcase_add_loop_test(t, filter_builds, 0, sizeof(filter_cases) / sizeof(filter_cases[0]));
	tcase_add_test(t, filter_grants_shrink);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
