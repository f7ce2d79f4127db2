/* The decision log (JSON lines) and the human refusal line.
 *
 * Both are produced into a caller's buffer without allocating: the
 * supervisor formats on its event thread (and may format a notice on a
 * deciding worker), where a malloc could contend with the program's own
 * allocator-heavy threads or fail at the worst moment.  Strings coming from
 * the program (paths, names, locations) are hostile: they are escaped so that
 * one event is always exactly one line, in the log and on the terminal.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jsonesc.h"
#include "log.h"

/* ---- names ------------------------------------------------------------ */

static const char *const api_names[SB_API__COUNT] = {
	[SB_API_PROCESS_EXEC] = "process-exec",
	[SB_API_PROCESS_CONTROL] = "process-control",
	[SB_API_PRIVILEGES] = "privileges",
	[SB_API_THREADS] = "threads",
	[SB_API_NATIVE] = "native",
	[SB_API_INTROSPECTION] = "introspection",
	[SB_API_DYNAMIC_CODE] = "dynamic-code",
	[SB_API_DESERIALIZATION] = "deserialization",
};

const char *sb_api_category_name(int cat)
{
	if (cat < 0 || cat >= SB_API__COUNT)
		return NULL;
	return api_names[cat];
}

int sb_api_category_from_name(const char *name)
{
	for (int i = 0; i < SB_API__COUNT; i++)
		if (strcmp(api_names[i], name) == 0)
			return i;
	return -1;
}

const char *sb_event_kind_name(enum sb_event_kind kind)
{
	switch (kind) {
	case SB_EV_PATH: return "path";
	case SB_EV_NET: return "net";
	case SB_EV_UNIX: return "unix";
	case SB_EV_EXEC: return "exec";
	case SB_EV_PROC: return "proc";
	case SB_EV_ENV: return "env";
	case SB_EV_IMPORT: return "import";
	case SB_EV_API: return "api";
	case SB_EV_DNS: return "dns";
	case SB_EV_EVAL: return "eval";
	}
	return "unknown";
}

bool sb_event_bytecode_write(const struct sb_event *ev)
{
	const char *pc, *rest;

	if (ev->kind != SB_EV_PATH || !(ev->access & SB_ACC_WRITE))
		return false;
	for (pc = strstr(ev->path, "/__pycache__"); pc; pc = strstr(pc + 1, "/__pycache__")) {
		rest = pc + strlen("/__pycache__");
		if (*rest == '\0')
			return true;
		if (*rest == '/' && !strchr(rest + 1, '/') && strstr(rest + 1, ".pyc"))
			return true;
	}
	return false;
}

int sb_event_fill_comm(struct sb_event *ev)
{
	char path[48];
	ssize_t n;
	int fd;

	ev->comm[0] = '\0';
	if (ev->tid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)ev->tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, ev->comm, sizeof(ev->comm) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	ev->comm[n] = '\0';
	ev->comm[strcspn(ev->comm, "\n")] = '\0';
	return 0;
}

static const char *verdict_name(enum sb_verdict v)
{
	switch (v) {
	case SB_ALLOWED: return "allowed";
	case SB_DENIED: return "denied";
	case SB_WOULD_DENY: return "would-deny";
	}
	return "unknown";
}

/* What the user did, in words: "open" for the whole open family, and so on. */
static const char *display_verb(const struct sb_event *ev)
{
	static const struct { const char *sys, *verb; } verbs[] = {
		{ "open", "open" }, { "openat", "open" }, { "openat2", "open" }, { "creat", "open" },
		{ "stat", "stat" }, { "lstat", "stat" }, { "newfstatat", "stat" }, { "fstatat64", "stat" },
		{ "statx", "stat" }, { "access", "access" }, { "faccessat", "access" },
		{ "faccessat2", "access" }, { "readlink", "readlink" }, { "readlinkat", "readlink" },
		{ "execve", "exec" }, { "execveat", "exec" }, { "mkdir", "mkdir" }, { "mkdirat", "mkdir" },
		{ "unlink", "unlink" }, { "unlinkat", "unlink" }, { "rename", "rename" },
		{ "renameat", "rename" }, { "renameat2", "rename" }, { "sendto", "send" },
		{ "sendmsg", "send" }, { "sendmmsg", "send" },
	};

	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(ev->syscall, verbs[i].sys) == 0)
			return verbs[i].verb;
	if (ev->syscall[0])
		return ev->syscall;
	switch (ev->kind) {
	case SB_EV_ENV: return "env";
	case SB_EV_IMPORT: return "import";
	case SB_EV_API: return "call";
	case SB_EV_DNS: return "resolve";
	case SB_EV_EVAL: return "eval";
	case SB_EV_EXEC: return "exec";
	case SB_EV_NET: return ev->dir & SB_DIR_IN ? "bind" : "connect";
	default: return "access";
	}
}

static const char *access_name(unsigned access)
{
	static const char *const names[8] = {
		"none", "read", "write", "read,write", "exec", "read,exec", "write,exec", "read,write,exec",
	};
	return names[access & 7u];
}

/* The intent of an event: what the program tried to do with the object. */
static const char *intent_name(const struct sb_event *ev)
{
	switch (ev->kind) {
	case SB_EV_PATH:
	case SB_EV_UNIX:
		return access_name(ev->access);
	case SB_EV_NET:
		if (strncmp(ev->syscall, "send", 4) == 0)
			return "send";
		if (strcmp(ev->syscall, "listen") == 0)
			return "listen";
		return ev->dir & SB_DIR_IN ? "bind" : "connect";
	case SB_EV_EXEC: return "exec";
	case SB_EV_PROC: {
		const char *c = sb_api_category_name(ev->category);
		return c ? c : "process";
	}
	case SB_EV_ENV: return "read";
	case SB_EV_IMPORT: return "import";
	case SB_EV_API: return "call";
	case SB_EV_DNS: return "resolve";
	case SB_EV_EVAL: return "evaluate";
	}
	return "unknown";
}

/* ---- a bounded output buffer ------------------------------------------ */

struct out {
	char *buf;
	size_t cap, len;
	bool full;
};

static void out_raw(struct out *o, const char *s, size_t n)
{
	if (o->full || n >= o->cap - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void out_s(struct out *o, const char *s)
{
	out_raw(o, s, strlen(s));
}

static void out_f(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_f(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->cap - o->len) {
		o->full = true;
		o->buf[o->len] = '\0';
		return;
	}
	o->len += (size_t)n;
}

/* Escape `s` for JSON (json=true) or for a single-quoted terminal string
 * (jsonesc.h): both keep the output on one line and show invalid bytes as
 * \xHH.  Past `limit` output bytes the rest is replaced by "..." (terminal
 * lines only: a log line is data and is never cut). */
static void out_escaped_max(struct out *o, const char *s, bool json, size_t limit)
{
	enum sb_esc_mode mode = json ? SB_ESC_JSON : SB_ESC_QUOTED;
	size_t start = o->len, took;
	struct sb_esc_unit u;

	while (!o->full && (took = sb_esc_next(s, mode, &u)) > 0) {
		if (o->len - start >= limit) {
			out_s(o, "...");
			return;
		}
		out_raw(o, u.s, u.n);
		s += took;
	}
}

static void out_escaped(struct out *o, const char *s, bool json)
{
	out_escaped_max(o, s, json, SIZE_MAX);
}

/* Field widths of the human line: with them any event fits SB_NOTICE_MAX. */
#define NOTICE_OBJECT_MAX 2048
#define NOTICE_FIELD_MAX 1024

static void out_shown(struct out *o, const char *s, size_t limit)
{
	out_escaped_max(o, s, false, limit);
}

static void out_jstr(struct out *o, const char *s)
{
	out_raw(o, "\"", 1);
	out_escaped(o, s, true);
	out_raw(o, "\"", 1);
}

int sb_json_put_str(char *buf, size_t cap, size_t *len, const char *s)
{
	struct out o = { buf, cap, *len, false };

	if (*len >= cap)
		return -ENOSPC;
	out_jstr(&o, s);
	if (o.full) {
		buf[*len] = '\0';
		return -ENOSPC;
	}
	*len = o.len;
	return 0;
}

/* ---- addresses -------------------------------------------------------- */

/* The IPv4 address inside an IPv4-mapped IPv6 one, judged as IPv4 (reference §2.5). */
static bool mapped_v4(const struct sockaddr_in6 *s6, struct in_addr *v4)
{
	if (!IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return false;
	memcpy(&v4->s_addr, &s6->sin6_addr.s6_addr[12], 4);
	return true;
}

/* Address text and port of an event; false for a family without an IP. */
static bool event_ip(const struct sb_event *ev, char *ip, size_t cap, unsigned *port, bool *v6)
{
	const struct sockaddr_storage *ss = &ev->addr;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		*port = ntohs(s4->sin_port);
		*v6 = false;
		return inet_ntop(AF_INET, &s4->sin_addr, ip, (socklen_t)cap) != NULL;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		struct in_addr v4;

		*port = ntohs(s6->sin6_port);
		if (mapped_v4(s6, &v4)) {
			*v6 = false;
			return inet_ntop(AF_INET, &v4, ip, (socklen_t)cap) != NULL;
		}
		*v6 = true;
		return inet_ntop(AF_INET6, &s6->sin6_addr, ip, (socklen_t)cap) != NULL;
	}
	return false;
}

/* Cloud metadata services: they hand out the machine's credentials to
 * whoever asks from it, the first thing a request forged by a manipulated
 * model goes for (AWS, GCP, Azure, OpenStack and others at 169.254.169.254;
 * ECS task credentials at 169.254.170.2; AWS over IPv6; Alibaba; Azure's
 * WireServer). */
bool sb_ip_is_metadata(const char *ip)
{
	static const char *const known[] = {
		"169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "168.63.129.16",
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(ip, known[i]) == 0)
			return true;
	return false;
}

static bool is_wildcard(const char *ip)
{
	return strcmp(ip, "0.0.0.0") == 0 || strcmp(ip, "::") == 0;
}

/* "1.2.3.4:80" or "[::1]:80"; brackets=true always brackets (upstream's
 * "[1.2.3.4]:80" in refusal texts). */
static void out_endpoint(struct out *o, const struct sb_event *ev, bool brackets)
{
	char ip[INET6_ADDRSTRLEN];
	unsigned port;
	bool v6;

	if (!event_ip(ev, ip, sizeof(ip), &port, &v6)) {
		out_f(o, "<family %u>", (unsigned)ev->addr.ss_family);
		return;
	}
	if (v6 || brackets)
		out_f(o, "[%s]:%u", ip, port);
	else
		out_f(o, "%s:%u", ip, port);
}

static const char *proto_name(unsigned proto, bool upper)
{
	if (proto & SB_PROTO_TCP)
		return upper ? "TCP" : "tcp";
	if (proto & SB_PROTO_UDP)
		return upper ? "UDP" : "udp";
	return upper ? "UNKNOWN" : "unknown";
}

/* ---- tips ------------------------------------------------------------- */

static bool under(const char *path, const char *dir, size_t dlen)
{
	return dlen > 1 && strncmp(path, dir, dlen) == 0 && (path[dlen] == '/' || path[dlen] == '\0');
}

/* The directory an access needs exposed: a directory itself, a file's parent. */
static void tip_dir(const char *path, char *dir, size_t cap)
{
	struct stat st;
	char *slash;

	snprintf(dir, cap, "%s", path);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return;
	slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
}

/* A process's entries under /proc: "/proc/PID", "/proc/self" and below. */
static bool proc_entry(const char *path)
{
	const char *c = path + 6;
	size_t n;

	if (strncmp(path, "/proc/", 6) != 0)
		return false;
	n = strcspn(c, "/");
	if ((n == 4 && strncmp(c, "self", 4) == 0) || (n == 11 && strncmp(c, "thread-self", 11) == 0))
		return true;
	return n > 0 && strspn(c, "0123456789") == n;
}

/* A directory no tip may name, although it is the one the access needs: the
 * whole tree, the kernel's trees of every process and every device, and a
 * process's /proc entries (its number changes at every run, and the
 * sandbox's own are readable without a rule).  A user who reads the tip
 * would expose far more than the program asked for: /proc holds the
 * environment of every process of the same user, /dev every disk. */
static bool tip_too_wide(const char *dir)
{
	static const char *const roots[] = { "/", "/proc", "/dev", "/sys" };

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strcmp(dir, roots[i]) == 0)
			return true;
	return proc_entry(dir);
}

/* ./x under the current directory, ~/x under HOME (longest match first). */
static void out_spelled_dir(struct out *o, const char *dir)
{
	char cwd[PATH_MAX];
	const char *home = getenv("HOME");
	size_t hl = home ? strlen(home) : 0, cl = 0;

	if (getcwd(cwd, sizeof(cwd)))
		cl = strlen(cwd);
	if (home && hl > 1 && home[hl - 1] == '/')
		hl--;
	if (cl && under(dir, cwd, cl) && (!home || !under(dir, home, hl) || cl >= hl)) {
		out_s(o, ".");
		out_s(o, dir + cl);
	} else if (home && under(dir, home, hl)) {
		out_s(o, "~");
		out_s(o, dir + hl);
	} else {
		out_s(o, dir);
	}
}

static bool rule_is(const struct sb_event *ev, const char *prefix)
{
	return ev->rule && ev->rule->text && strncmp(ev->rule->text, prefix, strlen(prefix)) == 0;
}

static void compute_tip(const struct sb_event *ev, struct out *o)
{
	char dir[PATH_MAX], ip[INET6_ADDRSTRLEN], top[SB_EV_NAME_MAX];
	unsigned port;
	bool v6;
	const char *cat;

	/* Not about the object: only the supervisor knows the eval-* or
	 * python-import= line (ev->tip). */
	if (ev->cause != SB_CAUSE_POLICY)
		return;
	switch (ev->kind) {
	case SB_EV_PATH:
	case SB_EV_UNIX:
		/* An ignore= rule, the protected policy file, or a reason in
		 * ev->name: no line allows it. */
		if (rule_is(ev, "ignore=") || (!ev->rule && ev->err == EACCES) || ev->name[0])
			return;
		if (ev->path[0] != '/')
			return;
		tip_dir(ev->path, dir, sizeof(dir));
		if (tip_too_wide(dir))
			return;
		out_s(o, ev->access & SB_ACC_WRITE ? "expose-rw=" : "expose-ro=");
		out_spelled_dir(o, dir);
		return;
	case SB_EV_NET:
		/* A reason in ev->name: a socket no net= rule can describe. */
		if (rule_is(ev, "net=DENY") || ev->name[0] || !ev->proto ||
		    !event_ip(ev, ip, sizeof(ip), &port, &v6))
			return;
		out_f(o, "net=ALLOW|%s|", proto_name(ev->proto, true));
		if ((ev->dir & SB_DIR_IN) && is_wildcard(ip))
			out_s(o, "*");
		else
			out_f(o, "%s/%s", ip, v6 ? "128" : "32");
		out_f(o, "|%u|%s", port, ev->dir & SB_DIR_IN ? "IN" : "OUT");
		return;
	case SB_EV_EXEC:
		if (ev->path[0] == '/')
			out_f(o, "exec=%s", ev->path);
		return;
	case SB_EV_PROC:
		if ((cat = sb_api_category_name(ev->category)))
			out_f(o, "python-api=ALLOW:%s", cat);
		return;
	case SB_EV_ENV:
		if (ev->name[0])
			out_f(o, "env=%s=${%s}", ev->name, ev->name);
		return;
	case SB_EV_IMPORT:
		snprintf(top, sizeof(top), "%s", ev->name);
		top[strcspn(top, ".")] = '\0';
		if (top[0])
			out_f(o, "python-import=%s", top);
		return;
	case SB_EV_API:
		if (ev->name[0])
			out_f(o, "python-api=ALLOW:%s", ev->name);
		return;
	case SB_EV_DNS:
	case SB_EV_EVAL:	/* the agent's ev->tip, with the profile suffix */
		return;
	}
}

int sb_event_tip(const struct sb_event *ev, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0, false };

	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (ev->tip[0])
		out_s(&o, ev->tip);
	else
		compute_tip(ev, &o);
	if (o.full) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)o.len;
}

/* ---- JSON ------------------------------------------------------------- */

static void out_errno(struct out *o, int err)
{
	const char *name = err > 0 ? strerrorname_np(err) : NULL;

	if (name)
		out_jstr(o, name);
	else
		out_f(o, "\"E%d\"", err);
}

static void out_object(struct out *o, const struct sb_event *ev, bool json)
{
	struct out tmp;
	char obj[PATH_MAX + 64];

	switch (ev->kind) {
	case SB_EV_NET:
		tmp = (struct out){ obj, sizeof(obj), 0, false };
		obj[0] = '\0';
		out_endpoint(&tmp, ev, false);
		if (json)
			out_jstr(o, obj);
		else
			out_s(o, obj);
		return;
	case SB_EV_PATH:
	case SB_EV_UNIX:
	case SB_EV_EXEC:
		if (json)
			out_jstr(o, ev->path);
		else
			out_shown(o, ev->path, NOTICE_OBJECT_MAX);
		return;
	case SB_EV_PROC: {
		const char *c = sb_api_category_name(ev->category);
		if (json)
			out_jstr(o, c ? c : "");
		else
			out_s(o, c ? c : "");
		return;
	}
	default:
		if (json)
			out_jstr(o, ev->name);
		else
			out_shown(o, ev->name, NOTICE_FIELD_MAX);
	}
}

static void out_time(struct out *o, const struct timespec *ts)
{
	struct tm tm;
	time_t t = ts->tv_sec;

	if (!gmtime_r(&t, &tm)) {
		out_s(o, "\"1970-01-01T00:00:00.000000Z\"");
		return;
	}
	out_f(o, "\"%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ\"", tm.tm_year + 1900, tm.tm_mon + 1,
	      tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts->tv_nsec / 1000);
}

static void out_json_net(struct out *o, const struct sb_event *ev)
{
	char ip[INET6_ADDRSTRLEN];
	unsigned port;
	bool v6;

	if (!event_ip(ev, ip, sizeof(ip), &port, &v6))
		return;
	out_s(o, ",\"addr\":");
	out_jstr(o, ip);
	if (ev->kind == SB_EV_NET) {
		out_f(o, ",\"port\":%u,\"proto\":\"%s\",\"direction\":\"%s\"", port,
		      proto_name(ev->proto, false), ev->dir & SB_DIR_IN ? "in" : "out");
	}
}

static const char *cause_name(enum sb_event_cause c)
{
	switch (c) {
	case SB_CAUSE_POLICY: return NULL;
	case SB_CAUSE_IMPORT: return "import";
	case SB_CAUSE_EVAL: return "eval";
	}
	return NULL;
}

/* The packed stack of struct sb_event as "stack":[{"file":..,"line":..,
 * "func":..},...].  Read within its buffer even when it is not terminated. */
static void out_json_stack(struct out *o, const char *stack)
{
	char field[4][SB_EV_STACK_MAX + 1];
	const char *p = stack, *end = stack + strnlen(stack, SB_EV_STACK_MAX);
	bool first = true;

	if (p == end)
		return;
	out_s(o, ",\"stack\":[");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *stop = nl ? nl : end;
		long line;

		for (int k = 0; k < 4; k++) {
			const char *t = k < 3 ? memchr(q, '\t', (size_t)(stop - q)) : NULL;
			size_t len = (size_t)((t ? t : stop) - q);

			memcpy(field[k], q, len);
			field[k][len] = '\0';
			q = t ? t + 1 : stop;
		}
		out_s(o, first ? "{\"file\":" : ",{\"file\":");
		first = false;
		out_jstr(o, field[0]);
		line = strtol(field[1], NULL, 10);
		if (line >= 0)
			out_f(o, ",\"line\":%ld", line);
		out_s(o, ",\"func\":");
		out_jstr(o, field[2]);
		if (strchr(field[3], 'e'))
			out_s(o, ",\"eval\":true");
		if (strchr(field[3], 'l'))
			out_s(o, ",\"library\":true");
		out_s(o, "}");
		p = nl ? nl + 1 : end;
	}
	out_s(o, "]");
}

static void out_json_eval(struct out *o, const struct sb_event *ev)
{
	static const char *const keys[SB_EVAL__COUNT] = {
		"eval-syntax", "eval-import", "eval-call", "eval-attribute", "eval-magic", "context-site",
		"caller-site", "refused",
	};

	if ((unsigned)ev->eval_key < SB_EVAL__COUNT)
		out_f(o, ",\"eval_key\":\"%s\"", keys[ev->eval_key]);
	if (ev->eval_profile[0]) {
		out_s(o, ",\"profile\":");
		out_jstr(o, ev->eval_profile);
	}
}

int sb_event_to_json(const struct sb_event *ev, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0, false };
	char tip[sizeof(ev->tip)];
	const char *cat;

	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	out_f(&o, "{\"version\":%d,\"time\":", SB_LOG_SCHEMA_VERSION);
	out_time(&o, &ev->ts);
	out_f(&o, ",\"pid\":%ld,\"tid\":%ld", (long)ev->pid, (long)ev->tid);
	if (ev->comm[0]) {
		out_s(&o, ",\"comm\":");
		out_jstr(&o, ev->comm);
	}
	out_s(&o, ",\"syscall\":");
	out_jstr(&o, ev->syscall);
	if (ev->nr >= 0)
		out_f(&o, ",\"nr\":%d", ev->nr);
	out_f(&o, ",\"kind\":\"%s\",\"object\":", sb_event_kind_name(ev->kind));
	out_object(&o, ev, true);
	out_s(&o, ",\"intent\":");
	out_jstr(&o, intent_name(ev));
	out_f(&o, ",\"verdict\":\"%s\"", verdict_name(ev->verdict));
	if (ev->err) {
		out_s(&o, ",\"errno\":");
		out_errno(&o, ev->err);
	}
	if (ev->kind == SB_EV_NET || ev->kind == SB_EV_DNS)
		out_json_net(&o, ev);
	if ((ev->kind == SB_EV_PROC || ev->kind == SB_EV_API) && (cat = sb_api_category_name(ev->category)))
		out_f(&o, ",\"category\":\"%s\"", cat);
	if (ev->kind == SB_EV_EVAL)
		out_json_eval(&o, ev);
	if (ev->rule) {
		out_s(&o, ",\"rule\":{\"file\":");
		out_jstr(&o, ev->rule->file ? ev->rule->file : "");
		out_f(&o, ",\"line\":%u,\"text\":", ev->rule->line);
		out_jstr(&o, ev->rule->text ? ev->rule->text : "");
		out_s(&o, "}");
	}
	if (ev->verdict != SB_ALLOWED && sb_event_tip(ev, tip, sizeof(tip)) > 0) {
		out_s(&o, ",\"tip\":");
		out_jstr(&o, tip);
	}
	if (ev->pyloc[0]) {
		out_s(&o, ",\"python\":");
		out_jstr(&o, ev->pyloc);
	}
	out_f(&o, ",\"from_eval\":%s", ev->from_eval ? "true" : "false");
	if (ev->importing[0]) {
		out_s(&o, ",\"importing\":");
		out_jstr(&o, ev->importing);
	}
	if (cause_name(ev->cause))
		out_f(&o, ",\"cause\":\"%s\"", cause_name(ev->cause));
	out_json_stack(&o, ev->stack);
	out_s(&o, "}\n");
	if (o.full) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)o.len;
}

/* ---- the human line --------------------------------------------------- */

static void out_ruleref(struct out *o, const struct sb_rule_ref *r)
{
	out_s(o, "'");
	out_shown(o, r->text ? r->text : "", NOTICE_FIELD_MAX);
	out_s(o, "' from ");
	if (!r->file || (strcmp(r->file, ".") == 0 && r->line == 0))
		out_s(o, "the command line");
	else {
		out_shown(o, r->file, NOTICE_FIELD_MAX);
		out_f(o, "(%u)", r->line);
	}
}

static void out_net_reason(struct out *o, const struct sb_event *ev)
{
	bool in = ev->dir & SB_DIR_IN, v6;
	char ip[INET6_ADDRSTRLEN];
	unsigned port;

	out_s(o, in ? "Listening on " : "Connection to ");
	out_endpoint(o, ev, true);
	if (ev->name[0]) {
		/* A socket no net= rule can describe (raw, another family). */
		out_s(o, " DENIED: ");
		out_shown(o, ev->name, NOTICE_FIELD_MAX);
	} else if (rule_is(ev, "net=DENY")) {
		out_s(o, " DENIED by explicit rule ");
		out_ruleref(o, ev->rule);
	} else {
		out_s(o, " DENIED by implicit default policy");
		/* The tip stays exact, but nobody should add it unaware. */
		if (!in && event_ip(ev, ip, sizeof(ip), &port, &v6) && sb_ip_is_metadata(ip))
			out_s(o, " (a cloud metadata service: it hands out this machine's credentials)");
	}
}

/* Why a path refusal comes without a tip (compute_tip), where that is so. */
static void out_untipped_dir(struct out *o, const struct sb_event *ev)
{
	char dir[PATH_MAX];

	if (ev->path[0] != '/' || ev->cause != SB_CAUSE_POLICY || ev->tip[0])
		return;
	tip_dir(ev->path, dir, sizeof(dir));
	if (proc_entry(dir)) {
		out_s(o, " (none is suggested for a process's /proc entries)");
	} else if (tip_too_wide(dir)) {
		out_s(o, " (none is suggested for '");
		out_s(o, dir);
		out_s(o, "' whole)");
	}
}

static void out_path_reason(struct out *o, const struct sb_event *ev)
{
	if (ev->name[0]) {
		/* What no rule can lift (an abstract socket, chroot), said by
		 * the handler that refused it. */
		out_shown(o, ev->name, NOTICE_FIELD_MAX);
	} else if (rule_is(ev, "ignore=")) {
		out_s(o, "hidden by rule ");
		out_ruleref(o, ev->rule);
	} else if (ev->rule && (ev->access & SB_ACC_WRITE)) {
		out_s(o, "read-only: rule ");
		out_ruleref(o, ev->rule);
		out_untipped_dir(o, ev);
	} else if (!ev->rule && ev->err == EACCES) {
		out_s(o, "the active policy files are write-protected");
	} else if (proc_entry(ev->path) && !(ev->access & (SB_ACC_WRITE | SB_ACC_EXEC))) {
		/* The sandbox's own processes are read without a rule. */
		out_s(o, "a process outside the sandbox");
	} else {
		out_s(o, "no expose rule");
		out_untipped_dir(o, ev);
	}
}

/* Refusals that are not about the object: who made the call. */
static bool out_cause_reason(struct out *o, const struct sb_event *ev)
{
	char top[SB_EV_NAME_MAX];

	switch (ev->cause) {
	case SB_CAUSE_POLICY:
		return false;
	case SB_CAUSE_IMPORT:
		snprintf(top, sizeof(top), "%s", ev->importing);
		top[strcspn(top, ".")] = '\0';
		out_s(o, "the import of '");
		out_shown(o, top, NOTICE_FIELD_MAX);
		out_s(o, "' is not allowed by a python-import rule");
		return true;
	case SB_CAUSE_EVAL:
		switch (ev->kind) {
		case SB_EV_NET:
		case SB_EV_UNIX:
			out_s(o, "code from eval/exec may not use the network");
			break;
		case SB_EV_EXEC:
			out_s(o, "code from eval/exec may not start programs");
			break;
		default:
			if (ev->importing[0]) {
				snprintf(top, sizeof(top), "%s", ev->importing);
				top[strcspn(top, ".")] = '\0';
				out_s(o, "code from eval/exec may not import '");
				out_shown(o, top, NOTICE_FIELD_MAX);
				out_s(o, "'");
			} else {
				out_s(o, "code from eval/exec may not open files");
			}
		}
		return true;
	}
	return false;
}

static void out_reason(struct out *o, const struct sb_event *ev)
{
	const char *cat = sb_api_category_name(ev->category);

	if (out_cause_reason(o, ev))
		return;
	switch (ev->kind) {
	case SB_EV_PATH:
	case SB_EV_UNIX:
		out_path_reason(o, ev);
		return;
	case SB_EV_NET:
		out_net_reason(o, ev);
		return;
	case SB_EV_EXEC:
		if (ev->rule) {
			out_s(o, "refused by rule ");
			out_ruleref(o, ev->rule);
		} else {
			out_s(o, "no exec rule allows it");
		}
		return;
	case SB_EV_PROC:
		if (ev->category < 0)
			out_s(o, "aimed outside the sandbox, which no rule can allow");
		else
			out_f(o, "the python-api category '%s' is not granted", cat ? cat : "?");
		return;
	case SB_EV_ENV:
		out_s(o, "no env rule");
		return;
	case SB_EV_IMPORT:
		out_s(o, "not allowed by a python-import rule");
		return;
	case SB_EV_API:
		out_s(o, "denied by the API guard");
		if (cat)
			out_f(o, " (category: %s)", cat);
		return;
	case SB_EV_DNS:
		out_s(o, "no net rule can allow this host");
		return;
	case SB_EV_EVAL:
		out_s(o, ev->eval_key == SB_EVAL_CONTEXT_SITE  ? "the namespace came from the call site"
			 : ev->eval_key == SB_EVAL_CALLER_SITE ? "a guarded evaluation does not see the caller's variables"
			 : ev->eval_key == SB_EVAL_REFUSED     ? "stopped by the eval guard"
							       : "not allowed by an eval-* rule");
		return;
	}
}

int sb_event_to_notice(const struct sb_event *ev, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0, false };
	char tip[sizeof(ev->tip)];
	const char *verdict = ev->verdict == SB_WOULD_DENY ? "WOULD DENY"
			      : ev->verdict == SB_DENIED     ? "DENIED"
							     : "ALLOWED";

	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	out_f(&o, "python-sb: %s %s ", verdict, display_verb(ev));
	if (ev->kind == SB_EV_NET) {
		out_object(&o, ev, false);
		if (ev->proto)
			out_f(&o, " (%s)", proto_name(ev->proto, false));
	} else if (ev->kind == SB_EV_PROC) {
		const char *cat = sb_api_category_name(ev->category);

		out_f(&o, "(%s)", cat ? cat : ev->category < 0 ? "outside the sandbox" : "?");
	} else if (ev->kind == SB_EV_API) {
		out_shown(&o, ev->name, NOTICE_FIELD_MAX);
		out_s(&o, "()");
	} else {
		out_s(&o, "'");
		out_object(&o, ev, false);
		out_s(&o, "'");
		if (ev->kind == SB_EV_PATH || ev->kind == SB_EV_UNIX)
			out_f(&o, " (%s)", access_name(ev->access));
	}
	if (ev->pyloc[0]) {
		out_s(&o, " at ");
		out_shown(&o, ev->pyloc, NOTICE_FIELD_MAX);
	}
	if (ev->from_eval)
		out_s(&o, " from eval");
	out_s(&o, ": ");
	out_reason(&o, ev);
	if (ev->verdict != SB_ALLOWED && sb_event_tip(ev, tip, sizeof(tip)) > 0) {
		out_s(&o, "; add ");
		out_shown(&o, tip, NOTICE_OBJECT_MAX);
	}
	out_s(&o, "\n");
	if (o.full) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)o.len;
}

/* ---- the agent's exception text ------------------------------------------ */

/* "Cannot write to '<dir>/'": the directory the read-only exposure covers
 * the file in (its parent; a directory itself). */
static void out_parent_dir(struct out *o, const char *path)
{
	char dir[PATH_MAX];

	tip_dir(path, dir, sizeof(dir));
	out_s(o, dir);
	if (strcmp(dir, "/") != 0)
		out_s(o, "/");
}

static void out_path_refusal(struct out *o, const struct sb_event *ev)
{
	if (rule_is(ev, "ignore=")) {
		out_f(o, "Access to '%s' is ignored by rule ", ev->path);
		out_ruleref(o, ev->rule);
	} else if (ev->rule && (ev->access & SB_ACC_WRITE) && ev->err == EACCES) {
		out_s(o, "Cannot write to '");
		out_parent_dir(o, ev->path);
		out_s(o, "'. Rule ");
		out_ruleref(o, ev->rule);
	} else if (!ev->rule && ev->err == EACCES) {
		out_f(o, "Cannot write to '%s': the active policy files are write-protected.", ev->path);
	} else {
		out_f(o, "Access to '%s' must be accepted by a rule.", ev->path);
	}
}

int sb_event_refusal_text(const struct sb_event *ev, char *buf, size_t cap)
{
	struct out o = { buf, cap, 0, false };
	char tip[sizeof(ev->tip)];

	if (cap == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (ev->cause == SB_CAUSE_EVAL) {
		out_s(&o, "Access to '");
		if (ev->kind == SB_EV_NET)
			out_endpoint(&o, ev, true);
		else
			out_s(&o, ev->path);
		out_s(&o, "' from code run by eval/exec");
		if (sb_event_tip(ev, tip, sizeof(tip)) > 0)
			out_f(&o, " must be granted by %s.", tip);
		else
			out_s(&o, " is refused.");
	} else if (ev->kind == SB_EV_NET) {
		if (ev->name[0]) {
			out_s(&o, "Guard connection to ");
			out_endpoint(&o, ev, true);
			out_f(&o, " DENIED: %s.", ev->name);
		} else if (rule_is(ev, "net=DENY")) {
			out_s(&o, "Connection to ");
			out_endpoint(&o, ev, true);
			out_s(&o, " DENIED by explicit rule ");
			out_ruleref(&o, ev->rule);
		} else {
			out_s(&o, "Guard network connection to '");
			out_endpoint(&o, ev, true);
			out_s(&o, "' DENIED by implicit default policy.");
		}
	} else if (ev->kind == SB_EV_UNIX) {
		out_f(&o, "Guard connect to AF_UNIX socket '%s' DENIED: no expose-ro=/expose-rw= rule covers this path.",
		      ev->path);
	} else if (ev->kind == SB_EV_EXEC) {
		out_f(&o, "Execution of '%s' must be accepted by a rule.", ev->path);
	} else if (ev->kind == SB_EV_PATH) {
		out_path_refusal(&o, ev);
	} else {
		return -EINVAL;
	}
	if (o.full) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)o.len;
}
