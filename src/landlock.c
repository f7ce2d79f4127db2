/* Landlock rules from the policy; see landlock.h. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "landlock.h"
#include "policy.h"

#ifndef SYS_landlock_create_ruleset
# define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
# define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
# define SYS_landlock_restrict_self 446
#endif

/* ---- ABI ----------------------------------------------------------------- */

uint64_t sb_ll_fs_rights(int abi)
{
	uint64_t r;

	if (abi < 1)
		return 0;
	r = (SB_LL_FS_MAKE_SYM << 1) - 1;	/* ABI 1: EXECUTE .. MAKE_SYM */
	if (abi >= 2)
		r |= SB_LL_FS_REFER;
	if (abi >= 3)
		r |= SB_LL_FS_TRUNCATE;
	if (abi >= 5)
		r |= SB_LL_FS_IOCTL_DEV;
	return r;
}

uint64_t sb_ll_net_rights(int abi)
{
	return abi >= 4 ? SB_LL_NET_BIND_TCP | SB_LL_NET_CONNECT_TCP : 0;
}

uint64_t sb_ll_scopes(int abi)
{
	return abi >= 6 ? SB_LL_SCOPE_ABSTRACT_UNIX_SOCKET | SB_LL_SCOPE_SIGNAL : 0;
}

int sb_ll_probe_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, SB_LL_CREATE_RULESET_VERSION);

	if (abi < 0)
		return -errno;
	return abi < 1 ? -ENOSYS : (int)(abi > 1000 ? 1000 : abi);
}

/* ---- building ---------------------------------------------------------------- */

static uint64_t rights_for(unsigned access, bool exec_anywhere)
{
	uint64_t r = 0;

	if (access & (SB_ACC_READ | SB_ACC_WRITE))
		r |= SB_LL_FS_READ_RIGHTS;
	if (access & SB_ACC_WRITE)
		r |= SB_LL_FS_WRITE_RIGHTS;
	/* execve opens the file for reading (open_exec: FMODE_READ|__FMODE_EXEC),
	 * so an executable needs READ_FILE as well as EXECUTE. */
	if (access & SB_ACC_EXEC)
		r |= SB_LL_FS_EXECUTE | SB_LL_FS_READ_FILE;
	if (exec_anywhere && (access & (SB_ACC_READ | SB_ACC_WRITE)))
		r |= SB_LL_FS_EXECUTE;
	return r;
}

/* Is `outer` an ancestor of `inner` (strictly)? Both canonical. */
static bool path_strictly_under(const char *inner, const char *outer)
{
	size_t n = strlen(outer);

	if (n == 1 && outer[0] == '/')
		return inner[1] != 0;
	return strncmp(inner, outer, n) == 0 && inner[n] == '/';
}

static bool path_covers(const char *rule, const char *path)
{
	return strcmp(rule, path) == 0 || path_strictly_under(path, rule);
}

static int cmp_in_path(const void *a, const void *b)
{
	return strcmp(((const struct sb_ll_in_path *)a)->path, ((const struct sb_ll_in_path *)b)->path);
}

/* Merge equal paths (rights add up), drop missing ones, mask to the ABI. */
static int build_paths(struct sb_ll_plan *plan, const struct sb_ll_input *in)
{
	struct sb_ll_in_path *sorted = NULL;
	uint64_t mask = sb_ll_fs_rights(plan->abi);
	int rc = 0;

	if (!in->n_paths)
		return 0;
	sorted = malloc(in->n_paths * sizeof(*sorted));
	plan->paths = calloc(in->n_paths, sizeof(*plan->paths));
	if (!sorted || !plan->paths) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(sorted, in->paths, in->n_paths * sizeof(*sorted));
	qsort(sorted, in->n_paths, sizeof(*sorted), cmp_in_path);
	for (size_t i = 0; i < in->n_paths;) {
		unsigned access = 0;
		size_t j = i;
		struct stat st;

		while (j < in->n_paths && strcmp(sorted[j].path, sorted[i].path) == 0)
			access |= sorted[j++].access;
		if (sorted[i].path[0] != '/') {
			rc = -EINVAL;
			goto out;
		}
		if (stat(sorted[i].path, &st) < 0) {
			/* Nothing to allow: Landlock denies what has no rule. */
			plan->gaps |= SB_LL_GAP_MISSING_PATH;
			i = j;
			continue;
		}
		struct sb_ll_path_rule *r = &plan->paths[plan->n_paths];

		r->is_dir = S_ISDIR(st.st_mode);
		r->access = rights_for(access, in->exec_anywhere) & mask;
		if (!r->is_dir)
			r->access &= SB_LL_FS_FILE_RIGHTS;
		if (r->access) {
			if (!(r->path = strdup(sorted[i].path))) {
				rc = -ENOMEM;
				goto out;
			}
			plan->n_paths++;
		}
		i = j;
	}
out:
	free(sorted);
	return rc;
}

/* Landlock adds rights up the hierarchy: a read-only exposure nested in a
 * writable one stays writable.  Remember the first such case. */
static void find_ro_in_rw(struct sb_ll_plan *plan)
{
	for (size_t i = 0; i < plan->n_paths; i++) {
		const struct sb_ll_path_rule *ro = &plan->paths[i];

		if (ro->access & SB_LL_FS_WRITE_FILE)
			continue;
		for (size_t j = 0; j < plan->n_paths; j++) {
			const struct sb_ll_path_rule *rw = &plan->paths[j];

			if ((rw->access & SB_LL_FS_WRITE_FILE) && path_strictly_under(ro->path, rw->path)) {
				plan->gaps |= SB_LL_GAP_RO_IN_RW;
				if (!plan->ro_in_rw)
					plan->ro_in_rw = ro->path;
				break;
			}
		}
	}
}

#define PORT_BYTES (65536 / 8)

/* Whole bytes where a range covers them, and the count by 64-bit words: a
 * rule for every port ("*") went bit by bit through 65 536 ports, and the
 * count byte by byte through libgcc's popcount, ~0.1 ms of every start. */
static size_t mark_ports(uint8_t *bits, const struct sb_ll_in_ports *r, size_t n)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		for (unsigned p = r[i].lo; p <= r[i].hi;) {
			if (p % 8 == 0 && p + 7 <= r[i].hi) {
				bits[p / 8] = 0xff;
				p += 8;
			} else {
				bits[p / 8] |= (uint8_t)(1u << (p % 8));
				p++;
			}
		}
	}
	for (size_t i = 0; i < PORT_BYTES; i += 8) {
		uint64_t w;

		memcpy(&w, bits + i, sizeof(w));
		count += (size_t)__builtin_popcountll(w);
	}
	return count;
}

static bool bit(const uint8_t *bits, unsigned p)
{
	return bits[p / 8] & (1u << (p % 8));
}

static int build_ports(struct sb_ll_plan *plan, const struct sb_ll_input *in)
{
	uint8_t *bind = calloc(2, PORT_BYTES), *conn = bind ? bind + PORT_BYTES : NULL;
	size_t n_bind, n_conn, n = 0;
	int rc = 0;

	if (!bind)
		return -ENOMEM;
	n_bind = mark_ports(bind, in->bind, in->n_bind);
	n_conn = mark_ports(conn, in->connect, in->n_connect);
	plan->handled_net = sb_ll_net_rights(plan->abi);
	if (!plan->handled_net)
		goto out;
	/* Too many ports: leave the direction unhandled (the supervisor still
	 * decides each call) rather than load tens of thousands of rules. */
	if (n_bind > SB_LL_MAX_PORTS) {
		plan->handled_net &= ~SB_LL_NET_BIND_TCP;
		plan->gaps |= SB_LL_GAP_BIND_TOO_MANY;
		n_bind = 0;
	}
	if (n_conn > SB_LL_MAX_PORTS) {
		plan->handled_net &= ~SB_LL_NET_CONNECT_TCP;
		plan->gaps |= SB_LL_GAP_CONNECT_TOO_MANY;
		n_conn = 0;
	}
	if (n_bind + n_conn == 0)
		goto out;
	plan->ports = calloc(n_bind + n_conn, sizeof(*plan->ports));
	if (!plan->ports) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned p = 0; p < 65536; p++) {
		uint64_t acc = 0;

		if ((plan->handled_net & SB_LL_NET_BIND_TCP) && bit(bind, p))
			acc |= SB_LL_NET_BIND_TCP;
		if ((plan->handled_net & SB_LL_NET_CONNECT_TCP) && bit(conn, p))
			acc |= SB_LL_NET_CONNECT_TCP;
		if (acc) {
			plan->ports[n].port = (uint16_t)p;
			plan->ports[n++].access = acc;
		}
	}
	plan->n_ports = n;
out:
	free(bind);
	return rc;
}

int sb_ll_plan_new(const struct sb_ll_input *in, int abi, struct sb_ll_plan **out)
{
	struct sb_ll_plan *plan;
	int rc;

	*out = NULL;
	if (abi < 1)
		return -EINVAL;
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return -ENOMEM;
	plan->abi = abi > SB_LL_ABI_MAX ? SB_LL_ABI_MAX : abi;
	plan->handled_fs = sb_ll_fs_rights(plan->abi);
	plan->scoped = sb_ll_scopes(plan->abi);
	rc = build_paths(plan, in);
	if (!rc)
		rc = build_ports(plan, in);
	if (rc) {
		sb_ll_plan_free(plan);
		return rc;
	}
	find_ro_in_rw(plan);
	*out = plan;
	return 0;
}

void sb_ll_plan_free(struct sb_ll_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_paths; i++)
		free(plan->paths[i].path);
	free(plan->paths);
	free(plan->ports);
	free(plan);
}

bool sb_ll_plan_grants(const struct sb_ll_plan *plan, const char *path, uint64_t right)
{
	uint64_t have = 0;

	if (!(plan->handled_fs & right))
		return true;
	for (size_t i = 0; i < plan->n_paths; i++)
		if (path_covers(plan->paths[i].path, path))
			have |= plan->paths[i].access;
	return (have & right) == right;
}

bool sb_ll_plan_port_allowed(const struct sb_ll_plan *plan, uint16_t port, uint64_t right)
{
	size_t lo = 0, hi = plan->n_ports;

	if (!(plan->handled_net & right))
		return true;
	while (lo < hi) {	/* the rules are sorted by port */
		size_t mid = lo + (hi - lo) / 2;

		if (plan->ports[mid].port == port)
			return (plan->ports[mid].access & right) == right;
		if (plan->ports[mid].port < port)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* ---- applying (after fork: system calls only) ------------------------------- */

static size_t ruleset_attr_size(int abi)
{
	if (abi >= 6)
		return sizeof(struct sb_ll_ruleset_attr);
	if (abi >= 4)
		return offsetof(struct sb_ll_ruleset_attr, scoped);
	return offsetof(struct sb_ll_ruleset_attr, handled_access_net);
}

static int add_paths(int rs, const struct sb_ll_plan *plan, const char **failed_path)
{
	for (size_t i = 0; i < plan->n_paths; i++) {
		const struct sb_ll_path_rule *r = &plan->paths[i];
		struct sb_ll_path_beneath_attr pb = { .allowed_access = r->access };
		int fd = open(r->path, O_PATH | O_CLOEXEC);
		int err;

		if (fd < 0) {
			/* Removed since the plan was made: no rule is the stricter outcome. */
			if (errno == ENOENT)
				continue;
			err = errno;
			goto fail;
		}
		pb.parent_fd = fd;
		if (syscall(SYS_landlock_add_rule, rs, SB_LL_RULE_PATH_BENEATH, &pb, 0) < 0) {
			err = errno;
			close(fd);
			goto fail;
		}
		close(fd);
		continue;
fail:
		if (failed_path)
			*failed_path = r->path;
		return -err;
	}
	return 0;
}

int sb_ll_ruleset_new(const struct sb_ll_plan *plan, const char **failed_path)
{
	struct sb_ll_ruleset_attr attr = {
		.handled_access_fs = plan->handled_fs,
		.handled_access_net = plan->handled_net,
		.scoped = plan->scoped,
	};
	int rs, rc;

	if (failed_path)
		*failed_path = NULL;
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, ruleset_attr_size(plan->abi), 0);
	if (rs < 0)
		return -errno;
	rc = add_paths(rs, plan, failed_path);
	for (size_t i = 0; !rc && i < plan->n_ports; i++) {
		struct sb_ll_net_port_attr np = {
			.allowed_access = plan->ports[i].access, .port = plan->ports[i].port,
		};

		if (syscall(SYS_landlock_add_rule, rs, SB_LL_RULE_NET_PORT, &np, 0) < 0)
			rc = -errno;
	}
	if (rc) {
		close(rs);
		return rc;
	}
	return rs;
}

int sb_ll_restrict(int ruleset)
{
	/* landlock_restrict_self needs it without CAP_SYS_ADMIN; the supervisor's
	 * spawn sets it too, setting it twice is harmless. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return syscall(SYS_landlock_restrict_self, ruleset, 0) < 0 ? -errno : 0;
}

int sb_ll_apply(const struct sb_ll_plan *plan, const char **failed_path)
{
	int rs, rc;

	if (failed_path)
		*failed_path = NULL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	rs = sb_ll_ruleset_new(plan, failed_path);
	if (rs < 0)
		return rs;
	rc = sb_ll_restrict(rs);
	close(rs);
	return rc;
}
