/* Internals of the learner, shared by src/learn*.c and the unit tests only.
 *
 * The recorder (learn.c) filters events against the policy and stores what is
 * new in deduplicated sets (learn_store.c); the generator (learn_gen.c) turns
 * the sets into rule lines per block; the writer (learn_write.c) merges them
 * into the rule file; the journal (learn_journal.c) keeps a crash-proof copy
 * of every new item.  Only learn.c calls the policy, so everything else can be
 * tested on its own.
 */
#ifndef SB_LEARN_INT_H
#define SB_LEARN_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"
#include "event.h"
#include "learn.h"

/* ---- deduplicated sets ------------------------------------------------ */

/* A network destination as seen by the supervisor (IPv4-mapped already folded). */
struct lnet {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;
	unsigned proto;		/* SB_PROTO_TCP or SB_PROTO_UDP */
	unsigned dir;		/* SB_DIR_OUT or SB_DIR_IN */
};

enum {
	LI_CONTENT = 1u << 0,	/* paths: seen by a call that reads or changes content, not only metadata */
};

struct litem {
	char *key;		/* owned: path, name, or a composite key */
	unsigned bits;		/* paths: SB_ACC_* still needed; api: category */
	unsigned flags;		/* LI_* */
	unsigned long seq;	/* order of first sight */
	unsigned long why_seq;	/* order of the event that gave `why` */
	char *why;		/* owned: first Python location, or NULL */
	char *aux;		/* owned: dns: the host name; audit: the tip */
	unsigned long count;	/* audit: how many events */
	struct lnet net;	/* net and dns items */
};

struct lset {
	struct litem *items;	/* owned, insertion order */
	size_t n, cap;
	uint32_t *index;	/* owned, open addressing: 0 = free, else item index + 1 */
	size_t icap;
};

void lset_free(struct lset *s);
struct litem *lset_find(const struct lset *s, const char *key);
/* Find or add `key`; *is_new tells which.  The pointer is valid until the next add. */
int lset_add(struct lset *s, const char *key, struct litem **out, bool *is_new);

/* ---- the learner ------------------------------------------------------ */

enum { LA_FILES, LA_NET, LA_EXEC, LA_PROC, LA_ENV, LA_IMPORT, LA_API, LA_EVAL, LA__COUNT };

struct sb_learn {
	pthread_mutex_t lock;	/* on_event (event thread, agent thread) vs write/summary */
	const struct sb_policy *policy;	/* borrowed; NULL: nothing is allowed */
	char **env;		/* owned copy of the launching environment */
	char *cwd;		/* owned, canonical */
	char *home;		/* owned, canonical, or NULL */
	char *python_prefix;	/* owned, canonical, or NULL */
	char *python_base_prefix;	/* owned, canonical, or NULL */
	char *python_exe;	/* owned, canonical, or NULL */
	char *hosts_path;	/* owned, or NULL for /etc/hosts */
	char *datadir;		/* owned, or NULL for the installed data */
	bool keep_refusals;	/* opts->audit: keep refusals for the summary */

	unsigned long n_events;	/* events recorded */
	unsigned long order;	/* numbering of items and locations, in order of sight */
	struct lset paths, net, dns, env_names, imports, api, exec, audit;
	struct lset eval;	/* keys "<profile>\t<enum sb_eval_key digit>\t<token>" */
	unsigned cats;		/* python-api categories seen at the syscall level (bit per enum) */
	char *cat_why[SB_API__COUNT];	/* owned */
	unsigned long cat_why_seq[SB_API__COUNT];
	unsigned long audit_counts[LA__COUNT];
	unsigned long audit_dropped;	/* distinct refusals past the cap */

	/* journal (learn_journal.c) */
	int jfd;
	char *jpath;		/* owned */
	bool replaying;		/* replayed items are already in a journal */
	unsigned jpending;	/* lines written since the last fsync */
	struct timespec jlast;	/* time of the last fsync */
	struct jflush *jflush;	/* owned: the thread that fsyncs, or NULL: inline */
};

/* Add without asking the policy (the recorder asked already; tests call these
 * directly).  `why` may be NULL or "".  Return 0 or -ENOMEM. */
int sb_learn_store_path(struct sb_learn *l, const char *path, unsigned access, bool content,
			const char *why);
int sb_learn_store_net(struct sb_learn *l, const struct lnet *n, const char *why);
int sb_learn_store_dns(struct sb_learn *l, const char *name, int family, const void *addr);
int sb_learn_store_env(struct sb_learn *l, const char *name, const char *why);
int sb_learn_store_import(struct sb_learn *l, const char *module, const char *why);
int sb_learn_store_api(struct sb_learn *l, const char *qualname, int category, const char *why);
int sb_learn_store_category(struct sb_learn *l, int category, const char *why);
int sb_learn_store_exec(struct sb_learn *l, const char *path, const char *why);
/* An eval feature; the token and profile must be what the agent parser
 * accepts (src/agent.c), -EINVAL otherwise. */
int sb_learn_store_eval(struct sb_learn *l, const char *profile, enum sb_eval_key k, const char *token,
			const char *why);

/* The value of `name` in the launching environment, or NULL. */
const char *sb_learn_getenv(const struct sb_learn *l, const char *name);

/* Data files (rules/stdlib-modules.txt ...): the installed copy, else the
 * source tree's.  *out is malloc'ed.  -ENOENT when none exists. */
int sb_learn_data_path(const struct sb_learn *l, const char *name, char **out);

/* ---- generation (learn_gen.c) ----------------------------------------- */

enum lblock {
	LB_ENVS = 0,	/* learning_guard_envs */
	LB_FILES,	/* learning_guard_files */
	LB_EXEC,	/* learning_guard_exec (when the file has it, else merged into files) */
	LB_SOCKET,	/* learning_guard_socket */
	LB_IMPORT,	/* learning_guard_import */
	LB_API,		/* learning_guard_api */
	LB_EVAL,	/* learning_guard_eval */
	LB__COUNT
};

/* The marker name of a block, "learning_guard_files"... */
const char *sb_learn_block_marker(enum lblock b);

enum lline_kind {
	LL_RULE = 0,	/* a rule line, skipped when the file has it verbatim */
	LL_HEADER,	/* a comment heading the rules after it, dropped when all of them are */
	LL_NOTE,	/* a comment for the next rule only, dropped with it */
};

struct lline {
	enum lline_kind kind;
	char *text;	/* owned */
	char *why;	/* owned: "# why: ..." comment text for a rule, or NULL */
};

struct lblockv {
	struct lline *v;	/* owned */
	size_t n, cap;
};

struct lrules {
	struct lblockv b[LB__COUNT];
};

void sb_lrules_free(struct lrules *r);
/* Append a line (copied; `why` becomes "# why: ..."). */
int sb_lblock_push(struct lblockv *bv, enum lline_kind kind, const char *text, const char *why);
/* The <learning_guard_eval> lines (learn_gen_eval.c). */
int sb_learn_gen_eval(const struct sb_learn *l, struct lblockv *bv);
size_t sb_lrules_count(const struct lrules *r);	/* rule lines, headers excluded */

/* Generalise everything learned into rule lines (reference §3).  Return 0,
 * -ENOMEM.  Warnings (a data file missing) go into diag. */
int sb_learn_generate(struct sb_learn *l, struct lrules *out, struct sb_diag *diag);

/* Pieces of the generalisation, exposed for the table-driven tests. */

/* The expose= value for a canonical directory: ${VAR}/x under a tool
 * directory, ./x under the cwd, ~/x under HOME, ${TMPDIR:-/tmp}/x under the
 * temporary directory, else the absolute path.  malloc'ed or NULL. */
char *sb_learn_spell_dir(const struct sb_learn *l, const char *dir);

/* The directory an access to `path` needs (a directory itself, a file's
 * parent; for writes to what no longer exists, the nearest existing
 * ancestor).  Returns 1 with *out malloc'ed, 0 when nothing is to be learned
 * (read of something that does not exist, /proc, /sys, /dev, the root). */
int sb_learn_reduce_path(const struct sb_learn *l, const char *path, unsigned access, char **out);

enum imp_class { IMP_DANGEROUS = 0, IMP_STANDARD, IMP_DEPRECATED, IMP_EXTERNAL, IMP__COUNT };

struct imp_lists;	/* the three module lists */
int sb_imp_lists_load(const struct sb_learn *l, struct imp_lists **out, struct sb_diag *diag);
void sb_imp_lists_free(struct imp_lists *il);
enum imp_class sb_imp_classify(const struct imp_lists *il, const char *module);

/* Split `names` (sorted) into "python-import=a, b, c" lines of at most
 * ~width characters of names each. */
int sb_wrap_imports(char *const *names, size_t n, size_t width, char ***lines, size_t *n_lines);

/* The help text of an api category ("concurrency primitives"), and whether
 * its header carries the warning sign. */
const char *sb_api_category_help(int cat);
bool sb_api_category_warned(int cat);

/* ---- journal (learn_journal.c) ---------------------------------------- */

/* Append one item of `kind` ("path", "net", "dns", "env", "import", "api",
 * "cat", "exec") to the journal when one is open and not replaying. */
void sb_learn_journal_item(struct sb_learn *l, const char *kind, const struct litem *it);

/* ---- small helpers ---------------------------------------------------- */

/* Does `path` lie under `dir` (equal, or dir + '/' + ...)?  "/" contains all. */
bool sb_path_under(const char *path, const char *dir);
/* A growable string. */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};
void sbuf_add(struct sbuf *b, const char *s);
void sbuf_addn(struct sbuf *b, const char *s, size_t n);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
