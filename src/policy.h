/* The policy: a parsed and compiled `.py-sandboxes` (reference §2, SPEC §4).
 *
 * Library style: functions return 0 or -errno and never print; configuration
 * errors go into a struct sb_diag as "<file>(<line>): <detail>".
 *
 * Life cycle:
 *   sb_policy_load()   reads the file(s) and CLI rules, expands includes and ${},
 *                      parses every key, resolves host names, compiles paths to a
 *                      prefix tree and networks to CIDR tables.
 *   sb_policy_grant()  adds implicit grants (the interpreter tree, ...) before use.
 *   sb_policy_check_*  answer questions; they never allocate and never lock, so the
 *                      supervisor's workers call them concurrently on a const policy.
 *   sb_policy_free()
 */
#ifndef SB_POLICY_H
#define SB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "diag.h"

struct sb_policy;

/* Where a rule came from.  file "." with line 0 is the command line, as upstream. */
struct sb_rule_ref {
	const char *file;	/* owned by the policy */
	unsigned line;
	const char *text;	/* the rule as written, e.g. "expose-ro=./data"; owned by the policy */
};

/* ---- loading ---------------------------------------------------------- */

struct sb_load_opts {
	/* The selected rule file (from discovery or --pysandboxes-config).  It may
	 * not exist: then the policy is the built-in template and learning is on. */
	const char *config_path;
	/* "key=value" strings from --key=value on the command line, in order. */
	const char *const *cli_rules;
	size_t n_cli_rules;
	/* Environment of the launching process (for ${VAR}, env=, learning). */
	char *const *envp;
	/* Current directory of the launching process (relative paths, ./ includes). */
	const char *cwd;
	/* Template used when config_path does not exist (rules/py-sandboxes.template);
	 * NULL selects the installed one. */
	const char *template_path;
	/* --learn[=FILE] on the command line: NULL when absent. */
	const char *cli_learn;
	/* Hosts file for net= name resolution; NULL = /etc/hosts (tests override). */
	const char *hosts_path;
	/* Skip DNS for names not in the hosts file (tests, fuzzing): they then
	 * count as unresolvable. */
	bool no_dns;
};

/* Load and compile.  On success *out is a new policy (even when diag holds
 * warnings).  On configuration errors returns -EINVAL with every error in diag
 * and *out NULL.  Other -errno for system failures.
 *
 * Messages are the upstream texts; a rule is referred to as "file(line)", or
 * "<arg>" for the command line.  "Multiple <key> parameters." is reported, as
 * upstream, with no file ("a(1) and b(2): Multiple port parameters.").
 * While learning (settings.learn_file set) os_sandbox is forced to
 * SB_OS_SUBPROCESS, as upstream.  Unlike upstream, py-sandbox=false does not
 * turn learning off: learning is the supervisor's, not the agent's. */
int sb_policy_load(const struct sb_load_opts *opts, struct sb_policy **out, struct sb_diag *diag);
void sb_policy_free(struct sb_policy *p);

/* ---- settings (scalar keys) ------------------------------------------- */

enum sb_os_sandbox {
	SB_OS_AUTO = 0,
	SB_OS_NONE,
	SB_OS_SUBPROCESS,
	SB_OS_LANDLOCK,
	SB_OS_UNSHARE,
	SB_OS_BWRAP,
	SB_OS_FIREJAIL,
	SB_OS_QEMU,
};

enum sb_remote_result_mode { SB_RESULT_DATA_ONLY = 0, SB_RESULT_OBJECTS };

enum sb_limit_kind {
	SB_LIMIT_NPROC = 0,	/* limit-nproc=  -> RLIMIT_NPROC */
	SB_LIMIT_AS,		/* limit-as=     -> RLIMIT_AS (bytes, K/M/G suffixes) */
	SB_LIMIT_NOFILE,	/* limit-nofile= -> RLIMIT_NOFILE */
	SB_LIMIT_FSIZE,		/* limit-fsize=  -> RLIMIT_FSIZE (bytes) */
	SB_LIMIT_CPU,		/* limit-cpu=    -> RLIMIT_CPU (seconds) */
	SB_LIMIT__COUNT
};

struct sb_settings {
	bool config_exists;		/* the rule file existed (else: template + learning) */
	const char *config_path;	/* canonical path of the active rule file */
	bool py_sandbox;		/* py-sandbox= (default true) */
	enum sb_os_sandbox os_sandbox;	/* os-sandbox= (default auto) */
	const char *learn_file;		/* learning target, NULL when enforcing */
	bool learn_locked;		/* learn=false seen */
	long port;			/* port= (default -1) */
	bool remote_result_guard;	/* default true */
	enum sb_remote_result_mode remote_result_mode;
	bool limit_set[SB_LIMIT__COUNT];
	unsigned long long limit[SB_LIMIT__COUNT];
};

const struct sb_settings *sb_policy_settings(const struct sb_policy *p);

/* Every file the policy was read from (the rule file and its includes):
 * these are never writable by the sandboxed program. */
size_t sb_policy_files(const struct sb_policy *p, const char *const **files);

/* ---- implicit grants -------------------------------------------------- */

enum sb_access {
	SB_ACC_READ = 1u << 0,	/* open for read, stat, readlink, list */
	SB_ACC_WRITE = 1u << 1,	/* open for write/append/trunc, create, unlink, rename, mkdir, chmod, ... */
	SB_ACC_EXEC = 1u << 2,	/* execve of the file */
};

/* Add an implicit exposure (canonical directory or file, `access` of READ or
 * READ|WRITE) named `why` ("python interpreter", ...).  Must be called before
 * the policy is shared with worker threads. */
int sb_policy_grant(struct sb_policy *p, const char *path, unsigned access, const char *why);

/* ---- paths ------------------------------------------------------------ */

enum sb_path_verdict {
	SB_PATH_ALLOW = 0,
	SB_PATH_NOT_EXPOSED,	/* no expose rule covers it        -> ENOENT */
	SB_PATH_IGNORED,	/* an ignore= glob hides it         -> ENOENT */
	SB_PATH_READ_ONLY,	/* write under expose-ro            -> EACCES */
	SB_PATH_PROTECTED,	/* write to the active policy files -> EACCES */
};

/* Decide an access to `canon` (absolute, canonical: no "..", no symlinks,
 * length `len`).  `hit` (may be NULL) receives the deciding rule (expose,
 * ignore) or NULL for an implicit decision.  No allocation, no locks. */
enum sb_path_verdict sb_policy_check_path(const struct sb_policy *p, const char *canon, size_t len,
					  unsigned access, const struct sb_rule_ref **hit);

/* ---- network ---------------------------------------------------------- */

enum sb_net_proto { SB_PROTO_TCP = 1u << 0, SB_PROTO_UDP = 1u << 1 };
enum sb_net_dir { SB_DIR_OUT = 1u << 0, SB_DIR_IN = 1u << 1 };

enum sb_net_verdict {
	SB_NET_ALLOW = 0,
	SB_NET_DENY_RULE,	/* an explicit net=DENY matched (hit names it) */
	SB_NET_DENY_IMPLICIT,	/* no ALLOW matched: implicit default policy */
};

/* Decide a use of (family, addr, port) with `proto` and `dir`.  `addr` points
 * to a struct in_addr (AF_INET) or struct in6_addr (AF_INET6); IPv4-mapped
 * IPv6 addresses are judged by IPv4 rules.  No allocation, no locks. */
enum sb_net_verdict sb_policy_check_net(const struct sb_policy *p, int family, const void *addr,
					uint16_t port, unsigned proto, unsigned dir,
					const struct sb_rule_ref **hit);

/* ---- processes -------------------------------------------------------- */

/* python-api categories, in the registry order of rules/python-api.in. */
enum sb_api_category {
	SB_API_PROCESS_EXEC = 0,
	SB_API_PROCESS_CONTROL,
	SB_API_PRIVILEGES,
	SB_API_THREADS,
	SB_API_NATIVE,
	SB_API_INTROSPECTION,
	SB_API_DYNAMIC_CODE,
	SB_API_DESERIALIZATION,
	SB_API__COUNT
};

/* True when any python-api ALLOW grant touches the category (the category
 * itself, `*`, or one of its functions) and survives resolution, i.e. at
 * least one function of the category ends up allowed (ALLOW:* with
 * DENY:process-exec leaves process-exec closed): this opens the category's
 * system calls in the supervisor (SPEC §3). */
bool sb_policy_api_granted(const struct sb_policy *p, enum sb_api_category cat);

/* May the canonical executable `canon` be started?  True when process-exec
 * is granted and either no exec= rule exists or one matches (path or glob).
 * `hit` receives the matching exec= rule. */
bool sb_policy_check_exec(const struct sb_policy *p, const char *canon, const struct sb_rule_ref **hit);

/* ---- environment ------------------------------------------------------ */

/* Build the child's environment from env=/unenv= rules and `host` (NULL-
 * terminated).  In learning mode the caller passes the whole host env instead.
 * *out is a NULL-terminated array of "K=V" strings; free with sb_env_free(). */
int sb_policy_build_env(const struct sb_policy *p, char *const *host, char ***out);
void sb_env_free(char **env);

/* ---- inventories (kernel layers, learner, DNS pinning, --check-config) -- */

/* An exposure: explicit (expose-ro/-rw) or implicit (sb_policy_grant). */
struct sb_expose {
	const char *path;	/* canonical */
	bool write;
	bool implicit;
	const struct sb_rule_ref *ref;
};
size_t sb_policy_exposures(const struct sb_policy *p, const struct sb_expose **out);

struct sb_port_range {
	uint16_t lo, hi;
};

/* One compiled net= entry (a rule naming a host gives one entry per address).
 * The array holds the IPv4 table then the IPv6 table, each ordered DENY
 * first, then ALLOW, most specific prefix first. */
struct sb_net_rule {
	bool deny;
	unsigned protos;	/* SB_PROTO_* */
	unsigned dirs;		/* SB_DIR_* */
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network address (host bits cleared), 4 bytes used for v4 */
	unsigned plen;
	const struct sb_port_range *ports;	/* empty: the rule matches no port */
	size_t n_ports;
	const char *host;	/* host name the address came from, or NULL */
	const struct sb_rule_ref *ref;
};
size_t sb_policy_net_rules(const struct sb_policy *p, const struct sb_net_rule **out);

/* Host names of net= rules, resolved once at load (DNS pinning). */
struct sb_host_addr {
	int family;
	uint8_t addr[16];
};
struct sb_host {
	const char *name;
	const char *source;	/* "hosts file", "built-in", "DNS" */
	size_t n_addrs;
	const struct sb_host_addr *addrs;
};
size_t sb_policy_hosts(const struct sb_policy *p, const struct sb_host **out);

/* Provider parameters (bwrap.*, firejail.*, unshare.*, known qemu.*), in
 * file order; `key` is without the "<provider>." prefix. */
struct sb_provider_param {
	const char *provider;
	const char *key;
	const char *value;
	const struct sb_rule_ref *ref;
};
size_t sb_policy_provider_params(const struct sb_policy *p, const struct sb_provider_param **out);

/* Is the variable `name` named by an env=/unenv= rule (exact or glob)?  The
 * learner skips those. */
bool sb_policy_env_covers(const struct sb_policy *p, const char *name);

/* python-import= decision for a module (judged on its top-level name). */
bool sb_policy_import_allowed(const struct sb_policy *p, const char *module);

/* Is `tok` a word eval-syntax= accepts (a group or an AST node class)?  The
 * agent's reports and the learner check it: a learned line the loader would
 * refuse would make the whole learned file unreadable. */
bool sb_eval_syntax_known(const char *tok);

/* Does the policy set eval-namespace for this profile ("" = default)?  The
 * learner must not set a scalar twice (the loader refuses that). */
bool sb_policy_eval_namespace_set(const struct sb_policy *p, const char *profile);

/* python-api= decision for one registry function; false for unknown names. */
bool sb_policy_api_allowed(const struct sb_policy *p, const char *qualname, const struct sb_rule_ref **hit);

/* The template the loader used (also what the learner merges into). */
const char *sb_policy_template_path(const struct sb_policy *p);

/* ---- the agent -------------------------------------------------------- */

/* JSON handed to the in-interpreter agent (python/pysandboxes) over an inherited
 * descriptor; schema in doc/agent-protocol.md.  *out is malloc'ed. */
int sb_policy_agent_json(const struct sb_policy *p, char **out);
/* Its "import" and "eval" members only. */
int sb_policy_attr_json(const struct sb_policy *p, char **out);

/* ---- display ---------------------------------------------------------- */

/* The effective policy as text (for --check-config): every rule with its
 * origin, settings, implicit grants.  *out is malloc'ed. */
int sb_policy_describe(const struct sb_policy *p, char **out);

/* ---- inventories added for the kernel layers (src/policy_iter.c) -------- */

/* Call fn for each exec= rule in file order: `pattern` is a canonical path or
 * (glob true) an absolute glob.  Stops at and returns fn's first non-zero. */
int sb_policy_foreach_exec(const struct sb_policy *p,
			   int (*fn)(const char *pattern, bool glob, void *data), void *data);
/* Number of ignore= rules (Landlock cannot express them). */
size_t sb_policy_n_ignores(const struct sb_policy *p);

#endif
