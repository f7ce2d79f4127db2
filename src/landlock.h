/* Landlock: the policy's file exposure, executables and TCP ports compiled to
 * a Landlock ruleset (SPEC §7, reference §6.2 "landlock", anchors §2.11).
 *
 * The plan is computed in the parent (it allocates, stats, reads ELF
 * headers); the child only opens each path O_PATH, adds the rules and
 * restricts itself, with system calls alone, so it is safe between fork and
 * execve.  The running ABI is an input of the computation, so a unit test can
 * ask what an older kernel would enforce.
 *
 * The UAPI is defined here under our own names: Debian 12's <linux/landlock.h>
 * (6.1) stops at ABI 2 and its struct landlock_ruleset_attr has one field.
 */
#ifndef SB_LANDLOCK_H
#define SB_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- UAPI (values are the kernel's ABI) ---------------------------------- */

#define SB_LL_CREATE_RULESET_VERSION (1U << 0)
#define SB_LL_RULE_PATH_BENEATH 1
#define SB_LL_RULE_NET_PORT 2

#define SB_LL_FS_EXECUTE (1ULL << 0)
#define SB_LL_FS_WRITE_FILE (1ULL << 1)
#define SB_LL_FS_READ_FILE (1ULL << 2)
#define SB_LL_FS_READ_DIR (1ULL << 3)
#define SB_LL_FS_REMOVE_DIR (1ULL << 4)
#define SB_LL_FS_REMOVE_FILE (1ULL << 5)
#define SB_LL_FS_MAKE_CHAR (1ULL << 6)
#define SB_LL_FS_MAKE_DIR (1ULL << 7)
#define SB_LL_FS_MAKE_REG (1ULL << 8)
#define SB_LL_FS_MAKE_SOCK (1ULL << 9)
#define SB_LL_FS_MAKE_FIFO (1ULL << 10)
#define SB_LL_FS_MAKE_BLOCK (1ULL << 11)
#define SB_LL_FS_MAKE_SYM (1ULL << 12)
#define SB_LL_FS_REFER (1ULL << 13)		/* ABI 2 */
#define SB_LL_FS_TRUNCATE (1ULL << 14)		/* ABI 3 */
#define SB_LL_FS_IOCTL_DEV (1ULL << 15)		/* ABI 5 */

#define SB_LL_NET_BIND_TCP (1ULL << 0)		/* ABI 4 */
#define SB_LL_NET_CONNECT_TCP (1ULL << 1)	/* ABI 4 */

#define SB_LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)	/* ABI 6 */
#define SB_LL_SCOPE_SIGNAL (1ULL << 1)			/* ABI 6 */

/* The kernel's structs, complete for ABI 6+ (older kernels get a shorter size). */
struct sb_ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct sb_ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct sb_ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

/* Rights groups.  Only these make sense on a non-directory. */
#define SB_LL_FS_FILE_RIGHTS (SB_LL_FS_EXECUTE | SB_LL_FS_WRITE_FILE | SB_LL_FS_READ_FILE | \
			      SB_LL_FS_TRUNCATE | SB_LL_FS_IOCTL_DEV)
#define SB_LL_FS_READ_RIGHTS (SB_LL_FS_READ_FILE | SB_LL_FS_READ_DIR)
#define SB_LL_FS_WRITE_RIGHTS (SB_LL_FS_WRITE_FILE | SB_LL_FS_REMOVE_DIR | SB_LL_FS_REMOVE_FILE | \
			       SB_LL_FS_MAKE_CHAR | SB_LL_FS_MAKE_DIR | SB_LL_FS_MAKE_REG | \
			       SB_LL_FS_MAKE_SOCK | SB_LL_FS_MAKE_FIFO | SB_LL_FS_MAKE_BLOCK | \
			       SB_LL_FS_MAKE_SYM | SB_LL_FS_REFER | SB_LL_FS_TRUNCATE | \
			       SB_LL_FS_IOCTL_DEV)

/* The newest ABI this code knows; a newer kernel is used at this level. */
#define SB_LL_ABI_MAX 7

/* Rights a kernel of ABI `abi` handles (0 for abi < 1). */
uint64_t sb_ll_fs_rights(int abi);
uint64_t sb_ll_net_rights(int abi);
uint64_t sb_ll_scopes(int abi);

/* The running kernel's ABI: >= 1, or -ENOSYS (not built in), -EOPNOTSUPP
 * (disabled at boot), other -errno.  Asks the kernel every time. */
int sb_ll_probe_abi(void);

/* ---- the plan ------------------------------------------------------------ */

/* What the policy asks for, independent of the policy's representation. */
struct sb_ll_in_path {
	const char *path;	/* absolute, canonical */
	unsigned access;	/* SB_ACC_READ / SB_ACC_WRITE / SB_ACC_EXEC (policy.h) */
};

struct sb_ll_in_ports {
	uint16_t lo, hi;
};

struct sb_ll_input {
	const struct sb_ll_in_path *paths;
	size_t n_paths;
	/* TCP port ranges of net= ALLOW rules, by direction (IN = bind, OUT = connect). */
	const struct sb_ll_in_ports *bind;
	size_t n_bind;
	const struct sb_ll_in_ports *connect;
	size_t n_connect;
	/* Any executable that can be read may also be executed (process-exec
	 * granted and no exec= rule). */
	bool exec_anywhere;
};

/* Above this many distinct ports a direction is left to the supervisor:
 * Landlock has one rule per port and no ranges. */
#define SB_LL_MAX_PORTS 4096

struct sb_ll_path_rule {
	char *path;		/* owned */
	uint64_t access;	/* masked to the ABI and to file rights for non-directories */
	bool is_dir;
};

struct sb_ll_port_rule {
	uint16_t port;
	uint64_t access;	/* SB_LL_NET_* */
};

/* What could not be expressed, for describe and the fast path. */
enum sb_ll_gap {
	SB_LL_GAP_BIND_TOO_MANY = 1u << 0,	/* more than SB_LL_MAX_PORTS bind ports */
	SB_LL_GAP_CONNECT_TOO_MANY = 1u << 1,
	SB_LL_GAP_RO_IN_RW = 1u << 2,		/* a read-only exposure inside a writable one */
	SB_LL_GAP_MISSING_PATH = 1u << 3,	/* an exposure that does not exist (no rule) */
};

struct sb_ll_plan {
	int abi;
	uint64_t handled_fs, handled_net, scoped;
	struct sb_ll_path_rule *paths;	/* sorted by path, merged */
	size_t n_paths;
	struct sb_ll_port_rule *ports;	/* sorted by port */
	size_t n_ports;
	unsigned gaps;			/* enum sb_ll_gap */
	const char *ro_in_rw;		/* first read-only path inside a writable one (gap) */
};

/* Compute the rules for a kernel of ABI `abi` (1..SB_LL_ABI_MAX; higher is
 * clamped).  Paths are stat'ed: a directory gets directory rights, anything
 * else file rights only; a path that does not exist gets no rule. */
int sb_ll_plan_new(const struct sb_ll_input *in, int abi, struct sb_ll_plan **out);
void sb_ll_plan_free(struct sb_ll_plan *plan);

/* Does a rule grant `right` to `path` (absolute, canonical)? */
bool sb_ll_plan_grants(const struct sb_ll_plan *plan, const char *path, uint64_t right);
bool sb_ll_plan_port_allowed(const struct sb_ll_plan *plan, uint16_t port, uint64_t right);

/* ---- in the child ---------------------------------------------------------- */

/* Apply the plan to the calling thread (and what it execs): no_new_privs,
 * create the ruleset, add every rule, restrict.  System calls only: safe
 * after fork.  Returns 0 or -errno; *failed_path (may be NULL) receives the
 * rule path that failed, or NULL. */
int sb_ll_apply(const struct sb_ll_plan *plan, const char **failed_path);

/* The same in two steps: the ruleset with every rule (a descriptor, close-
 * on-exec, or -errno; may run in the parent, once for every child), then
 * no_new_privs and restrict (system calls only, after fork). */
int sb_ll_ruleset_new(const struct sb_ll_plan *plan, const char **failed_path);
int sb_ll_restrict(int ruleset);

#endif
