/* Unit tests of the kernel layers: Landlock rights and ports computed for
 * each ABI, layer selection from policies, the describe text, bwrap and
 * firejail command lines, the stub's command line and protocol helpers.
 * Nothing here applies a layer to the test process (tests/integration/os-*
 * do, in children). */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock.h"
#include "osl_int.h"
#include "oslayer.h"
#include "policy.h"

extern char **environ;

static char tmp[256];		/* canonical scratch root */
static char fakebin[PATH_MAX];	/* holds fake bwrap / firejail for command lines */

static void mk(const char *rel, bool dir)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", tmp, rel);
	if (dir) {
		ck_assert_int_eq(mkdir(p, 0755), 0);
	} else {
		int fd = open(p, O_CREAT | O_WRONLY, 0755);

		ck_assert_int_ge(fd, 0);
		close(fd);
	}
}

static void setup(void)
{
	char t[] = "/tmp/check_oslayer-XXXXXX";
	char *c;

	ck_assert_ptr_nonnull(mkdtemp(t));
	c = realpath(t, NULL);
	ck_assert_uint_lt(strlen(c), sizeof(tmp));
	snprintf(tmp, sizeof(tmp), "%s", c);
	free(c);
	mk("ro", true);
	mk("ro/inner", true);
	mk("rw", true);
	mk("rw/sub", true);
	mk("file.txt", false);
	mk("bin", true);
	mk("bin/tool-a", false);
	mk("bin/tool-b", false);
	mk("bin/other", false);
	mk("fake", true);
	mk("fake/bwrap", false);
	mk("fake/firejail", false);
	snprintf(fakebin, sizeof(fakebin), "%s/fake", tmp);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

static char *P(const char *rel)
{
	static char buf[8][PATH_MAX];
	static int i;
	char *b = buf[i++ % 8];

	snprintf(b, PATH_MAX, "%s%s%s", tmp, *rel ? "/" : "", rel);
	return b;
}

/* ---- rights per ABI -------------------------------------------------------------- */

static const struct {
	int abi;
	uint64_t fs, net, scopes;
} abi_rows[] = {
	{ 1, 0x1fff, 0, 0 },
	{ 2, 0x3fff, 0, 0 },
	{ 3, 0x7fff, 0, 0 },
	{ 4, 0x7fff, 3, 0 },
	{ 5, 0xffff, 3, 0 },
	{ 6, 0xffff, 3, 3 },
	{ 7, 0xffff, 3, 3 },
};

START_TEST(landlock_rights_per_abi)
{
	ck_assert_uint_eq(sb_ll_fs_rights(abi_rows[_i].abi), abi_rows[_i].fs);
	ck_assert_uint_eq(sb_ll_net_rights(abi_rows[_i].abi), abi_rows[_i].net);
	ck_assert_uint_eq(sb_ll_scopes(abi_rows[_i].abi), abi_rows[_i].scopes);
}
END_TEST

/* One plan over ro, rw, a file and an executable, at each ABI. */
START_TEST(landlock_plan_paths)
{
	int abi = abi_rows[_i].abi;
	struct sb_ll_in_path paths[] = {
		{ P("ro"), SB_ACC_READ },
		{ P("rw"), SB_ACC_READ | SB_ACC_WRITE },
		{ P("file.txt"), SB_ACC_READ | SB_ACC_WRITE },
		{ P("bin/tool-a"), SB_ACC_EXEC },
		{ P("ro"), SB_ACC_READ },		/* duplicates merge */
		{ P("missing"), SB_ACC_READ },		/* no rule, a gap */
	};
	struct sb_ll_input in = { .paths = paths, .n_paths = 6 };
	uint64_t mask = sb_ll_fs_rights(abi);
	struct sb_ll_plan *p;

	ck_assert_int_eq(sb_ll_plan_new(&in, abi, &p), 0);
	ck_assert_int_eq(p->abi, abi);
	ck_assert_uint_eq(p->handled_fs, mask);
	ck_assert_uint_eq(p->n_paths, 4);
	ck_assert(p->gaps & SB_LL_GAP_MISSING_PATH);
	ck_assert(!(p->gaps & SB_LL_GAP_RO_IN_RW));
	/* sorted: bin/tool-a, file.txt, ro, rw */
	ck_assert_str_eq(p->paths[0].path, P("bin/tool-a"));
	ck_assert_uint_eq(p->paths[0].access, (SB_LL_FS_EXECUTE | SB_LL_FS_READ_FILE) & mask);
	ck_assert(!p->paths[1].is_dir);
	ck_assert_uint_eq(p->paths[1].access,
			  (SB_LL_FS_READ_RIGHTS | SB_LL_FS_WRITE_RIGHTS) & mask & SB_LL_FS_FILE_RIGHTS);
	ck_assert_uint_eq(p->paths[2].access, SB_LL_FS_READ_FILE | SB_LL_FS_READ_DIR);
	ck_assert_uint_eq(p->paths[3].access, (SB_LL_FS_READ_RIGHTS | SB_LL_FS_WRITE_RIGHTS) & mask);
	ck_assert_int_eq(!!(p->paths[3].access & SB_LL_FS_REFER), abi >= 2);
	ck_assert_int_eq(!!(p->paths[3].access & SB_LL_FS_TRUNCATE), abi >= 3);
	ck_assert_int_eq(!!(p->paths[3].access & SB_LL_FS_IOCTL_DEV), abi >= 5);
	/* EXECUTE only on the executable */
	ck_assert(!(p->paths[2].access & SB_LL_FS_EXECUTE));
	ck_assert(!(p->paths[3].access & SB_LL_FS_EXECUTE));
	ck_assert(sb_ll_plan_grants(p, P("bin/tool-a"), SB_LL_FS_EXECUTE));
	ck_assert(!sb_ll_plan_grants(p, P("bin/tool-b"), SB_LL_FS_EXECUTE));
	ck_assert(sb_ll_plan_grants(p, P("ro/inner/x"), SB_LL_FS_READ_FILE));
	ck_assert(!sb_ll_plan_grants(p, P("ro/inner/x"), SB_LL_FS_WRITE_FILE));
	ck_assert(sb_ll_plan_grants(p, P("rw/sub/x"), SB_LL_FS_MAKE_REG));
	ck_assert(!sb_ll_plan_grants(p, P("rox"), SB_LL_FS_READ_FILE));	/* a prefix, not a parent */
	ck_assert(!sb_ll_plan_grants(p, "/etc/passwd", SB_LL_FS_READ_FILE));
	sb_ll_plan_free(p);
}
END_TEST

START_TEST(landlock_plan_exec_anywhere_and_ro_in_rw)
{
	struct sb_ll_in_path paths[] = {
		{ P("rw"), SB_ACC_READ | SB_ACC_WRITE },
		{ P("rw/sub"), SB_ACC_READ },
		{ P("ro"), SB_ACC_READ },
	};
	struct sb_ll_input in = { .paths = paths, .n_paths = 3, .exec_anywhere = true };
	struct sb_ll_plan *p;

	ck_assert_int_eq(sb_ll_plan_new(&in, 7, &p), 0);
	ck_assert(p->gaps & SB_LL_GAP_RO_IN_RW);
	ck_assert_str_eq(p->ro_in_rw, P("rw/sub"));
	for (size_t i = 0; i < p->n_paths; i++)
		ck_assert(p->paths[i].access & SB_LL_FS_EXECUTE);
	/* Landlock adds rights down the tree: the nested read-only one stays writable. */
	ck_assert(sb_ll_plan_grants(p, P("rw/sub/f"), SB_LL_FS_WRITE_FILE));
	sb_ll_plan_free(p);
}
END_TEST

START_TEST(landlock_plan_abi_clamped_and_invalid)
{
	struct sb_ll_input in = { 0 };
	struct sb_ll_plan *p;

	ck_assert_int_eq(sb_ll_plan_new(&in, 0, &p), -EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(sb_ll_plan_new(&in, 42, &p), 0);
	ck_assert_int_eq(p->abi, SB_LL_ABI_MAX);
	/* no ALLOW rule at all: TCP is handled and every port refused */
	ck_assert_uint_eq(p->handled_net, SB_LL_NET_BIND_TCP | SB_LL_NET_CONNECT_TCP);
	ck_assert_uint_eq(p->n_ports, 0);
	ck_assert(!sb_ll_plan_port_allowed(p, 443, SB_LL_NET_CONNECT_TCP));
	sb_ll_plan_free(p);
}
END_TEST

static const struct {
	int abi;
	struct sb_ll_in_ports bind[2], conn[2];
	size_t n_bind, n_conn;
	size_t want_rules;
	uint64_t want_handled;
	unsigned want_gaps;
	uint16_t probe;
	bool bind_ok, conn_ok;
} port_rows[] = {
	/* 8080 both ways, 443 out: two rules, 8080 carries both rights */
	{ 7, { { 8080, 8080 } }, { { 443, 443 }, { 8080, 8080 } }, 1, 2, 2, 3, 0, 8080, true, true },
	{ 7, { { 8080, 8080 } }, { { 443, 443 } }, 1, 1, 2, 3, 0, 443, false, true },
	/* a range is one rule per port */
	{ 7, { { 0 } }, { { 8000, 8009 } }, 0, 1, 10, 3, 0, 8005, false, true },
	/* ranges that start and end inside a byte of the port map */
	{ 7, { { 0 } }, { { 3, 20 } }, 0, 1, 18, 3, 0, 17, false, true },
	{ 7, { { 0 } }, { { 65530, 65535 } }, 0, 1, 6, 3, 0, 65535, false, true },
	{ 7, { { 7, 8 } }, { { 0 } }, 1, 0, 2, 3, 0, 8, true, false },
	{ 7, { { 7, 8 } }, { { 0 } }, 1, 0, 2, 3, 0, 9, false, false },
	/* bind port 0 (ephemeral) is a rule like any other */
	{ 7, { { 0, 0 } }, { { 0 } }, 1, 0, 1, 3, 0, 0, true, false },
	/* too many connect ports: connect left to the supervisor, bind still handled */
	{ 7, { { 22, 22 } }, { { 1, 65535 } }, 1, 1, 1, SB_LL_NET_BIND_TCP, SB_LL_GAP_CONNECT_TOO_MANY, 9,
	  false, true },
	{ 7, { { 1024, 65535 } }, { { 443, 443 } }, 1, 1, 1, SB_LL_NET_CONNECT_TCP, SB_LL_GAP_BIND_TOO_MANY,
	  2000, true, false },
	/* ABI 3: no network rules at all */
	{ 3, { { 8080, 8080 } }, { { 443, 443 } }, 1, 1, 0, 0, 0, 9, true, true },
};

START_TEST(landlock_plan_ports)
{
	struct sb_ll_input in = {
		.bind = port_rows[_i].bind, .n_bind = port_rows[_i].n_bind,
		.connect = port_rows[_i].conn, .n_connect = port_rows[_i].n_conn,
	};
	struct sb_ll_plan *p;

	ck_assert_int_eq(sb_ll_plan_new(&in, port_rows[_i].abi, &p), 0);
	ck_assert_uint_eq(p->n_ports, port_rows[_i].want_rules);
	ck_assert_uint_eq(p->handled_net, port_rows[_i].want_handled);
	ck_assert_uint_eq(p->gaps, port_rows[_i].want_gaps);
	ck_assert_int_eq(sb_ll_plan_port_allowed(p, port_rows[_i].probe, SB_LL_NET_BIND_TCP), port_rows[_i].bind_ok);
	ck_assert_int_eq(sb_ll_plan_port_allowed(p, port_rows[_i].probe, SB_LL_NET_CONNECT_TCP),
			 port_rows[_i].conn_ok);
	for (size_t k = 1; k < p->n_ports; k++)
		ck_assert_uint_lt(p->ports[k - 1].port, p->ports[k].port);
	sb_ll_plan_free(p);
}
END_TEST

/* ---- layers from policies ----------------------------------------------------------- */

static struct sb_policy *load_policy(const char *text)
{
	char path[PATH_MAX];
	struct sb_load_opts o = { .config_path = path, .envp = environ, .cwd = tmp, .no_dns = true };
	struct sb_policy *p = NULL;
	struct sb_diag d;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/.py-sandboxes", tmp);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	sb_diag_init(&d);
	rc = sb_policy_load(&o, &p, &d);
	for (size_t i = 0; i < d.n; i++)
		fprintf(stderr, "policy: %s\n", d.items[i].msg);
	ck_assert_int_eq(rc, 0);
	sb_diag_free(&d);
	return p;
}

static int new_layer(struct sb_policy *p, enum sb_mode mode, int abi, struct sb_oslayer **l, struct sb_diag *d)
{
	struct sb_oslayer_args a = {
		.policy = p, .python_exe = "/usr/bin/python3", .mode = mode, .cwd = tmp,
		.self_exe = "/usr/bin/python3", .path_env = fakebin, .flags = SB_OSL_F_NO_SELFTEST, .abi = abi,
	};

	sb_diag_init(d);
	return sb_oslayer_new_ex(&a, l, d);
}

static char *describe(const struct sb_oslayer *l)
{
	char *t = NULL;

	ck_assert_int_eq(sb_oslayer_describe(l, &t), 0);
	return t;
}

static const struct {
	const char *os;
	enum sb_mode mode;
	int abi;		/* what the "kernel" answers (-errno: no Landlock) */
	int want_rc;
	enum sb_osl_kind want_kind;
	size_t want_warnings;
	const char *want_text;	/* in describe, or in the diag for errors */
} select_rows[] = {
	{ "auto", SB_MODE_ENFORCE, 7, 0, SB_OSL_LANDLOCK, 0, "landlock (Landlock ABI 7, selected by os-sandbox=auto)" },
	{ "auto", SB_MODE_ENFORCE, -ENOSYS, 0, SB_OSL_NONE, 1, "this kernel has no Landlock" },
	{ "auto", SB_MODE_ENFORCE, -EOPNOTSUPP, 0, SB_OSL_NONE, 1, "disabled at boot" },
	{ "landlock", SB_MODE_ENFORCE, 3, 0, SB_OSL_LANDLOCK, 0, "TCP connect ports (Landlock ABI 3 < 4)" },
	{ "landlock", SB_MODE_ENFORCE, -EOPNOTSUPP, -ENOTSUP, SB_OSL_NONE, 0, "Hint: add landlock to the kernel's lsm=" },
	{ "landlock", SB_MODE_LEARN, 7, 0, SB_OSL_NONE, 0, "learning runs under the supervisor alone" },
	{ "landlock", SB_MODE_AUDIT, 7, 0, SB_OSL_NONE, 0, "audit runs under the supervisor alone" },
	{ "none", SB_MODE_ENFORCE, 7, 0, SB_OSL_NONE, 0, "os-sandbox=none: the supervisor alone" },
	{ "subprocess", SB_MODE_ENFORCE, 7, 0, SB_OSL_NONE, 0, "os-sandbox=subprocess" },
	{ "qemu", SB_MODE_ENFORCE, 7, -ENOTSUP, SB_OSL_NONE, 0, "os-sandbox=qemu is not available" },
	{ "unshare", SB_MODE_ENFORCE, 7, 0, SB_OSL_UNSHARE, 0, "unshare (user, mount, pid, net, ipc, uts" },
	{ "bwrap", SB_MODE_ENFORCE, 7, 0, SB_OSL_BWRAP, 0, "os-sandbox: bwrap" },
	{ "firejail", SB_MODE_ENFORCE, 7, 0, SB_OSL_FIREJAIL, 0, "os-sandbox: firejail" },
};

START_TEST(layer_selection)
{
	char text[512];
	struct sb_policy *p;
	struct sb_oslayer *l = NULL;
	struct sb_diag d;
	int rc;

	snprintf(text, sizeof(text), "os-sandbox=%s\nexpose-ro=%s\nexpose-rw=%s\n", select_rows[_i].os, P("ro"),
		 P("rw"));
	p = load_policy(text);
	rc = new_layer(p, select_rows[_i].mode, select_rows[_i].abi, &l, &d);
	ck_assert_int_eq(rc, select_rows[_i].want_rc);
	if (rc) {
		ck_assert_ptr_null(l);
		ck_assert_uint_ge(d.n, 1);
		ck_assert_ptr_nonnull(strstr(d.items[0].msg, select_rows[_i].want_text));
	} else {
		char *t = describe(l);

		ck_assert_int_eq(sb_oslayer_kind(l), select_rows[_i].want_kind);
		ck_assert_uint_eq(sb_diag_count(&d, SB_DIAG_WARNING), select_rows[_i].want_warnings);
		if (select_rows[_i].want_warnings)
			ck_assert_ptr_nonnull(strstr(d.items[0].msg, select_rows[_i].want_text));
		else
			ck_assert_msg(strstr(t, select_rows[_i].want_text), "describe: %s", t);
		free(t);
	}
	sb_diag_free(&d);
	sb_oslayer_free(l);
	sb_policy_free(p);
}
END_TEST

/* The fast-path answers: exact only when Landlock can express the exposure. */
static const struct {
	const char *extra;
	bool fs, exec;
	const char *text;
} exact_rows[] = {
	{ "", true, true, NULL },
	{ "ignore=*.key\n", false, true, "ignore= (1 rule)" },
	{ "expose-ro=@/rw/sub\n", false, true, "read-only exposures inside writable ones" },
	/* a glob is expanded now: the two tools, not bin/other */
	{ "python-api=ALLOW:process-exec\nexec=@/bin/tool-*\nexpose-ro=@/bin\n", true, true, "exec: only 4 executable(s)" },
	/* executables outside every exposure are readable through Landlock only */
	{ "python-api=ALLOW:process-exec\nexec=@/bin/tool-*\n", false, true, "exec: only 4 executable(s)" },
	{ "python-api=ALLOW:process-exec\n", true, true, "exec: any exposed file" },
};

static void expand_at(char *out, size_t len, const char *in)
{
	size_t n = 0;

	for (; *in && n + sizeof(tmp) + 1 < len; in++)
		n += (size_t)(*in == '@' ? snprintf(out + n, len - n, "%s", tmp) : snprintf(out + n, len - n, "%c", *in));
	out[n] = 0;
}

START_TEST(layer_fast_path_exactness)
{
	char text[4096], extra[2048];
	struct sb_policy *p;
	struct sb_oslayer *l;
	struct sb_diag d;
	char *t;

	expand_at(extra, sizeof(extra), exact_rows[_i].extra);
	snprintf(text, sizeof(text), "os-sandbox=landlock\nexpose-ro=/usr\nexpose-ro=/etc\nexpose-ro=%s\n"
		 "expose-rw=%s\n%s", P("ro"), P("rw"), extra);
	p = load_policy(text);
	ck_assert_int_eq(new_layer(p, SB_MODE_ENFORCE, 7, &l, &d), 0);
	ck_assert_int_eq(sb_oslayer_enforces_fs(l), exact_rows[_i].fs);
	ck_assert_int_eq(sb_oslayer_enforces_exec(l), exact_rows[_i].exec);
	t = describe(l);
	if (exact_rows[_i].text)
		ck_assert_msg(strstr(t, exact_rows[_i].text), "describe: %s", t);
	free(t);
	sb_diag_free(&d);
	sb_oslayer_free(l);
	sb_policy_free(p);
}
END_TEST

START_TEST(layer_policy_file_inside_rw)
{
	char text[1024];
	struct sb_policy *p;
	struct sb_oslayer *l;
	struct sb_diag d;
	char *t;

	/* the policy file lives in tmp; exposing tmp writable cannot protect it */
	snprintf(text, sizeof(text), "os-sandbox=landlock\nexpose-rw=%s\n", tmp);
	p = load_policy(text);
	ck_assert_int_eq(new_layer(p, SB_MODE_ENFORCE, 7, &l, &d), 0);
	ck_assert(!sb_oslayer_enforces_fs(l));
	t = describe(l);
	ck_assert_msg(strstr(t, "the write protection of the policy file"), "describe: %s", t);
	ck_assert_msg(strstr(t, ".py-sandboxes (inside a writable exposure)"), "describe: %s", t);
	free(t);
	sb_oslayer_free(l);
	sb_diag_free(&d);
	sb_policy_free(p);
}
END_TEST

START_TEST(layer_interpreter_loader_gets_execute)
{
	struct sb_policy *p = load_policy("os-sandbox=landlock\nexpose-ro=/usr\n");
	char *py = realpath("/usr/bin/python3", NULL), *ld = realpath("/lib64/ld-linux-x86-64.so.2", NULL);
	struct sb_oslayer *l;
	struct sb_diag d;
	char *t;

	ck_assert_int_eq(new_layer(p, SB_MODE_ENFORCE, 7, &l, &d), 0);
	ck_assert_int_eq(sb_oslayer_landlock_abi(l), 7);
	t = describe(l);
	ck_assert_msg(strstr(t, "exec: only 2 executable(s)"), "describe: %s", t);
	/* The ELF loader (PT_INTERP) is opened by execve with exec intent too. */
	ck_assert(sb_ll_plan_grants(l->ll, py, SB_LL_FS_EXECUTE));
	if (ld)
		ck_assert(sb_ll_plan_grants(l->ll, ld, SB_LL_FS_EXECUTE));
	ck_assert(!sb_ll_plan_grants(l->ll, "/usr/bin/env", SB_LL_FS_EXECUTE));
	ck_assert(sb_ll_plan_grants(l->ll, "/usr/bin/env", SB_LL_FS_READ_FILE));
	free(t);
	free(py);
	free(ld);
	sb_oslayer_free(l);
	sb_diag_free(&d);
	sb_policy_free(p);
}
END_TEST

START_TEST(layer_exec_glob_expanded)
{
	char text[1024];
	struct sb_policy *p;
	struct sb_oslayer *l;
	struct sb_diag d;

	snprintf(text, sizeof(text), "os-sandbox=landlock\nexpose-ro=/usr\nexpose-ro=%s\n"
		 "python-api=ALLOW:process-exec\nexec=%s/bin/tool-*\n", P("bin"), tmp);
	p = load_policy(text);
	ck_assert_int_eq(new_layer(p, SB_MODE_ENFORCE, 7, &l, &d), 0);
	ck_assert(sb_ll_plan_grants(l->ll, P("bin/tool-a"), SB_LL_FS_EXECUTE));
	ck_assert(sb_ll_plan_grants(l->ll, P("bin/tool-b"), SB_LL_FS_EXECUTE));
	ck_assert(!sb_ll_plan_grants(l->ll, P("bin/other"), SB_LL_FS_EXECUTE));
	ck_assert(!sb_ll_plan_grants(l->ll, "/usr/bin/env", SB_LL_FS_EXECUTE));
	ck_assert(sb_oslayer_enforces_exec(l));
	sb_oslayer_free(l);
	sb_diag_free(&d);
	sb_policy_free(p);
}
END_TEST

/* ---- wrappers ------------------------------------------------------------------------- */

static char **wrap(const char *policy_text, int stub_fd, int want_rc, struct sb_diag *dout)
{
	char *pyargv[] = { "python3", "-c", "pass", NULL };
	struct sb_policy *p = load_policy(policy_text);
	struct sb_oslayer *l = NULL;
	struct sb_diag d;
	char **argv = NULL;
	int rc = new_layer(p, SB_MODE_ENFORCE, 7, &l, &d);

	ck_assert_int_eq(rc, want_rc);
	if (!rc)
		ck_assert_int_eq(sb_oslayer_wrap_argv(l, "/usr/bin/python3", pyargv, stub_fd, &argv), 0);
	if (dout)
		*dout = d;
	else
		sb_diag_free(&d);
	sb_oslayer_free(l);
	sb_policy_free(p);
	return argv;
}

/* Index of the word sequence `seq` (NULL-terminated) in argv, or -1. */
static int find_seq(char **argv, const char *const *seq)
{
	for (int i = 0; argv[i]; i++) {
		int k = 0;

		while (seq[k] && argv[i + k] && !strcmp(argv[i + k], seq[k]))
			k++;
		if (!seq[k])
			return i;
	}
	return -1;
}

/* new_layer() names /usr/bin/python3 as the stub binary: its canonical form. */
static const char *self_exe(void)
{
	static char buf[PATH_MAX];

	ck_assert_ptr_nonnull(realpath("/usr/bin/python3", buf));
	return buf;
}

#define HAS(argv, ...) (find_seq((argv), (const char *const[]){ __VA_ARGS__, NULL }) >= 0)
#define AT(argv, ...) find_seq((argv), (const char *const[]){ __VA_ARGS__, NULL })

START_TEST(bwrap_command_line)
{
	char text[1024], bin[PATH_MAX + 8];
	char **a;

	snprintf(text, sizeof(text), "os-sandbox=bwrap\nexpose-ro=/usr\nexpose-ro=%s\nexpose-rw=%s\n"
		 "expose-ro=%s\nbwrap.setenv=FOO bar baz\nbwrap.new-session=\n", P("ro"), P("rw"), P("rw/sub"));
	a = wrap(text, 7, 0, NULL);
	snprintf(bin, sizeof(bin), "%s/bwrap", fakebin);
	ck_assert_str_eq(a[0], bin);
	ck_assert(HAS(a, "--die-with-parent"));
	ck_assert(HAS(a, "--unshare-pid"));
	ck_assert(HAS(a, "--unshare-net"));
	ck_assert(HAS(a, "--ro-bind", "/usr", "/usr"));
	ck_assert(HAS(a, "--ro-bind", P("ro"), P("ro")));
	ck_assert(HAS(a, "--bind", P("rw"), P("rw")));
	/* a read-only exposure inside a writable one is mounted after it */
	ck_assert_int_gt(AT(a, "--ro-bind", P("rw/sub"), P("rw/sub")), AT(a, "--bind", P("rw"), P("rw")));
	ck_assert(HAS(a, "--proc", "/proc"));
	ck_assert(HAS(a, "--dev", "/dev"));
	ck_assert(HAS(a, "--symlink", "usr/lib64", "/lib64"));
	ck_assert(HAS(a, "--chdir", tmp));
	ck_assert(HAS(a, "--setenv", "FOO", "bar", "baz"));
	ck_assert(HAS(a, "--new-session"));
	/* the stub, innermost, then the interpreter's own argv */
	ck_assert(HAS(a, "--", self_exe(), "--_sb-stub", "7", "/usr/bin/python3", "--", "python3", "-c", "pass"));
	/* the CA stores inside /usr need no bind of their own */
	ck_assert(!HAS(a, "--ro-bind", "/usr/share/ca-certificates", "/usr/share/ca-certificates"));
	sb_oslayer_argv_free(a);
}
END_TEST

START_TEST(bwrap_network)
{
	struct sb_diag d;
	char **a;

	/* loopback-only rules keep the private network */
	a = wrap("os-sandbox=bwrap\nexpose-ro=/usr\nnet=ALLOW|tcp|127.0.0.1|8080|IN,OUT\n", 3, 0, NULL);
	ck_assert(HAS(a, "--unshare-net"));
	sb_oslayer_argv_free(a);
	/* a rule reaching other hosts needs the host's network: refused unless shared */
	a = wrap("os-sandbox=bwrap\nexpose-ro=/usr\nnet=ALLOW|tcp|0.0.0.0/0|443|OUT\n", 3, -ENOTSUP, &d);
	ck_assert_ptr_null(a);
	ck_assert_ptr_nonnull(strstr(d.items[0].msg, "bwrap.share-net=yes"));
	sb_diag_free(&d);
	a = wrap("os-sandbox=bwrap\nexpose-ro=/usr\nnet=ALLOW|tcp|0.0.0.0/0|443|OUT\nbwrap.share-net=yes\n", 3, 0, NULL);
	ck_assert(!HAS(a, "--unshare-net"));
	ck_assert(!HAS(a, "--share-net"));
	sb_oslayer_argv_free(a);
	a = wrap("os-sandbox=bwrap\nexpose-ro=/usr\nbwrap.unshare-net=no\n", 3, 0, NULL);
	ck_assert(!HAS(a, "--unshare-net"));
	sb_oslayer_argv_free(a);
}
END_TEST

START_TEST(firejail_command_line)
{
	char text[1024], opt[PATH_MAX + 32];
	struct sb_diag d;
	char **a;

	snprintf(text, sizeof(text), "os-sandbox=firejail\nexpose-ro=/usr\nexpose-ro=%s\nexpose-rw=%s\n"
		 "firejail.rlimit-as=600m\nfirejail.nosound=\n", P("ro"), P("rw"));
	a = wrap(text, 9, 0, NULL);
	ck_assert(HAS(a, "--noprofile"));
	ck_assert(HAS(a, "--caps.drop=all"));
	ck_assert(HAS(a, "--nonewprivs"));
	ck_assert(HAS(a, "--net=none"));
	ck_assert(HAS(a, "--private-dev"));
	ck_assert(HAS(a, "--keep-fd=9"));
	ck_assert(HAS(a, "--read-only=/usr"));
	snprintf(opt, sizeof(opt), "--whitelist=%s", P("ro"));
	ck_assert(HAS(a, opt));
	snprintf(opt, sizeof(opt), "--read-only=%s", P("ro"));
	ck_assert(HAS(a, opt));
	snprintf(opt, sizeof(opt), "--read-write=%s", P("rw"));
	ck_assert(HAS(a, opt));
	ck_assert(HAS(a, "--rlimit-as=600m"));
	ck_assert(HAS(a, "--nosound"));
	ck_assert(!HAS(a, "--blacklist=/usr"));
	ck_assert(!HAS(a, "--blacklist=/tmp"));
	ck_assert(!HAS(a, "--blacklist=/proc"));
	if (access("/root", F_OK) == 0)
		ck_assert(HAS(a, "--blacklist=/root"));
	ck_assert(HAS(a, "--", self_exe(), "--_sb-stub", "9", "/usr/bin/python3", "--", "python3"));
	sb_oslayer_argv_free(a);
	a = wrap("os-sandbox=firejail\nexpose-ro=/usr\nnet=ALLOW|tcp|0.0.0.0/0|443|OUT\n", 9, -ENOTSUP, &d);
	ck_assert_ptr_nonnull(strstr(d.items[0].msg, "firejail.net=<bridge>"));
	sb_diag_free(&d);
	a = wrap("os-sandbox=firejail\nexpose-ro=/usr\nnet=ALLOW|tcp|0.0.0.0/0|443|OUT\nfirejail.net=br0\n", 9, 0, NULL);
	ck_assert(HAS(a, "--net=br0"));
	ck_assert(!HAS(a, "--net=none"));
	sb_oslayer_argv_free(a);
}
END_TEST

START_TEST(wrapper_missing_binary)
{
	struct sb_policy *p = load_policy("os-sandbox=bwrap\nexpose-ro=/usr\n");
	struct sb_oslayer_args a = {
		.policy = p, .python_exe = "/usr/bin/python3", .mode = SB_MODE_ENFORCE, .cwd = tmp,
		.path_env = P("ro"), .flags = SB_OSL_F_NO_SELFTEST,
	};
	struct sb_oslayer *l;
	struct sb_diag d;

	sb_diag_init(&d);
	ck_assert_int_eq(sb_oslayer_new_ex(&a, &l, &d), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(d.items[0].msg, "apt-get install bubblewrap"));
	sb_diag_free(&d);
	sb_policy_free(p);
}
END_TEST

/* ---- stub and child helpers ---------------------------------------------------------------- */

START_TEST(stub_parse)
{
	char *ok[] = { "python-sb", "--_sb-stub", "5", "/usr/bin/python3", "--", "python3", "x.py", NULL };
	char *bad1[] = { "python-sb", "--_sb-stub", "5x", "/usr/bin/python3", "--", "python3", NULL };
	char *bad2[] = { "python-sb", "--_sb-stub", "5", "python3", "--", "python3", NULL };
	char *bad3[] = { "python-sb", "--_sb-stub", "5", "/usr/bin/python3", "--", NULL };
	char *bad4[] = { "python-sb", "-c", "5", "/usr/bin/python3", "--", "python3", NULL };
	const char *exe;
	char **pa;
	int fd;

	ck_assert_int_eq(sb_oslayer_stub_parse(7, ok, &fd, &exe, &pa), 0);
	ck_assert_int_eq(fd, 5);
	ck_assert_str_eq(exe, "/usr/bin/python3");
	ck_assert_str_eq(pa[0], "python3");
	ck_assert_str_eq(pa[1], "x.py");
	ck_assert_int_eq(sb_oslayer_stub_parse(6, bad1, &fd, &exe, &pa), -EINVAL);
	ck_assert_int_eq(sb_oslayer_stub_parse(6, bad2, &fd, &exe, &pa), -EINVAL);
	ck_assert_int_eq(sb_oslayer_stub_parse(5, bad3, &fd, &exe, &pa), -EINVAL);
	ck_assert_int_eq(sb_oslayer_stub_parse(6, bad4, &fd, &exe, &pa), -EINVAL);
}
END_TEST

START_TEST(stub_recv_eof_is_epipe)
{
	int sv[2], listener;

	ck_assert_int_eq(sb_oslayer_stub_socketpair(sv), 0);
	ck_assert_int_eq(fcntl(sv[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(fcntl(sv[1], F_GETFD) & FD_CLOEXEC, 0);
	close(sv[1]);
	ck_assert_int_eq(sb_oslayer_recv_listener(sv[0], &listener), -EPIPE);
	ck_assert_int_eq(listener, -1);
	close(sv[0]);
}
END_TEST

START_TEST(none_layer_child_calls_are_noops)
{
	ck_assert_int_eq(sb_oslayer_apply_child(NULL), 0);
	ck_assert_int_eq(sb_oslayer_setup_ns_child(NULL), 0);
	ck_assert_int_eq(sb_oslayer_clone_flags(NULL), 0);
	ck_assert(!sb_oslayer_enforces_fs(NULL));
	ck_assert(!sb_oslayer_enforces_exec(NULL));
	ck_assert_str_eq(sb_oslayer_name(NULL), "none");
}
END_TEST

START_TEST(child_error_text)
{
	char buf[64];
	size_t n = sb_oslayer_child_error(-EACCES, buf, sizeof(buf));

	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_str_eq(buf, "kernel layer: EACCES");
	n = sb_oslayer_child_error(-ENOENT, buf, 8);
	ck_assert_uint_eq(strlen(buf), 7);
}
END_TEST

static Suite *oslayer_suite(void)
{
	Suite *s = suite_create("oslayer");
	TCase *ll = tcase_create("landlock");
	TCase *sel = tcase_create("selection");
	TCase *wr = tcase_create("wrappers");
	TCase *misc = tcase_create("misc");
	size_t nabi = sizeof(abi_rows) / sizeof(abi_rows[0]);

	tcase_add_checked_fixture(ll, setup, teardown);
	tcase_add_loop_test(ll, landlock_rights_per_abi, 0, (int)nabi);
	tcase_add_loop_test(ll, landlock_plan_paths, 0, (int)nabi);
	tcase_add_test(ll, landlock_plan_exec_anywhere_and_ro_in_rw);
	tcase_add_test(ll, landlock_plan_abi_clamped_and_invalid);
	tcase_add_loop_test(ll, landlock_plan_ports, 0, (int)(sizeof(port_rows) / sizeof(port_rows[0])));
	suite_add_tcase(s, ll);

	tcase_add_checked_fixture(sel, setup, teardown);
	tcase_add_loop_test(sel, layer_selection, 0, (int)(sizeof(select_rows) / sizeof(select_rows[0])));
	tcase_add_loop_test(sel, layer_fast_path_exactness, 0, (int)(sizeof(exact_rows) / sizeof(exact_rows[0])));
	tcase_add_test(sel, layer_policy_file_inside_rw);
	tcase_add_test(sel, layer_interpreter_loader_gets_execute);
	tcase_add_test(sel, layer_exec_glob_expanded);
	suite_add_tcase(s, sel);

	tcase_add_checked_fixture(wr, setup, teardown);
	tcase_add_test(wr, bwrap_command_line);
	tcase_add_test(wr, bwrap_network);
	tcase_add_test(wr, firejail_command_line);
	tcase_add_test(wr, wrapper_missing_binary);
	suite_add_tcase(s, wr);

	tcase_add_test(misc, stub_parse);
	tcase_add_test(misc, stub_recv_eof_is_epipe);
	tcase_add_test(misc, none_layer_child_calls_are_noops);
	tcase_add_test(misc, child_error_text);
	suite_add_tcase(s, misc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(oslayer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
