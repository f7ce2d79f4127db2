/* Internals of the policy engine, shared by the src/pol_*.c files only.
 *
 * Memory: everything a loaded policy owns lives in one arena (pol_alloc and
 * friends) plus a few growable vectors; sb_policy_free() releases both.  The
 * compiled lookups (prefix tree, CIDR tables, API decisions) are built once at
 * load time and only read afterwards, so the check functions never allocate.
 */
#ifndef SB_POL_INT_H
#define SB_POL_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include "diag.h"
#include "policy.h"

/* ---- arena and vectors ------------------------------------------------ */

struct pol_chunk;
struct pol_arena {
	struct pol_chunk *head;
};

void *pol_alloc(struct pol_arena *a, size_t n);	/* zeroed; NULL on ENOMEM */
char *pol_strdup(struct pol_arena *a, const char *s);
char *pol_strndup(struct pol_arena *a, const char *s, size_t n);
char *pol_printf(struct pol_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pol_arena_free(struct pol_arena *a);

/* A growable array of fixed-size elements (malloc'ed, freed by pol_vec_free). */
struct pol_vec {
	void *v;
	size_t n, cap, elsz;
};

#define POL_VEC_INIT(type) { NULL, 0, 0, sizeof(type) }
void *pol_vec_push(struct pol_vec *vec);	/* zeroed new slot or NULL */
void pol_vec_free(struct pol_vec *vec);
#define POL_VEC_AT(vec, type, i) (&((type *)(vec)->v)[i])

/* A dynamic string for describe / messages (malloc'ed). */
struct pol_buf {
	char *s;
	size_t len, cap;
	bool oom;
};
void pol_buf_printf(struct pol_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pol_buf_puts(struct pol_buf *b, const char *s);

/* ---- matching helpers ------------------------------------------------- */

/* fnmatch-like glob on a counted subject: `*`, `?`, `[...]` (with `!`/`^`
 * and ranges), backslash escapes.  `*` also matches `/`, as Python's fnmatch.
 * Never allocates. */
bool pol_glob_match(const char *pat, const char *s, size_t n);
/* `*`-only glob (env names, eval names): anchored both ends. */
bool pol_star_match(const char *pat, const char *s, size_t n);

/* Similarity in [0,1] in the spirit of difflib's ratio (2*LCS/total). */
double pol_similarity(const char *a, const char *b);

/* ---- paths ------------------------------------------------------------ */

/* Lexical absolute path of `path` (after `~` expansion with `home`, joined to
 * `cwd` when relative, "." and ".." folded).  malloc'ed. */
char *pol_abspath(const char *path, const char *cwd, const char *home);
/* Display form of a file for messages: relative to cwd, else ~/..., else absolute. */
char *pol_display_path(struct pol_arena *a, const char *abs, const char *cwd, const char *home);

/* ---- loader context --------------------------------------------------- */

/* One configuration line after includes and comment stripping. */
struct pol_line {
	struct sb_rule_ref ref;	/* file (display form), line, text (the rule) */
	const char *abs_file;	/* absolute path of the file holding it ("" for CLI) */
	const char *value;	/* points into ref.text after the first '=' (or "") */
	size_t keylen;		/* length of the key before '=' */
	bool cli;		/* from the command line */
	bool claimed;		/* a parser took it */
};

struct pol_ctx {
	struct sb_policy *p;
	const struct sb_load_opts *o;
	struct sb_diag *d;
	const char *cwd;	/* canonical cwd */
	const char *home;	/* HOME from envp, else passwd */
	struct pol_vec lines;	/* struct pol_line * (arena: refs into them outlive the load) */
	struct pol_vec seen_files;	/* char * absolute paths read (include loop guard) */
	int sys_err;		/* first -errno that was not a configuration error */
};

static inline struct pol_line *pol_line_at(struct pol_ctx *c, size_t i)
{
	return *POL_VEC_AT(&c->lines, struct pol_line *, i);
}
struct pol_line *pol_new_line(struct pol_ctx *c);	/* arena line appended to c->lines */

/* Error / warning on a line: "In '<rule>', <detail>" style is the caller's job. */
void pol_err(struct pol_ctx *c, const struct pol_line *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pol_warn(struct pol_ctx *c, const struct pol_line *l, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The upstream reference of a rule: "<arg>" for the command line, "file(line)" otherwise. */
const char *pol_ruleref(struct pol_ctx *c, const struct sb_rule_ref *r);
bool pol_key_is(const struct pol_line *l, const char *key);
const char *pol_getenv(char *const *envp, const char *name, size_t n);
void pol_oom(struct pol_ctx *c);

/* pol_lex.c: read the config (or template), CLI rules and includes into c->lines. */
int pol_read_all(struct pol_ctx *c, const char *config_abs, bool exists, const char *template_path);
/* Expand ${VAR} / ${VAR:-default} in `in` from envp.  Returns a malloc'ed
 * string, or NULL with *bad set to the offending form (malloc'ed) on a syntax
 * error.  `any_subst` (may be NULL) tells whether a ${} form was present. */
char *pol_expand(const char *in, char *const *envp, char **bad, bool *any_subst);
void pol_substitute_lines(struct pol_ctx *c);

/* pol_settings.c */
void pol_parse_settings(struct pol_ctx *c);
void pol_parse_providers(struct pol_ctx *c);
void pol_parse_limits(struct pol_ctx *c);

/* pol_env.c */
void pol_parse_env(struct pol_ctx *c);
void pol_env_record_names(struct pol_ctx *c);

/* pol_path.c */
void pol_parse_paths(struct pol_ctx *c);
int pol_protect_files(struct sb_policy *p);
void pol_path_free(struct sb_policy *p);

/* pol_net.c */
void pol_parse_net(struct pol_ctx *c);
void pol_net_free(struct sb_policy *p);

/* pol_api.c */
void pol_parse_api(struct pol_ctx *c);
void pol_parse_import(struct pol_ctx *c);
void pol_parse_exec(struct pol_ctx *c);

/* pol_eval.c */
void pol_parse_eval(struct pol_ctx *c);

/* ---- the compiled policy ---------------------------------------------- */

struct pol_pnode;

enum pol_env_kind { POL_ENV_SET = 0, POL_ENV_UNSET };
struct pol_env_rule {
	enum pol_env_kind kind;
	const char *name;	/* name or `*` glob */
	const char *value;	/* raw value template (${} expanded at build time) */
	bool glob;		/* name contains `*` */
	bool copy_glob;		/* value is ${<glob>}: copy each match's own value */
	const struct sb_rule_ref *ref;
};

struct pol_ignore {
	const char *pattern;	/* as written */
	const char *match;	/* what is matched: the pattern, or cwd-anchored form */
	bool component;		/* no '/': matched against each path component */
	const struct sb_rule_ref *ref;
};

enum pol_eval_list { POL_EV_SYNTAX = 0, POL_EV_CALL, POL_EV_ATTRIBUTE, POL_EV_IMPORT, POL_EV_MAGIC, POL_EV__LISTS };
enum pol_eval_scalar {
	POL_EV_NAMESPACE = 0, POL_EV_TIMEOUT, POL_EV_MAX_ITERATIONS, POL_EV_MAX_CALL_DEPTH,
	POL_EV_MAX_DEPTH, POL_EV_MAX_NODES, POL_EV_MAX_ALLOC, POL_EV_MAX_LEAKED_THREADS, POL_EV__SCALARS
};
struct pol_eval_profile {
	const char *name;	/* "" = default */
	struct pol_vec list[POL_EV__LISTS];	/* const char * raw tokens ("DENY:x" for denials) */
	const struct sb_rule_ref *scalar_ref[POL_EV__SCALARS];
	const char *ns;		/* adaptive / closed / caller */
	long long value[POL_EV__SCALARS];	/* timeout in ms, sizes in bytes */
};

struct pol_api_cat_def {
	const char *name;
	const char *help;
	bool warned;
};
struct pol_api_func_def {
	const char *qualname;
	enum sb_api_category cat;
};

struct pol_api_rule {
	bool allow;
	const char *target;	/* "*", a category or a qualname */
	int cat;		/* category index, -1 for "*" and functions */
	int func;		/* function index, -1 unless a function */
	const struct sb_rule_ref *ref;
};

struct pol_exec_rule {
	const char *pattern;	/* canonical path, or glob */
	bool glob;
	const struct sb_rule_ref *ref;
};

struct sb_policy {
	struct pol_arena arena;
	struct sb_settings st;
	const char *template_path;
	const char *lock_ref_text;	/* "file(line)" of learn=false, or NULL */
	const char *cwd;

	struct pol_vec files;		/* const char * canonical policy files */
	struct pol_vec rules;		/* struct sb_rule_ref *: every line, in order */

	struct pol_vec env;		/* struct pol_env_rule */
	struct pol_vec env_names;	/* const char * names set by the policy at load */

	struct pol_pnode *root;		/* prefix tree */
	struct pol_vec ignores;		/* struct pol_ignore */
	struct pol_vec exposures;	/* struct sb_expose (explicit and implicit) */

	struct pol_vec net;		/* struct sb_net_rule: IPv4 then IPv6, each DENY first */
	size_t net_v4_end;		/* index of the first IPv6 entry */
	struct pol_vec hosts;		/* struct sb_host */

	bool import_all;
	struct pol_vec imports;		/* const char * */
	struct pol_vec import_refs;	/* const struct sb_rule_ref * per import */

	struct pol_vec api_rules;	/* struct pol_api_rule */
	bool *api_allow;		/* per registry function */
	const struct sb_rule_ref **api_ref;	/* deciding rule per function */
	bool api_cat_granted[SB_API__COUNT];

	struct pol_vec exec;		/* struct pol_exec_rule */

	struct pol_vec eval;		/* struct pol_eval_profile */

	struct pol_vec providers;	/* struct sb_provider_param */
	struct pol_vec implicit;	/* struct sb_rule_ref *: grants for describe */
};

extern const struct pol_api_cat_def pol_api_cats[];
extern const struct pol_api_func_def pol_api_funcs[];
extern const size_t pol_api_n_funcs;
int pol_api_find_func(const char *qualname);
int pol_api_find_cat(const char *name);

/* Eval defaults and names, for JSON and describe. */
extern const char *const pol_eval_list_keys[POL_EV__LISTS];
extern const char *const pol_eval_scalar_keys[POL_EV__SCALARS];
extern const long long pol_eval_defaults[POL_EV__SCALARS];

#endif
