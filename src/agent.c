/* The channel to the in-interpreter agent: environment of the child, rules out,
 * events back (see agent.h and doc/agent-protocol.md). */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent-paths.h"
#include "agent.h"

/* Rules larger than one record are sent in pieces of this size; the agent
 * joins records until the terminating newline. */
#define RULES_CHUNK (32 * 1024)
/* A dns message names at most this many addresses (the rest is ignored). */
#define DNS_ADDRS_MAX 64

struct sb_agent {
	int fd;			/* the supervisor's end */
	int child_fd;		/* the agent's end until sb_agent_prepare() hands it over */
	const struct sb_policy *policy;	/* the rules, built by the reader thread */
	enum sb_mode mode;
	char *rules;		/* rules JSON with "mode", newline-terminated */
	size_t rules_len;
	sb_event_fn *fn;
	void *data;
	pthread_t thread;
	bool started, joined;
	atomic_bool rules_sent;	/* refusal notes only after the rules */
	pthread_mutex_t send_lock;	/* the rules, then one refusal note at a time */
};

/* ---- options ------------------------------------------------------------ */

/* CPython short options taking an argument: the rest of the token, or the
 * next token, is that argument and holds no flags. */
static bool opt_takes_arg(char c)
{
	return c == 'W' || c == 'X' || c == 'c' || c == 'm';
}

/* Call fn(flag, argument) for each single-letter flag of the options, with
 * the argument of one that takes one (else NULL), until fn returns true:
 * then return true. */
static bool opt_find(const char *const *py_opts, size_t n,
		     bool (*fn)(char flag, const char *arg))
{
	for (size_t i = 0; i < n; i++) {
		const char *o = py_opts[i];

		if (!o || o[0] != '-' || o[1] == '-' || o[1] == '\0')
			continue;
		for (const char *c = o + 1; *c; c++) {
			if (!opt_takes_arg(*c)) {
				if (fn(*c, NULL))
					return true;
				continue;
			}
			/* The rest of the token, else the next one, is its argument. */
			if (fn(*c, c[1] ? c + 1 : i + 1 < n ? py_opts[i + 1] : NULL))
				return true;
			if (c[1] == '\0')
				i++;
			break;
		}
	}
	return false;
}

static bool keeps_site_out(char flag, const char *arg)
{
	(void)arg;
	return flag == 'I' || flag == 'E' || flag == 'S';
}

bool sb_agent_loadable(const char *const *py_opts, size_t n)
{
	return !opt_find(py_opts, n, keeps_site_out);
}

static bool no_bytecode(char flag, const char *arg)
{
	return flag == 'B' || (flag == 'X' && arg && strncmp(arg, "pycache_prefix", 14) == 0);
}

bool sb_agent_writes_bytecode(const char *const *py_opts, size_t n, char *const *envp)
{
	static const char *const says_no[] = { "PYTHONDONTWRITEBYTECODE=", "PYTHONPYCACHEPREFIX=" };

	for (size_t k = 0; k < sizeof(says_no) / sizeof(*says_no); k++) {
		size_t kl = strlen(says_no[k]);

		for (char *const *e = envp; e && *e; e++)
			if (strncmp(*e, says_no[k], kl) == 0 && (*e)[kl])
				return false;
	}
	return !opt_find(py_opts, n, no_bytecode);
}

/* ---- where the bootstrap and the package are ----------------------------- */

static bool file_exists(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >= (int)sizeof(path))
		return false;
	return access(path, R_OK) == 0;
}

/* True when this executable lives in the configured bindir, i.e. it is the
 * installed python-sb and should use the installed agent. */
static bool running_installed(void)
{
	char exe[PATH_MAX], bindir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0 || !realpath(SB_AGENT_BINDIR, bindir))
		return false;
	exe[n] = '\0';
	size_t bl = strlen(bindir);
	return strncmp(exe, bindir, bl) == 0 && exe[bl] == '/' && !strchr(exe + bl + 1, '/');
}

int sb_agent_paths(const char **boot, const char **pkg)
{
	static const char *const installed[2] = { SB_DATADIR "/bootstrap", SB_PYTHONDIR };
	static const char *const source[2] = { SB_SRCDIR "/python/bootstrap", SB_SRCDIR "/python" };
	const char *const *order[2] = { source, installed };

	if (running_installed()) {
		order[0] = installed;
		order[1] = source;
	}
	/* Canonical spellings: a VPATH build's source dir reads "build/../..",
	 * and the agent recognises its own frames by comparing file names with
	 * its normalised directory; a ".." spelling would make its own calls
	 * look like the application's. */
	static char boot_canon[PATH_MAX], pkg_canon[PATH_MAX];

	for (int i = 0; i < 2; i++) {
		if (file_exists(order[i][0], "sitecustomize.py") &&
		    file_exists(order[i][1], "pysandboxes/__init__.py")) {
			if (!realpath(order[i][0], boot_canon) || !realpath(order[i][1], pkg_canon))
				return -errno;
			*boot = boot_canon;
			*pkg = pkg_canon;
			return 0;
		}
	}
	return -ENOENT;
}

static int grant_dir(struct sb_policy *p, const char *dir, const char *sub)
{
	char path[PATH_MAX], canon[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s%s", dir, sub) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (!realpath(path, canon))
		return -errno;
	return sb_policy_grant(p, canon, SB_ACC_READ, "python-sb agent");
}

/* The program reads the bootstrap and the package, nothing around them. */
static int grant_agent(struct sb_policy *p, const char *boot, const char *pkg)
{
	int err = grant_dir(p, boot, "");

	return err ? err : grant_dir(p, pkg, "/pysandboxes");
}

/* ---- the child's environment -------------------------------------------- */

static char **env_find(char **env, const char *key)
{
	size_t kl = strlen(key);

	for (char **e = env; e && *e; e++)
		if (strncmp(*e, key, kl) == 0 && (*e)[kl] == '=')
			return e;
	return NULL;
}

/* Set key=value in the malloc'ed array, replacing an existing entry. */
static int env_set(char ***envp, const char *key, const char *value)
{
	char *entry;
	char **slot;

	if (asprintf(&entry, "%s=%s", key, value) < 0)
		return -ENOMEM;
	slot = env_find(*envp, key);
	if (slot) {
		free(*slot);
		*slot = entry;
		return 0;
	}
	size_t n = 0;
	while (*envp && (*envp)[n])
		n++;
	char **grown = realloc(*envp, (n + 2) * sizeof(*grown));
	if (!grown) {
		free(entry);
		return -ENOMEM;
	}
	grown[n] = entry;
	grown[n + 1] = NULL;
	*envp = grown;
	return 0;
}

static int env_setup(char ***envp, int child_fd, const char *boot, const char *pkg)
{
	char fdbuf[16], *pythonpath = NULL;
	char **old;
	int err;

	snprintf(fdbuf, sizeof(fdbuf), "%d", child_fd);
	err = env_set(envp, SB_AGENT_ENV_FD, fdbuf);
	if (!err)
		err = env_set(envp, SB_AGENT_ENV_PKGDIR, pkg);
	if (err)
		return err;
	/* The agent removes exactly this prefix again, restoring the value the
	 * policy gave (or removing the variable when it had none). */
	old = env_find(*envp, "PYTHONPATH");
	if (old && asprintf(&pythonpath, "%s:%s", boot, *old + strlen("PYTHONPATH=")) < 0)
		return -ENOMEM;
	err = env_set(envp, "PYTHONPATH", pythonpath ? pythonpath : boot);
	free(pythonpath);
	return err;
}

/* ---- prepare / start ---------------------------------------------------- */

static const char *mode_name(enum sb_mode mode)
{
	switch (mode) {
	case SB_MODE_LEARN:
		return "learn";
	case SB_MODE_AUDIT:
		return "audit";
	case SB_MODE_ENFORCE:
		break;
	}
	return "enforce";
}

/* The policy's JSON object with "mode" added first and a newline at the end. */
static int rules_with_mode(const struct sb_policy *p, enum sb_mode mode, char **out, size_t *len)
{
	char *json = NULL;
	int err = sb_policy_agent_json(p, &json);

	if (err)
		return err;
	const char *body = json + strspn(json, " \t\r\n");
	if (*body != '{') {
		free(json);
		return -EINVAL;
	}
	body++;
	body += strspn(body, " \t\r\n");
	int n = asprintf(out, "{\"mode\":\"%s\"%s%s\n", mode_name(mode), *body == '}' ? "" : ",", body);
	free(json);
	if (n < 0)
		return -ENOMEM;
	/* The agent reads up to the first newline: a pretty-printed document
	 * has newlines only as white space, never inside a string. */
	for (char *c = *out; c < *out + n - 1; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	*len = (size_t)n;
	return 0;
}

int sb_agent_prepare(struct sb_policy *p, enum sb_mode mode, char ***envp_inout,
		     struct sb_agent **out, int *child_fd)
{
	struct sb_agent *a = NULL;
	const char *boot, *pkg;
	int sv[2], err;

	*out = NULL;
	*child_fd = -1;
	if (!sb_policy_settings(p)->py_sandbox)
		return 0;
	err = sb_agent_paths(&boot, &pkg);
	if (!err)
		err = grant_agent(p, boot, pkg);
	if (err)
		return err;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = a->child_fd = -1;
	pthread_mutex_init(&a->send_lock, NULL);
	a->policy = p;
	a->mode = mode;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		err = -errno;
		goto out;
	}
	a->fd = sv[0];
	a->child_fd = sv[1];
	err = env_setup(envp_inout, a->child_fd, boot, pkg);
out:
	if (err) {
		sb_agent_free(a);
		return err;
	}
	*out = a;
	*child_fd = a->child_fd;
	a->child_fd = -1;	/* the caller's now */
	return 0;
}

/* Holds send_lock throughout, so that a refusal note never lands in the
 * middle of the rules; sb_agent_refusal() only tries the lock.  The rules
 * are built here, on the reader thread, while the program starts: not on
 * the way to its spawn.  If they cannot be, the channel is shut: the agent
 * reads no rules and stops the program (exit status 255), as it does when
 * the channel breaks. */
static void send_rules(struct sb_agent *a)
{
	size_t off = 0;

	pthread_mutex_lock(&a->send_lock);
	if (rules_with_mode(a->policy, a->mode, &a->rules, &a->rules_len) != 0) {
		shutdown(a->fd, SHUT_RDWR);
		pthread_mutex_unlock(&a->send_lock);
		return;
	}
	while (off < a->rules_len) {
		size_t n = a->rules_len - off < RULES_CHUNK ? a->rules_len - off : RULES_CHUNK;
		ssize_t w = send(a->fd, a->rules + off, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;	/* the program is gone or never read: nothing to tell */
		off += (size_t)w;
	}
	if (off == a->rules_len)
		atomic_store(&a->rules_sent, true);
	pthread_mutex_unlock(&a->send_lock);
}

static void *reader_main(void *arg)
{
	struct sb_agent *a = arg;
	char *buf = malloc(SB_AGENT_MSG_MAX);

	send_rules(a);
	if (!buf)
		return NULL;
	for (;;) {
		/* MSG_TRUNC: the real length of the record, so that an oversized
		 * one is recognised and dropped whole. */
		ssize_t n = recv(a->fd, buf, SB_AGENT_MSG_MAX, MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (n > SB_AGENT_MSG_MAX)
			continue;
		/* A record may hold several newline-separated messages. */
		for (char *p = buf, *end = buf + n; p < end;) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = (size_t)((nl ? nl : end) - p);

			if (len)
				sb_agent_parse_message(p, len, a->fn, a->data);
			p += len + 1;
		}
	}
	free(buf);
	return NULL;
}

int sb_agent_start(struct sb_agent *a, sb_event_fn *fn, void *data)
{
	int err;

	if (!a)
		return 0;
	if (a->started)
		return -EALREADY;
	a->fn = fn;
	a->data = data;
	err = pthread_create(&a->thread, NULL, reader_main, a);
	if (err)
		return -err;
	a->started = true;
	return 0;
}

void sb_agent_finish(struct sb_agent *a)
{
	if (!a || !a->started || a->joined)
		return;
	/* Queued records are still delivered after SHUT_RD; then recv() returns
	 * 0 even if a stray process still holds the agent's end. */
	shutdown(a->fd, SHUT_RDWR);
	pthread_join(a->thread, NULL);
	a->joined = true;
}

void sb_agent_free(struct sb_agent *a)
{
	if (!a)
		return;
	sb_agent_finish(a);
	if (a->fd >= 0)
		close(a->fd);
	if (a->child_fd >= 0)
		close(a->child_fd);
	pthread_mutex_destroy(&a->send_lock);
	free(a->rules);
	free(a);
}

/* ---- refusal notes -------------------------------------------------------- */

static const char *refusal_kind(enum sb_event_kind k)
{
	switch (k) {
	case SB_EV_PATH:
		return "path";
	case SB_EV_UNIX:
		return "unix";
	case SB_EV_NET:
		return "net";
	case SB_EV_EXEC:
		return "exec";
	default:
		return NULL;
	}
}

static int net_address(const struct sockaddr_storage *ss, char *buf, size_t cap, unsigned *port)
{
	const void *addr;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		addr = &in->sin_addr;
		*port = ntohs(in->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		addr = &in6->sin6_addr;
		*port = ntohs(in6->sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	return inet_ntop(ss->ss_family, addr, buf, (socklen_t)cap) ? 0 : -errno;
}

static cJSON *refusal_json(const struct sb_event *ev, const char *text, const char *kind)
{
	cJSON *o = cJSON_CreateObject();
	char host[INET6_ADDRSTRLEN];
	unsigned port = 0;
	bool ok = o && cJSON_AddStringToObject(o, "kind", "refusal") &&
		  cJSON_AddStringToObject(o, "object", kind) &&
		  cJSON_AddNumberToObject(o, "tid", ev->tid) &&
		  cJSON_AddNumberToObject(o, "errno", ev->err) &&
		  cJSON_AddStringToObject(o, "text", text);

	if (ok && ev->kind == SB_EV_NET) {
		ok = net_address(&ev->addr, host, sizeof(host), &port) == 0 &&
		     cJSON_AddStringToObject(o, "host", host) &&
		     cJSON_AddNumberToObject(o, "port", port);
	} else if (ok) {
		ok = cJSON_AddStringToObject(o, "path", ev->path) != NULL;
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int sb_agent_refusal(struct sb_agent *a, const struct sb_event *ev, const char *text)
{
	const char *kind = refusal_kind(ev->kind);
	char *msg;
	int err = 0;

	if (!a || !kind || ev->verdict != SB_DENIED)
		return -EINVAL;
	if (!atomic_load(&a->rules_sent))
		return -EAGAIN;
	cJSON *o = refusal_json(ev, text ? text : "", kind);
	msg = o ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (!msg)
		return -ENOMEM;
	/* Never wait: the refused thread is waiting for this decision, and the
	 * lock is held while the rules go out (which waits for the program). */
	if (pthread_mutex_trylock(&a->send_lock) != 0) {
		free(msg);
		return -EAGAIN;
	}
	if (send(a->fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		err = -errno;
	pthread_mutex_unlock(&a->send_lock);
	free(msg);
	return err;
}

/* ---- messages from the agent ------------------------------------------- */

static const char *const api_categories[SB_API__COUNT] = {
	[SB_API_PROCESS_EXEC] = "process-exec",
	[SB_API_PROCESS_CONTROL] = "process-control",
	[SB_API_PRIVILEGES] = "privileges",
	[SB_API_THREADS] = "threads",
	[SB_API_NATIVE] = "native",
	[SB_API_INTROSPECTION] = "introspection",
	[SB_API_DYNAMIC_CODE] = "dynamic-code",
	[SB_API_DESERIALIZATION] = "deserialization",
};

static int api_category(const char *name)
{
	for (int i = 0; i < SB_API__COUNT; i++)
		if (strcmp(name, api_categories[i]) == 0)
			return i;
	return -1;
}

static const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static int json_id(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(it) || it->valuedouble < 1 || it->valuedouble > INT_MAX)
		return 0;
	return (int)it->valuedouble;
}

/* Copy untrusted text into a fixed field; control characters would corrupt
 * the human lines and logs built from it. */
static void copy_text(char *dst, size_t cap, const char *src)
{
	size_t i = 0;

	for (; src && src[i] && i + 1 < cap; i++)
		dst[i] = ((unsigned char)src[i] < 0x20 || src[i] == 0x7f) ? '?' : src[i];
	dst[i] = '\0';
}

static int parse_verdict(const char *v, enum sb_verdict *out)
{
	if (!v || strcmp(v, "allowed") == 0)
		*out = SB_ALLOWED;
	else if (strcmp(v, "denied") == 0)
		*out = SB_DENIED;
	else if (strcmp(v, "would-deny") == 0)
		*out = SB_WOULD_DENY;
	else
		return -EINVAL;
	return 0;
}

static int fill_import(const cJSON *o, struct sb_event *ev)
{
	ev->kind = SB_EV_IMPORT;
	snprintf(ev->tip, sizeof(ev->tip), "python-import=%s", ev->name);
	ev->err = ev->verdict == SB_DENIED ? ENOENT : 0;
	return 0;
}

static int fill_api(const cJSON *o, struct sb_event *ev)
{
	const char *cat = json_str(o, "category");

	ev->kind = SB_EV_API;
	ev->category = cat ? api_category(cat) : -1;
	if (ev->category < 0)
		return -EINVAL;
	snprintf(ev->tip, sizeof(ev->tip), "python-api=ALLOW:%s", ev->name);
	ev->err = ev->verdict == SB_DENIED ? EPERM : 0;
	return 0;
}

static int fill_env(const cJSON *o, struct sb_event *ev)
{
	const char *op = json_str(o, "op");

	ev->kind = SB_EV_ENV;
	if (!op || strcmp(op, "read") == 0) {
		ev->access = SB_ACC_READ;
		snprintf(ev->tip, sizeof(ev->tip), "env=%s=${%s}", ev->name, ev->name);
	} else if (strcmp(op, "write") == 0) {
		ev->access = SB_ACC_WRITE;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int set_addr(struct sockaddr_storage *ss, const char *text)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/* One event per resolved address (none: one event without address). */
static int emit_dns(const cJSON *o, struct sb_event *ev, sb_event_fn *fn, void *data)
{
	const cJSON *addrs = cJSON_GetObjectItemCaseSensitive(o, "addrs");
	const cJSON *it;
	int n = 0;

	ev->kind = SB_EV_DNS;
	if (addrs && !cJSON_IsArray(addrs))
		return -EINVAL;
	cJSON_ArrayForEach(it, addrs) {
		if (n == DNS_ADDRS_MAX)
			break;
		if (!cJSON_IsString(it) || set_addr(&ev->addr, it->valuestring) < 0)
			continue;
		if (fn)
			fn(ev, data);
		n++;
	}
	if (n == 0) {
		memset(&ev->addr, 0, sizeof(ev->addr));
		if (fn)
			fn(ev, data);
		n = 1;
	}
	return n;
}

/* The list keys of an eval report, in enum sb_eval_key order. */
static const char *const eval_keys[] = {
	[SB_EVAL_SYNTAX] = "eval-syntax",
	[SB_EVAL_IMPORT] = "eval-import",
	[SB_EVAL_CALL] = "eval-call",
	[SB_EVAL_ATTRIBUTE] = "eval-attribute",
	[SB_EVAL_MAGIC] = "eval-magic",
};

#define EVAL_TOKENS_MAX 512	/* per message: a program reports each token once */

/* What may become part of a rule line: a name, a dotted module name.  Never a
 * pattern, a list separator, a comment or a line break (the learner writes
 * these tokens into the policy file verbatim). */
static bool eval_token_ok(const char *t, bool dotted)
{
	size_t n = strlen(t);

	if (n == 0 || n >= SB_EV_NAME_MAX || isdigit((unsigned char)t[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)t[i]) && t[i] != '_' && !(dotted && t[i] == '.' && i && t[i + 1]))
			return false;
	return true;
}

/* A profile suffix (eval-syntax:<name>=): the same alphabet as a token, plus '-'. */
static bool eval_profile_ok(const char *p)
{
	for (size_t i = 0; p[i]; i++)
		if ((!isalnum((unsigned char)p[i]) && p[i] != '_' && p[i] != '-') || i + 1 >= SB_EV_NAME_MAX)
			return false;
	return true;
}

static void eval_emit_one(struct sb_event *ev, enum sb_eval_key k, const char *token,
			  sb_event_fn *fn, void *data)
{
	ev->eval_key = k;
	copy_text(ev->name, sizeof(ev->name), token);
	ev->tip[0] = '\0';
	if (k != SB_EVAL_CONTEXT_SITE)
		snprintf(ev->tip, sizeof(ev->tip), "%s%s%s=%s", eval_keys[k], ev->eval_profile[0] ? ":" : "",
			 ev->eval_profile, token);
	if (fn)
		fn(ev, data);
}

/* One event per reported token, and one for a call site whose own namespace
 * the guard honoured.  A malformed token refuses the whole message: it is
 * the agent's bug or a forgery, and half a report would learn half a rule. */
static int emit_eval(const cJSON *o, struct sb_event *ev, sb_event_fn *fn, void *data)
{
	const cJSON *feats = cJSON_GetObjectItemCaseSensitive(o, "features");
	const char *profile = json_str(o, "profile");
	const char *site = json_str(o, "context_site");
	const char *caller = json_str(o, "caller_site");
	const char *reason = json_str(o, "reason");
	int n = 0;

	ev->kind = SB_EV_EVAL;
	ev->err = ev->verdict == SB_DENIED ? EPERM : 0;
	if ((feats && !cJSON_IsObject(feats)) || (profile && !eval_profile_ok(profile)))
		return -EINVAL;
	copy_text(ev->eval_profile, sizeof(ev->eval_profile), profile);
	for (int k = 0; feats && k < SB_EVAL_CONTEXT_SITE; k++) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(feats, eval_keys[k]), *it;

		if (list && !cJSON_IsArray(list))
			return -EINVAL;
		cJSON_ArrayForEach(it, list) {
			if (!cJSON_IsString(it) || !eval_token_ok(it->valuestring, k == SB_EVAL_IMPORT) ||
			    (k == SB_EVAL_SYNTAX && !sb_eval_syntax_known(it->valuestring)) || ++n > EVAL_TOKENS_MAX)
				return -EINVAL;
		}
	}
	if ((site && (!*site || strlen(site) >= SB_EV_NAME_MAX)) ||
	    (caller && (!*caller || strlen(caller) >= SB_EV_NAME_MAX)))
		return -EINVAL;
	for (int k = 0; feats && k < SB_EVAL_CONTEXT_SITE; k++) {
		const cJSON *it;

		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(feats, eval_keys[k]))
			eval_emit_one(ev, (enum sb_eval_key)k, it->valuestring, fn, data);
	}
	if (caller) {
		/* Guarded, it would not have seen the caller's variables: the line
		 * that keeps it working is eval-namespace=caller. */
		ev->eval_key = SB_EVAL_CALLER_SITE;
		copy_text(ev->name, sizeof(ev->name), caller);
		snprintf(ev->tip, sizeof(ev->tip), "eval-namespace%s%s=caller", ev->eval_profile[0] ? ":" : "",
			 ev->eval_profile);
		if (fn)
			fn(ev, data);
		n++;
	}
	if (site) {
		/* Not a refusal: the guard honoured the caller's namespace, which the
		 * learner notes in place of an eval-call line. */
		ev->verdict = SB_ALLOWED;
		ev->err = 0;
		eval_emit_one(ev, SB_EVAL_CONTEXT_SITE, site, fn, data);
		n++;
	}
	if (n == 0 && ev->verdict == SB_DENIED && reason && *reason) {
		/* A limit (eval-timeout, eval-max-iterations, ...) or a construct
		 * no rule allows stopped it: the log still shows the refusal,
		 * named by the guard's reason. */
		ev->eval_key = SB_EVAL_REFUSED;
		copy_text(ev->name, sizeof(ev->name), reason);
		ev->tip[0] = '\0';
		if (fn)
			fn(ev, data);
		n++;
	}
	/* Nothing to report is no message: the parser's callers count on
	 * every message they accept giving at least one event. */
	return n ? n : -EINVAL;
}

static int parse_object(const cJSON *o, struct sb_event *ev, sb_event_fn *fn, void *data)
{
	const char *kind = json_str(o, "kind");
	const char *name = json_str(o, "name");
	int err;

	if (!cJSON_IsObject(o) || !kind || !name || !*name)
		return -EINVAL;
	err = parse_verdict(json_str(o, "verdict"), &ev->verdict);
	if (err)
		return err;
	clock_gettime(CLOCK_REALTIME, &ev->ts);
	ev->pid = json_id(o, "pid");
	ev->tid = json_id(o, "tid");
	ev->nr = -1;
	ev->category = -1;
	copy_text(ev->syscall, sizeof(ev->syscall), kind);
	copy_text(ev->name, sizeof(ev->name), name);
	copy_text(ev->pyloc, sizeof(ev->pyloc), json_str(o, "pyloc"));
	if (strcmp(kind, "dns") == 0)
		return emit_dns(o, ev, fn, data);
	if (strcmp(kind, "eval") == 0)
		return emit_eval(o, ev, fn, data);
	if (strcmp(kind, "import") == 0)
		err = fill_import(o, ev);
	else if (strcmp(kind, "api") == 0)
		err = fill_api(o, ev);
	else if (strcmp(kind, "env") == 0)
		err = fill_env(o, ev);
	else
		err = -EINVAL;
	if (err)
		return err;
	if (fn)
		fn(ev, data);
	return 1;
}

int sb_agent_parse_message(const char *msg, size_t len, sb_event_fn *fn, void *data)
{
	/* struct sb_event holds PATH_MAX buffers: keep it off the small stacks
	 * of the reader thread. */
	struct sb_event *ev = calloc(1, sizeof(*ev));
	cJSON *o;
	int n;

	if (!ev)
		return -ENOMEM;
	if (len > SB_AGENT_MSG_MAX) {
		free(ev);
		return -EINVAL;
	}
	o = cJSON_ParseWithLength(msg, len);
	n = o ? parse_object(o, ev, fn, data) : -EINVAL;
	cJSON_Delete(o);
	free(ev);
	return n;
}
