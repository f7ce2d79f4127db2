/* The recorder: every event of a learning (or audit) run passes here.
 *
 * It keeps only what the current policy does not already allow, so that a
 * learned run merged into an existing file adds only new lines, and keeps it
 * deduplicated: a program opening the same file ten thousand times costs one
 * hash lookup per event after the first.  Refusals are also kept, once each,
 * for the --audit summary.  This is the only part of the learner that asks
 * the policy.
 */
#include "config.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn_int.h"
#include "log.h"

/* Distinct refusals kept for the audit summary; past this they are counted. */
#define AUDIT_MAX 10000

/* ---- filters ---------------------------------------------------------- */

/* System calls that only look at a path (existence, times, link target):
 * on a directory they are mostly path walks (realpath, the import system's
 * stat of sys.path entries), see learn_gen.c. */
static bool syscall_is_meta(const char *sc)
{
	static const char *const meta[] = {
		"stat", "lstat", "newfstatat", "fstatat64", "statx", "access", "faccessat",
		"faccessat2", "readlink", "readlinkat", "getxattr", "lgetxattr", "listxattr",
		"llistxattr", "statfs",
	};

	for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
		if (strcmp(sc, meta[i]) == 0)
			return true;
	return false;
}

/* Never learned (reference §3): the kernel's pseudo file systems, whose
 * entries name processes and devices rather than data, and the
 * interpreter's own tree. */
static bool never_learned(const struct sb_learn *l, const char *path)
{
	if (sb_path_under(path, "/proc") || sb_path_under(path, "/sys") || sb_path_under(path, "/dev"))
		return true;
	if (l->python_prefix && sb_path_under(path, l->python_prefix))
		return true;
	if (l->python_base_prefix && sb_path_under(path, l->python_base_prefix))
		return true;
	return false;
}

static bool valid_env_name(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return false;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_'))
			return false;
	return true;
}

/* ---- checked adds (events and journal replay) ------------------------- */

static int learn_path(struct sb_learn *l, const char *path, unsigned access, bool content,
		      const char *why)
{
	static const unsigned bits[] = { SB_ACC_READ, SB_ACC_WRITE, SB_ACC_EXEC };
	size_t len = strlen(path);
	unsigned need = 0;

	if (path[0] != '/' || never_learned(l, path))
		return 0;
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		/* Starting a file needs it exposed for reading, as a read does. */
		unsigned ask = bits[i] == SB_ACC_EXEC ? SB_ACC_READ : bits[i];

		if (!(access & bits[i]))
			continue;
		if (!l->policy || sb_policy_check_path(l->policy, path, len, ask, NULL) != SB_PATH_ALLOW)
			need |= bits[i];
	}
	if (!need)
		return 0;
	return sb_learn_store_path(l, path, need, content, why);
}

static int learn_net(struct sb_learn *l, const struct lnet *n, const char *why)
{
	if (l->policy &&
	    sb_policy_check_net(l->policy, n->family, n->addr, n->port, n->proto, n->dir, NULL) == SB_NET_ALLOW)
		return 0;
	return sb_learn_store_net(l, n, why);
}

/* Env items with this in `bits` were written by the program: never learned,
 * whatever reads came before or after (load_dotenv() reads, then sets, every
 * name of a .env file).  learn_gen.c skips them. */
#define ENV_WRITTEN 1u

static int learn_env(struct sb_learn *l, const char *name, const char *why)
{
	const struct litem *it;

	if (!valid_env_name(name) || (l->policy && sb_policy_env_covers(l->policy, name)))
		return 0;
	if ((it = lset_find(&l->env_names, name)) && (it->bits & ENV_WRITTEN))
		return 0;
	return sb_learn_store_env(l, name, why);
}

/* The program set or deleted `name` (agent, op "write"). */
static int env_written(struct sb_learn *l, const char *name)
{
	struct litem *it;
	bool is_new;
	int rc;

	if (!valid_env_name(name))
		return 0;
	if ((rc = lset_add(&l->env_names, name, &it, &is_new)))
		return rc;
	if (is_new)
		it->seq = ++l->order;
	if (is_new || !(it->bits & ENV_WRITTEN)) {
		it->bits |= ENV_WRITTEN;
		sb_learn_journal_item(l, "env", it);
	}
	return 0;
}

static int learn_import(struct sb_learn *l, const char *module, const char *why)
{
	char top[SB_EV_NAME_MAX];

	/* Judged on the top-level name (reference §2.6); relative imports name
	 * no top-level module. */
	snprintf(top, sizeof(top), "%s", module);
	top[strcspn(top, ".")] = '\0';
	if (!top[0] || strcmp(top, "__main__") == 0 || strcmp(top, "pysandboxes") == 0)
		return 0;
	if (l->policy && sb_policy_import_allowed(l->policy, top))
		return 0;
	return sb_learn_store_import(l, top, why);
}

static int learn_eval(struct sb_learn *l, const char *profile, enum sb_eval_key k, const char *token,
		      const char *why)
{
	int rc = sb_learn_store_eval(l, profile, k, token, why);

	/* A token the file could not hold: the agent's bug or a forgery, and
	 * never a rule; the other events go on being learned. */
	return rc == -EINVAL ? 0 : rc;
}

/* A journal key "<profile>\t<k>\t<token>" back into its parts. */
static int replay_eval(struct sb_learn *l, const char *key, const char *why)
{
	char profile[SB_EV_NAME_MAX];
	const char *t1 = strchr(key, '\t');
	size_t pn = t1 ? (size_t)(t1 - key) : 0;

	if (!t1 || pn >= sizeof(profile) || t1[1] < '0' || t1[1] >= '0' + SB_EVAL__COUNT || t1[2] != '\t')
		return 0;
	memcpy(profile, key, pn);
	profile[pn] = '\0';
	return learn_eval(l, profile, (enum sb_eval_key)(t1[1] - '0'), t1 + 3, why);
}

static int learn_api(struct sb_learn *l, const char *qualname, int category, const char *why)
{
	if (!qualname[0] || (l->policy && sb_policy_api_allowed(l->policy, qualname, NULL)))
		return 0;
	return sb_learn_store_api(l, qualname, category, why);
}

static int learn_category(struct sb_learn *l, int category, const char *why)
{
	if (category < 0 || category >= SB_API__COUNT)
		return 0;
	if (l->policy && sb_policy_api_granted(l->policy, (enum sb_api_category)category))
		return 0;
	return sb_learn_store_category(l, category, why);
}

/* The exec= line alone (the journal holds the category and the path apart). */
static int learn_exec_line(struct sb_learn *l, const char *path, const char *why)
{
	if (path[0] != '/' || (l->policy && sb_policy_check_exec(l->policy, path, NULL)))
		return 0;
	return sb_learn_store_exec(l, path, why);
}

static int learn_exec(struct sb_learn *l, const char *path, const char *why)
{
	int rc;

	if (path[0] != '/')
		return 0;
	if ((rc = learn_exec_line(l, path, why)))
		return rc;
	/* Starting any program is the process-exec category's (SPEC §3). */
	if ((rc = learn_category(l, SB_API_PROCESS_EXEC, why)))
		return rc;
	return learn_path(l, path, SB_ACC_EXEC, true, why);
}

/* ---- events ----------------------------------------------------------- */

static bool event_lnet(const struct sb_event *ev, struct lnet *n)
{
	memset(n, 0, sizeof(*n));
	n->proto = ev->proto & SB_PROTO_UDP ? SB_PROTO_UDP : SB_PROTO_TCP;
	n->dir = ev->dir & SB_DIR_IN ? SB_DIR_IN : SB_DIR_OUT;
	if (ev->addr.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ev->addr;

		n->family = AF_INET;
		memcpy(n->addr, &s4->sin_addr, 4);
		n->port = ntohs(s4->sin_port);
		return true;
	}
	if (ev->addr.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ev->addr;

		n->port = ntohs(s6->sin6_port);
		/* IPv4-mapped addresses are judged, hence learned, as IPv4. */
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			n->family = AF_INET;
			memcpy(n->addr, &s6->sin6_addr.s6_addr[12], 4);
		} else {
			n->family = AF_INET6;
			memcpy(n->addr, &s6->sin6_addr, 16);
		}
		return true;
	}
	return false;
}

static bool from_supervisor(enum sb_event_kind kind)
{
	return kind == SB_EV_PATH || kind == SB_EV_UNIX || kind == SB_EV_NET || kind == SB_EV_EXEC ||
	       kind == SB_EV_PROC;
}

static int family_of(const struct sb_event *ev)
{
	switch (ev->kind) {
	case SB_EV_PATH:
	case SB_EV_UNIX: return LA_FILES;
	case SB_EV_NET:
	case SB_EV_DNS: return LA_NET;
	case SB_EV_EXEC: return LA_EXEC;
	case SB_EV_PROC: return LA_PROC;
	case SB_EV_ENV: return LA_ENV;
	case SB_EV_IMPORT: return LA_IMPORT;
	case SB_EV_API: return LA_API;
	case SB_EV_EVAL: return LA_EVAL;
	}
	return LA_FILES;
}

/* Keep a refusal once (by kind, intent and object), with its human line. */
static int audit_add(struct sb_learn *l, const struct sb_event *ev)
{
	char key[PATH_MAX + SB_EV_NAME_MAX + 1024], line[PATH_MAX + SB_EV_NAME_MAX + 1024], *nl;
	struct sb_event *k;
	struct litem *it;
	bool is_new;
	int rc;

	l->audit_counts[family_of(ev)]++;
	/* The key: the notice without its location, so the same access from two
	 * places counts once.  The event is too big for this thread's stack twice. */
	if (!(k = malloc(sizeof(*k))))
		return -ENOMEM;
	*k = *ev;
	k->pyloc[0] = '\0';
	k->from_eval = false;
	rc = sb_event_to_notice(k, key, sizeof(key));
	free(k);
	if (rc < 0)
		return 0;
	if (!lset_find(&l->audit, key) && l->audit.n >= AUDIT_MAX) {
		l->audit_dropped++;
		return 0;
	}
	if ((rc = lset_add(&l->audit, key, &it, &is_new)))
		return rc;
	it->count++;
	if (is_new) {
		it->seq = ++l->order;
		if (sb_event_to_notice(ev, line, sizeof(line)) > 0) {
			if ((nl = strchr(line, '\n')))
				*nl = '\0';
			if (!(it->aux = strdup(line)))
				return -ENOMEM;
		}
	}
	return 0;
}

static int record_locked(struct sb_learn *l, const struct sb_event *ev)
{
	const char *why = ev->pyloc;
	struct lnet n;
	int rc = 0;

	l->n_events++;
	/* The bytecode cache (log.h): what enforce mode refuses without a word
	 * is no violation, and a writable cache is code for the next run. */
	if (sb_event_bytecode_write(ev))
		return 0;
	if (l->keep_refusals && ev->verdict != SB_ALLOWED && (rc = audit_add(l, ev)))
		return rc;
	/* The supervisor allowed it under this very policy, with rules the
	 * check functions alone do not show (the path walk to an exposed
	 * directory, descriptors the program already holds): nothing to learn.
	 * The agent's verdicts are not trusted for this: its events are judged
	 * here, against the policy. */
	if (ev->verdict == SB_ALLOWED && from_supervisor(ev->kind))
		return 0;
	switch (ev->kind) {
	case SB_EV_PATH:
		/* ev->err is the errno the policy would give (ENOENT for a path
		 * not exposed), not the call's own result: whether the path
		 * existed is looked at when generalising (learn_gen.c). */
		return learn_path(l, ev->path, ev->access ? ev->access : SB_ACC_READ,
				  !syscall_is_meta(ev->syscall), why);
	case SB_EV_UNIX:
		/* connect/send on a socket file needs it writable (reference §2.4). */
		return learn_path(l, ev->path, ev->access ? ev->access : SB_ACC_READ | SB_ACC_WRITE, true, why);
	case SB_EV_EXEC:
		/* The interpreter's own launch is always allowed: not a rule. */
		if (l->n_events == 1 && l->python_exe && strcmp(ev->path, l->python_exe) == 0)
			return 0;
		return learn_exec(l, ev->path, why);
	case SB_EV_NET:
		/* No protocol: a socket no net= rule can describe (raw, packet). */
		if (!ev->proto)
			return 0;
		return event_lnet(ev, &n) ? learn_net(l, &n, why) : 0;
	case SB_EV_PROC:
		return learn_category(l, ev->category, why);
	case SB_EV_ENV:
		if (ev->access & SB_ACC_WRITE)
			return env_written(l, ev->name);
		return learn_env(l, ev->name, why);
	case SB_EV_IMPORT:
		return learn_import(l, ev->name, why);
	case SB_EV_API:
		return learn_api(l, ev->name, ev->category, why);
	case SB_EV_DNS:
		if (!ev->name[0] || !event_lnet(ev, &n))
			return 0;
		return sb_learn_store_dns(l, ev->name, n.family, n.addr);
	case SB_EV_EVAL:
		/* The agent checked the token against the profile it runs (built
		 * from this policy): the supervisor cannot judge a syntax node.
		 * Learning trusts the learned program anyway (reference §3). */
		return learn_eval(l, ev->eval_profile, ev->eval_key, ev->name, why);
	}
	return 0;
}

void sb_learn_record(struct sb_learn *l, const struct sb_event *ev)
{
	pthread_mutex_lock(&l->lock);
	/* Out of memory loses this event only; the run goes on (the journal,
	 * when open, still holds what came before). */
	(void)record_locked(l, ev);
	pthread_mutex_unlock(&l->lock);
}

/* ---- journal replay --------------------------------------------------- */

static const char *jstr(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static long jnum(const cJSON *o, const char *name, long dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsNumber(v) ? (long)v->valuedouble : dflt;
}

static bool unhex(const char *hex, uint8_t *out, size_t n)
{
	if (!hex || strlen(hex) != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return false;
		out[i] = (uint8_t)b;
	}
	return true;
}

/* One journal line; false when it is not one we wrote (torn, foreign). */
static bool replay_one(struct sb_learn *l, const cJSON *o, int *rc)
{
	const char *k = jstr(o, "k"), *key = jstr(o, "key"), *why = jstr(o, "why");
	struct lnet n = { 0 };

	*rc = 0;
	if (!k)
		return false;
	if (strcmp(k, "cat") == 0) {
		*rc = learn_category(l, (int)jnum(o, "bits", -1), why);
		return true;
	}
	if (strcmp(k, "net") == 0 || strcmp(k, "dns") == 0) {
		n.family = (int)jnum(o, "fam", 0);
		if ((n.family != AF_INET && n.family != AF_INET6) ||
		    !unhex(jstr(o, "addr"), n.addr, n.family == AF_INET6 ? 16 : 4))
			return false;
		if (k[0] == 'd') {
			*rc = key ? sb_learn_store_dns(l, key, n.family, n.addr) : 0;
			return key != NULL;
		}
		n.port = (uint16_t)jnum(o, "port", 0);
		n.proto = (unsigned)jnum(o, "proto", SB_PROTO_TCP);
		n.dir = (unsigned)jnum(o, "dir", SB_DIR_OUT);
		*rc = learn_net(l, &n, why);
		return true;
	}
	if (!key)
		return false;
	if (strcmp(k, "path") == 0)
		*rc = learn_path(l, key, (unsigned)jnum(o, "bits", SB_ACC_READ), jnum(o, "c", 1) != 0, why);
	else if (strcmp(k, "env") == 0)
		*rc = (jnum(o, "bits", 0) & ENV_WRITTEN) ? env_written(l, key) : learn_env(l, key, why);
	else if (strcmp(k, "import") == 0)
		*rc = learn_import(l, key, why);
	else if (strcmp(k, "api") == 0)
		*rc = learn_api(l, key, (int)jnum(o, "bits", -1), why);
	else if (strcmp(k, "exec") == 0)
		*rc = learn_exec_line(l, key, why);
	else if (strcmp(k, "eval") == 0)
		*rc = replay_eval(l, key, why);
	else
		return false;
	return true;
}

int sb_learn_replay(struct sb_learn *l, const char *path, unsigned long *n_items)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned long count = 0;
	int rc = 0;

	if (n_items)
		*n_items = 0;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	pthread_mutex_lock(&l->lock);
	l->replaying = true;
	while (getline(&line, &cap, f) > 0) {
		cJSON *o = cJSON_Parse(line);

		if (!o)
			continue;	/* the line a SIGKILL cut short */
		if (replay_one(l, o, &rc))
			count++;
		cJSON_Delete(o);
		if (rc)
			break;
	}
	l->replaying = false;
	pthread_mutex_unlock(&l->lock);
	free(line);
	fclose(f);
	if (n_items)
		*n_items = count;
	return rc;
}
