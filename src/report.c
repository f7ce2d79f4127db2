/* --report=FILE: refusals of a run as SARIF 2.1.0, JUnit XML or JSON.
 *
 * Events arrive on the supervisor's event thread and the agent's thread; the
 * allowed ones (nearly all) leave before the lock.  A refusal is kept once
 * per (rule family, object): a test suite that opens the same missing file a
 * thousand times is one finding seen a thousand times, which is what a
 * code-scanning UI or a CI dashboard wants to show.  Strings come from the
 * program and are hostile: they are made valid UTF-8 (an invalid byte becomes
 * the text \xHH, as in the log) before they reach any document, and XML also
 * loses the control characters XML 1.0 cannot carry.
 */
#include "fdio.h"
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "jsonesc.h"
#include "log.h"
#include "report.h"

/* ---- rule families ---------------------------------------------------------- */

enum fam {
	F_FILE_READ, F_FILE_WRITE, F_UNIX, F_EXEC, F_NET_CONNECT, F_NET_BIND,
	F_PROCESS, F_ENV, F_IMPORT, F_API, F_DNS, F_EVAL, F__COUNT
};

struct family {
	const char *id, *name, *what, *key;
};

/* id = SARIF ruleId and JUnit test case; `key` is the rule line that grants it. */
static const struct family families[F__COUNT] = {
	[F_FILE_READ] = { "file-read", "FileRead", "A file or directory was read outside the exposed directories",
			  "expose-ro=DIR (or expose-rw=DIR)" },
	[F_FILE_WRITE] = { "file-write", "FileWrite", "A file was created, written, renamed or removed where the policy does not allow writing",
			   "expose-rw=DIR" },
	[F_UNIX] = { "unix-socket", "UnixSocket", "An AF_UNIX socket path not covered by an exposed directory was used",
		     "expose-rw=DIR" },
	[F_EXEC] = { "exec", "Exec", "A program was started that the policy does not allow",
		     "python-api=ALLOW:process-exec, then exec=PATH" },
	[F_NET_CONNECT] = { "net-connect", "NetConnect", "A connection or datagram was sent to an address no net= rule allows",
			    "net=ALLOW|PROTO|ADDRESS|PORT|OUT" },
	[F_NET_BIND] = { "net-bind", "NetBind", "A socket was bound or listened on an address no net= rule allows",
			 "net=ALLOW|PROTO|ADDRESS|PORT|IN" },
	[F_PROCESS] = { "process", "Process", "A process, thread, signal or privilege operation of a python-api category that is not granted",
			"python-api=ALLOW:CATEGORY" },
	[F_ENV] = { "env", "Env", "An environment variable the policy does not pass was read",
		    "env=NAME=${NAME}" },
	[F_IMPORT] = { "import", "Import", "A module outside the python-import list was imported",
		       "python-import=MODULE" },
	[F_API] = { "python-api", "PythonApi", "A sensitive Python function of the python-api registry was called",
		    "python-api=ALLOW:module.function (or its category)" },
	[F_DNS] = { "dns", "Dns", "A host name was resolved that no net= rule can allow",
		    "net=ALLOW|PROTO|HOST|PORT|OUT" },
	[F_EVAL] = { "eval", "Eval", "Evaluated code (eval, exec, compile) used a construct no eval-* rule allows",
		     "eval-syntax=NODE (or eval-call=, eval-attribute=, eval-import=, eval-magic=)" },
};

static enum fam family_of(const struct sb_event *ev)
{
	switch (ev->kind) {
	case SB_EV_PATH:
		return ev->access & SB_ACC_WRITE ? F_FILE_WRITE : F_FILE_READ;
	case SB_EV_UNIX: return F_UNIX;
	case SB_EV_EXEC: return F_EXEC;
	case SB_EV_NET: return ev->dir & SB_DIR_IN ? F_NET_BIND : F_NET_CONNECT;
	case SB_EV_PROC: return F_PROCESS;
	case SB_EV_ENV: return F_ENV;
	case SB_EV_IMPORT: return F_IMPORT;
	case SB_EV_API: return F_API;
	case SB_EV_DNS: return F_DNS;
	case SB_EV_EVAL: return F_EVAL;
	}
	return F_FILE_READ;
}

const char *sb_report_family(const struct sb_event *ev)
{
	return families[family_of(ev)].id;
}

/* ---- the store ------------------------------------------------------------------ */

struct item {
	enum fam fam;
	enum sb_event_kind kind;
	char syscall[24];
	char *object;		/* path, "addr:port", category or name */
	const char *proto;	/* net: "tcp"/"udp", else NULL */
	const char *category;	/* python-api category, or NULL */
	uint64_t hash;
	unsigned long denied, would_deny;
	char *pyloc;		/* first non-empty Python location, or NULL */
	char *message;		/* the human line of the first event, without prefix */
	char *tip;		/* the rule line that would allow it, or NULL */
	char *rule_file, *rule_text;	/* the deciding rule, or NULL */
	unsigned rule_line;
	int err;
	bool from_eval;
};

struct sb_report {
	char *path;
	enum sb_report_format format;
	char cwd[PATH_MAX];	/* "" when unknown: every path is then absolute */
	struct timespec start_rt, start_mono;
	pthread_mutex_t lock;
	struct item *items;
	size_t n, cap;
	uint32_t *slots;	/* open addressing: 0 free, else index + 1 */
	size_t nslots;
	unsigned long events, dropped_events;
	unsigned long fam_events[F__COUNT], fam_dropped[F__COUNT];
};

static bool ext_is(const char *path, const char *ext)
{
	size_t pl = strlen(path), el = strlen(ext);

	return pl > el && strcasecmp(path + pl - el, ext) == 0 && path[pl - el - 1] != '/';
}

int sb_report_format_of(const char *path)
{
	if (!path || !*path)
		return -EINVAL;
	if (ext_is(path, ".sarif"))
		return SB_REPORT_SARIF;
	if (ext_is(path, ".xml"))
		return SB_REPORT_JUNIT;
	if (ext_is(path, ".json"))
		return SB_REPORT_JSON;
	return -EINVAL;
}

int sb_report_new(const char *path, struct sb_report **out)
{
	struct sb_report *r;
	int fmt = sb_report_format_of(path);

	*out = NULL;
	if (fmt < 0)
		return fmt;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->path = strdup(path))) {
		free(r);
		return -ENOMEM;
	}
	r->format = (enum sb_report_format)fmt;
	if (!getcwd(r->cwd, sizeof(r->cwd)))
		r->cwd[0] = '\0';
	clock_gettime(CLOCK_REALTIME, &r->start_rt);
	clock_gettime(CLOCK_MONOTONIC, &r->start_mono);
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
	return 0;
}

static void item_free(struct item *it)
{
	free(it->object);
	free(it->pyloc);
	free(it->message);
	free(it->tip);
	free(it->rule_file);
	free(it->rule_text);
}

void sb_report_free(struct sb_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		item_free(&r->items[i]);
	free(r->items);
	free(r->slots);
	free(r->path);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

size_t sb_report_count(struct sb_report *r, unsigned long *events)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->n;
	if (events)
		*events = r->events;
	pthread_mutex_unlock(&r->lock);
	return n;
}

/* The object of an event as shown in reports; `proto` for network events. */
static void event_object(const struct sb_event *ev, char *buf, size_t cap, const char **proto)
{
	char ip[INET6_ADDRSTRLEN] = "";
	const char *cat;

	*proto = NULL;
	buf[0] = '\0';
	switch (ev->kind) {
	case SB_EV_PATH:
	case SB_EV_UNIX:
	case SB_EV_EXEC:
		snprintf(buf, cap, "%s", ev->path);
		break;
	case SB_EV_NET:
		*proto = ev->proto & SB_PROTO_UDP ? "udp" : ev->proto & SB_PROTO_TCP ? "tcp" : "unknown";
		if (ev->addr.ss_family == AF_INET) {
			const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ev->addr;

			inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
			snprintf(buf, cap, "%s:%u", ip, ntohs(s4->sin_port));
		} else if (ev->addr.ss_family == AF_INET6) {
			const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ev->addr;

			if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
				inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], ip, sizeof(ip));
			else
				inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
			snprintf(buf, cap, strchr(ip, ':') ? "[%s]:%u" : "%s:%u", ip, ntohs(s6->sin6_port));
		} else {
			snprintf(buf, cap, "<family %u>", (unsigned)ev->addr.ss_family);
		}
		break;
	case SB_EV_PROC:
		cat = sb_api_category_name(ev->category);
		snprintf(buf, cap, "%s", cat ? cat : "process");
		break;
	default:
		snprintf(buf, cap, "%s", ev->name);
	}
	if (!buf[0])
		snprintf(buf, cap, "?");
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t item_hash(enum fam f, const char *object, const char *proto)
{
	unsigned char fb = (unsigned char)f;
	uint64_t h = fnv1a(0xcbf29ce484222325ULL, &fb, 1);

	h = fnv1a(h, object, strlen(object) + 1);
	return proto ? fnv1a(h, proto, strlen(proto)) : h;
}

static bool item_is(const struct item *it, enum fam f, const char *object, const char *proto, uint64_t h)
{
	return it->hash == h && it->fam == f && strcmp(it->object, object) == 0 &&
	       (it->proto == proto || (it->proto && proto && strcmp(it->proto, proto) == 0));
}

/* Index of the item, or the free slot where it goes (*slot). */
static struct item *find(struct sb_report *r, enum fam f, const char *object, const char *proto,
			 uint64_t h, size_t *slot)
{
	size_t mask = r->nslots - 1, i = (size_t)h & mask;

	while (r->slots[i]) {
		struct item *it = &r->items[r->slots[i] - 1];

		if (item_is(it, f, object, proto, h))
			return it;
		i = (i + 1) & mask;
	}
	*slot = i;
	return NULL;
}

static int grow(struct sb_report *r)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct item *ni = realloc(r->items, cap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		r->items = ni;
		r->cap = cap;
	}
	if ((r->n + 1) * 10 >= r->nslots * 7) {
		size_t ns = r->nslots ? r->nslots * 2 : 128;
		uint32_t *s = calloc(ns, sizeof(*s));

		if (!s)
			return -ENOMEM;
		for (size_t k = 0; k < r->n; k++) {
			size_t i = (size_t)r->items[k].hash & (ns - 1);

			while (s[i])
				i = (i + 1) & (ns - 1);
			s[i] = (uint32_t)(k + 1);
		}
		free(r->slots);
		r->slots = s;
		r->nslots = ns;
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* Fill a new item from its first event.  False on ENOMEM (it is then freed). */
static bool item_fill(struct item *it, const struct sb_event *ev)
{
	char notice[SB_NOTICE_MAX], tip[sizeof(ev->tip)];
	const char *msg = notice;
	int len;

	it->kind = ev->kind;
	snprintf(it->syscall, sizeof(it->syscall), "%s", ev->syscall);
	it->category = (ev->kind == SB_EV_PROC || ev->kind == SB_EV_API) ? sb_api_category_name(ev->category) : NULL;
	it->err = ev->err;
	it->from_eval = ev->from_eval;
	len = sb_event_to_notice(ev, notice, sizeof(notice));
	if (len <= 0)
		snprintf(notice, sizeof(notice), "%s %s", ev->verdict == SB_DENIED ? "DENIED" : "WOULD DENY", it->object);
	else if (notice[len - 1] == '\n')
		notice[len - 1] = '\0';
	if (strncmp(msg, "python-sb: ", 11) == 0)
		msg += 11;
	if (sb_event_tip(ev, tip, sizeof(tip)) <= 0)
		tip[0] = '\0';
	it->message = strdup(msg);
	it->tip = dup_or_null(tip);
	it->pyloc = dup_or_null(ev->pyloc);
	if (ev->rule) {
		it->rule_file = dup_or_null(ev->rule->file);
		it->rule_text = dup_or_null(ev->rule->text);
		it->rule_line = ev->rule->line;
	}
	if (!it->message || (tip[0] && !it->tip) || (ev->pyloc[0] && !it->pyloc) ||
	    (ev->rule && ev->rule->file && ev->rule->file[0] && !it->rule_file) ||
	    (ev->rule && ev->rule->text && ev->rule->text[0] && !it->rule_text)) {
		item_free(it);
		return false;
	}
	return true;
}

static void count(struct item *it, const struct sb_event *ev)
{
	if (ev->verdict == SB_DENIED)
		it->denied++;
	else
		it->would_deny++;
	if (!it->pyloc && ev->pyloc[0])
		it->pyloc = strdup(ev->pyloc);	/* NULL on ENOMEM: still no location */
	it->from_eval |= ev->from_eval;
}

void sb_report_add(struct sb_report *r, const struct sb_event *ev)
{
	char object[PATH_MAX + 64];
	const char *proto;
	struct item *it;
	enum fam f;
	uint64_t h;
	size_t slot = 0;

	if (!r || !ev || (ev->verdict != SB_DENIED && ev->verdict != SB_WOULD_DENY) ||
	    sb_event_bytecode_write(ev))
		return;	/* allowed, or the interpreter's bytecode cache (log.h) */
	f = family_of(ev);
	event_object(ev, object, sizeof(object), &proto);
	h = item_hash(f, object, proto);
	pthread_mutex_lock(&r->lock);
	r->events++;
	r->fam_events[f]++;
	if (r->nslots && (it = find(r, f, object, proto, h, &slot))) {
		count(it, ev);
		goto out;
	}
	if (r->n >= SB_REPORT_MAX_ITEMS || grow(r)) {
		r->dropped_events++;
		r->fam_dropped[f]++;
		goto out;
	}
	find(r, f, object, proto, h, &slot);	/* the slot may have moved with grow() */
	it = &r->items[r->n];
	memset(it, 0, sizeof(*it));
	it->fam = f;
	it->hash = h;
	it->proto = proto;
	if (!(it->object = strdup(object)) || !item_fill(it, ev)) {
		free(it->object);
		r->dropped_events++;
		r->fam_dropped[f]++;
		goto out;
	}
	count(it, ev);
	r->slots[slot] = (uint32_t)(r->n + 1);
	r->n++;
out:
	pthread_mutex_unlock(&r->lock);
}

/* ---- text helpers ------------------------------------------------------------------ */

struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void buf_addn(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *ns;

		while (cap < b->len + n + 1)
			cap *= 2;
		if (!(ns = realloc(b->s, cap))) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void buf_add(struct buf *b, const char *s)
{
	buf_addn(b, s, strlen(s));
}

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		buf_addn(b, small, (size_t)n);
		return;
	}
	va_start(ap, fmt);
	n = vasprintf(&big, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	buf_addn(b, big, (size_t)n);
	free(big);
}

static void add_hex_byte(struct buf *b, unsigned char c)
{
	struct sb_esc_unit u;

	sb_esc_byte(c, &u);
	buf_addn(b, u.s, u.n);
}

/* s as valid UTF-8 (invalid bytes as the text \xHH, jsonesc.h); xml=true
 * also replaces what XML 1.0 cannot carry and escapes markup (attr: quotes
 * and newlines too). */
static void add_clean(struct buf *b, const char *s, bool xml, bool attr)
{
	const char *p = s ? s : "";
	struct sb_esc_unit u;
	uint32_t cp;
	size_t n;

	while (*p && !b->oom) {
		if (!xml || !(n = sb_utf8_seq((const unsigned char *)p, &cp))) {
			n = sb_esc_next(p, SB_ESC_TEXT, &u);
			buf_addn(b, u.s, u.n);
		} else if (cp == '&') {
			buf_add(b, "&amp;");
		} else if (cp == '<') {
			buf_add(b, "&lt;");
		} else if (cp == '>') {
			buf_add(b, "&gt;");
		} else if (attr && cp == '"') {
			buf_add(b, "&quot;");
		} else if (attr && (cp == '\n' || cp == '\t' || cp == '\r')) {
			buf_printf(b, "&#%u;", cp);
		} else if ((cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') || cp == 0xfffe || cp == 0xffff) {
			for (size_t k = 0; k < n; k++)
				add_hex_byte(b, (unsigned char)p[k]);
		} else {
			buf_addn(b, p, n);
		}
		p += n;
	}
}

/* A malloc'ed valid UTF-8 copy of s, or NULL on ENOMEM. */
static char *clean_dup(const char *s)
{
	struct buf b = { 0 };

	buf_add(&b, "");
	add_clean(&b, s, false, false);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* RFC 3986: everything but unreserved characters and '/' percent-encoded. */
static void add_uri_path(struct buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~/", *p))
			buf_addn(b, (const char *)p, 1);
		else
			buf_printf(b, "%%%02X", *p);
	}
}

static void iso_time(const struct timespec *ts, char *out, size_t cap, bool zone)
{
	struct tm tm;
	time_t t = ts->tv_sec;

	if (!gmtime_r(&t, &tm))
		memset(&tm, 0, sizeof(tm));
	if (zone)
		snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", (tm.tm_year + 1900) % 10000,
			 (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
			 tm.tm_sec % 100, (unsigned)(ts->tv_nsec / 1000000) % 1000u);
	else
		snprintf(out, cap, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static double elapsed(const struct sb_report *r)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - r->start_mono.tv_sec) + (double)(now.tv_nsec - r->start_mono.tv_nsec) / 1e9;
}

/* ---- Python locations ------------------------------------------------------------ */

struct pyloc {
	char file[PATH_MAX];
	unsigned long line;	/* 0 when unknown */
	char func[SB_EV_NAME_MAX];
};

/* "file:line in func()" (or "file:line") into its parts; false when it is
 * not a file location ("<string>", "<frozen ...>", garbage). */
static bool parse_pyloc(const char *s, struct pyloc *out)
{
	const char *in = NULL, *colon, *q;
	size_t flen;
	char *end;

	memset(out, 0, sizeof(*out));
	if (!s || !*s || *s == '<')
		return false;
	for (q = strstr(s, " in "); q; q = strstr(q + 1, " in "))
		in = q;
	if (in) {
		snprintf(out->func, sizeof(out->func), "%s", in + 4);
		flen = strlen(out->func);
		if (flen >= 2 && strcmp(out->func + flen - 2, "()") == 0)
			out->func[flen - 2] = '\0';
	} else {
		in = s + strlen(s);
	}
	for (colon = in; colon > s && colon[-1] != ':'; colon--)
		;
	if (colon == s || colon == in)
		return false;
	errno = 0;
	out->line = strtoul(colon, &end, 10);
	if (errno || end != in || !isdigit((unsigned char)*colon))
		return false;
	flen = (size_t)(colon - 1 - s);
	if (flen == 0 || flen >= sizeof(out->file))
		return false;
	memcpy(out->file, s, flen);
	out->file[flen] = '\0';
	return true;
}

/* A file's URI for SARIF: relative to the cwd when under it (*base true: the
 * SRCROOT base), a file: URI otherwise.  malloc'ed, NULL on ENOMEM. */
static char *file_uri(const struct sb_report *r, const char *path, bool *base)
{
	size_t cl = strlen(r->cwd);
	struct buf b = { 0 };

	buf_add(&b, "");
	*base = false;
	if (path[0] != '/') {
		*base = true;
		add_uri_path(&b, path[0] == '.' && path[1] == '/' ? path + 2 : path);
	} else if (cl > 1 && strncmp(path, r->cwd, cl) == 0 && path[cl] == '/') {
		*base = true;
		add_uri_path(&b, path + cl + 1);
	} else {
		buf_add(&b, "file://");
		add_uri_path(&b, path);
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* ---- JSON building with cJSON (every string cleaned first) --------------------------- */

struct jctx {
	bool oom;
};

static cJSON *jadd(struct jctx *j, cJSON *obj, const char *key, cJSON *item)
{
	if (!item) {
		j->oom = true;
		return NULL;
	}
	if (!obj || !(key ? cJSON_AddItemToObject(obj, key, item) : cJSON_AddItemToArray(obj, item))) {
		cJSON_Delete(item);
		j->oom = true;
		return NULL;
	}
	return item;
}

static cJSON *jstr(const char *s)
{
	char *c = clean_dup(s);
	cJSON *item = c ? cJSON_CreateString(c) : NULL;

	free(c);
	return item;
}

static void jadd_str(struct jctx *j, cJSON *obj, const char *key, const char *s)
{
	jadd(j, obj, key, jstr(s));
}

static void jadd_num(struct jctx *j, cJSON *obj, const char *key, double v)
{
	jadd(j, obj, key, cJSON_CreateNumber(v));
}

static void jadd_bool(struct jctx *j, cJSON *obj, const char *key, bool v)
{
	jadd(j, obj, key, cJSON_CreateBool(v));
}

static cJSON *jadd_obj(struct jctx *j, cJSON *obj, const char *key)
{
	return jadd(j, obj, key, cJSON_CreateObject());
}

static cJSON *jadd_arr(struct jctx *j, cJSON *obj, const char *key)
{
	return jadd(j, obj, key, cJSON_CreateArray());
}

static void jadd_text(struct jctx *j, cJSON *obj, const char *key, const char *text)
{
	jadd_str(j, jadd_obj(j, obj, key), "text", text);
}

static const char *errno_name(int err)
{
	return err > 0 ? strerrorname_np(err) : NULL;
}

static bool real_file(const char *f)
{
	return f && *f && *f != '<' && strcmp(f, ".") != 0;
}

/* ---- SARIF 2.1.0 ------------------------------------------------------------------ */

static void sarif_rules(struct jctx *j, cJSON *driver)
{
	cJSON *rules = jadd_arr(j, driver, "rules");
	char help[512];

	for (int f = 0; f < F__COUNT; f++) {
		cJSON *d = jadd_obj(j, rules, NULL), *props;

		jadd_str(j, d, "id", families[f].id);
		jadd_str(j, d, "name", families[f].name);
		jadd_text(j, d, "shortDescription", families[f].what);
		snprintf(help, sizeof(help), "%s. python-sb refused it (or, with --audit, would have). "
			 "If the program really needs it, review and add to the .py-sandboxes rule file: %s",
			 families[f].what, families[f].key);
		jadd_text(j, d, "fullDescription", help);
		jadd_text(j, d, "help", help);
		jadd_str(j, jadd_obj(j, d, "defaultConfiguration"), "level", "error");
		props = jadd_obj(j, d, "properties");
		jadd_str(j, jadd_arr(j, props, "tags"), NULL, "security");
	}
}

static cJSON *sarif_physical(struct jctx *j, cJSON *loc, const struct sb_report *r, const char *file,
			     unsigned long line)
{
	cJSON *phys = jadd_obj(j, loc, "physicalLocation"), *art;
	bool base;
	char *uri = file_uri(r, file, &base);

	if (!uri) {
		j->oom = true;
		return phys;
	}
	art = jadd_obj(j, phys, "artifactLocation");
	jadd_str(j, art, "uri", uri);
	if (base)
		jadd_str(j, art, "uriBaseId", "SRCROOT");
	free(uri);
	if (line > 0)
		jadd_num(j, jadd_obj(j, phys, "region"), "startLine", (double)line);
	return phys;
}

/* Where a finding is: the Python line that made it; else the deciding rule;
 * else the rule file, where the fix goes. */
static void sarif_locations(struct jctx *j, cJSON *res, const struct sb_report *r, const struct item *it,
			    const char *config_path)
{
	struct pyloc pl;
	bool have_py = parse_pyloc(it->pyloc, &pl);
	cJSON *loc = NULL, *rel;

	if (have_py || real_file(it->rule_file) || real_file(config_path) || it->pyloc)
		loc = jadd_obj(j, jadd_arr(j, res, "locations"), NULL);
	if (have_py) {
		sarif_physical(j, loc, r, pl.file, pl.line);
		if (pl.func[0]) {
			cJSON *ll = jadd_obj(j, jadd_arr(j, loc, "logicalLocations"), NULL);

			jadd_str(j, ll, "name", pl.func);
			jadd_str(j, ll, "kind", "function");
		}
	} else if (real_file(it->rule_file)) {
		sarif_physical(j, loc, r, it->rule_file, it->rule_line);
	} else if (real_file(config_path)) {
		sarif_physical(j, loc, r, config_path, 0);
	}
	/* "<string>:1 in <module>()": code without a file (eval, -c) */
	if (it->pyloc && !have_py)
		jadd_text(j, loc, "message", it->pyloc);
	if (real_file(it->rule_file)) {
		rel = jadd_obj(j, jadd_arr(j, res, "relatedLocations"), NULL);
		jadd_num(j, rel, "id", 1);
		sarif_physical(j, rel, r, it->rule_file, it->rule_line);
		jadd_text(j, rel, "message", it->rule_text ? it->rule_text : "the deciding rule");
	}
}

static void sarif_result(struct jctx *j, cJSON *results, const struct sb_report *r, const struct item *it,
			 const char *config_path)
{
	cJSON *res = jadd_obj(j, results, NULL), *props;
	unsigned long n = it->denied + it->would_deny;
	char fp[17], *msg = NULL;

	jadd_str(j, res, "ruleId", families[it->fam].id);
	jadd_num(j, res, "ruleIndex", it->fam);
	jadd_str(j, res, "kind", "fail");
	jadd_str(j, res, "level", it->denied ? "error" : "warning");
	if (n > 1 && asprintf(&msg, "%s [%lu times]", it->message, n) < 0)
		msg = NULL;
	jadd_text(j, res, "message", msg ? msg : it->message);
	free(msg);
	sarif_locations(j, res, r, it, config_path);
	jadd_num(j, res, "occurrenceCount", (double)n);
	snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)it->hash);
	jadd_str(j, jadd_obj(j, res, "partialFingerprints"), "pysandboxesFinding/v1", fp);
	props = jadd_obj(j, res, "properties");
	jadd_str(j, props, "object", it->object);
	if (it->proto)
		jadd_str(j, props, "protocol", it->proto);
	jadd_str(j, props, "syscall", it->syscall);
	jadd_str(j, props, "verdict", it->denied ? "denied" : "would-deny");
	jadd_num(j, props, "denied", (double)it->denied);
	jadd_num(j, props, "wouldDeny", (double)it->would_deny);
	if (it->tip)
		jadd_str(j, props, "tip", it->tip);
	if (it->pyloc)
		jadd_str(j, props, "python", it->pyloc);
	if (it->category)
		jadd_str(j, props, "category", it->category);
	if (errno_name(it->err))
		jadd_str(j, props, "errno", errno_name(it->err));
	jadd_bool(j, props, "fromEval", it->from_eval);
}

static void sarif_run_info(struct jctx *j, cJSON *run, const struct sb_report *r, int exit_status,
			   const char *config_path)
{
	cJSON *inv = jadd_obj(j, jadd_arr(j, run, "invocations"), NULL), *props;
	struct timespec now;
	char t[64];
	struct buf root = { 0 };

	jadd_bool(j, inv, "executionSuccessful", true);
	jadd_num(j, inv, "exitCode", exit_status);
	iso_time(&r->start_rt, t, sizeof(t), true);
	jadd_str(j, inv, "startTimeUtc", t);
	clock_gettime(CLOCK_REALTIME, &now);
	iso_time(&now, t, sizeof(t), true);
	jadd_str(j, inv, "endTimeUtc", t);
	if (r->cwd[0]) {
		buf_add(&root, "file://");
		add_uri_path(&root, r->cwd);
		if (r->cwd[1])
			buf_add(&root, "/");
		if (root.oom) {
			j->oom = true;
		} else {
			jadd_str(j, jadd_obj(j, inv, "workingDirectory"), "uri", root.s);
			jadd_str(j, jadd_obj(j, jadd_obj(j, run, "originalUriBaseIds"), "SRCROOT"), "uri", root.s);
		}
		free(root.s);
	}
	props = jadd_obj(j, run, "properties");
	jadd_num(j, props, "events", (double)r->events);
	jadd_num(j, props, "droppedEvents", (double)r->dropped_events);
	if (config_path)
		jadd_str(j, props, "configFile", config_path);
}

static cJSON *build_sarif(struct jctx *j, const struct sb_report *r, int exit_status, const char *config_path)
{
	cJSON *root = cJSON_CreateObject(), *run, *driver, *results;

	if (!root) {
		j->oom = true;
		return NULL;
	}
	jadd_str(j, root, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	jadd_str(j, root, "version", "2.1.0");
	run = jadd_obj(j, jadd_arr(j, root, "runs"), NULL);
	driver = jadd_obj(j, jadd_obj(j, run, "tool"), "driver");
	jadd_str(j, driver, "name", "python-sb");
	jadd_str(j, driver, "version", PACKAGE_VERSION);
	jadd_str(j, driver, "semanticVersion", PACKAGE_VERSION);
	if (PACKAGE_URL[0])
		jadd_str(j, driver, "informationUri", PACKAGE_URL);
	sarif_rules(j, driver);
	sarif_run_info(j, run, r, exit_status, config_path);
	results = jadd_arr(j, run, "results");
	for (size_t i = 0; i < r->n && !j->oom; i++)
		sarif_result(j, results, r, &r->items[i], config_path);
	return root;
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_item(struct jctx *j, cJSON *arr, const struct item *it)
{
	cJSON *o = jadd_obj(j, arr, NULL), *rule;
	struct pyloc pl;

	jadd_str(j, o, "family", families[it->fam].id);
	jadd_str(j, o, "kind", sb_event_kind_name(it->kind));
	jadd_str(j, o, "syscall", it->syscall);
	jadd_str(j, o, "object", it->object);
	if (it->proto)
		jadd_str(j, o, "protocol", it->proto);
	if (it->category)
		jadd_str(j, o, "category", it->category);
	jadd_str(j, o, "verdict", it->denied ? "denied" : "would-deny");
	jadd_num(j, o, "count", (double)(it->denied + it->would_deny));
	jadd_num(j, o, "denied", (double)it->denied);
	jadd_num(j, o, "would_deny", (double)it->would_deny);
	if (errno_name(it->err))
		jadd_str(j, o, "errno", errno_name(it->err));
	if (it->pyloc) {
		jadd_str(j, o, "python", it->pyloc);
		if (parse_pyloc(it->pyloc, &pl)) {
			jadd_str(j, o, "file", pl.file);
			if (pl.line)
				jadd_num(j, o, "line", (double)pl.line);
			if (pl.func[0])
				jadd_str(j, o, "function", pl.func);
		}
	}
	if (it->tip)
		jadd_str(j, o, "tip", it->tip);
	if (it->rule_text || it->rule_file) {
		rule = jadd_obj(j, o, "rule");
		jadd_str(j, rule, "file", it->rule_file ? it->rule_file : "");
		jadd_num(j, rule, "line", it->rule_line);
		jadd_str(j, rule, "text", it->rule_text ? it->rule_text : "");
	}
	jadd_bool(j, o, "from_eval", it->from_eval);
	jadd_str(j, o, "message", it->message);
}

static cJSON *build_json(struct jctx *j, const struct sb_report *r, int exit_status, const char *config_path)
{
	cJSON *root = cJSON_CreateObject(), *tool, *sum, *fam, *arr;
	unsigned long denied = 0, would = 0;
	char t[64];

	if (!root) {
		j->oom = true;
		return NULL;
	}
	jadd_num(j, root, "version", 1);
	tool = jadd_obj(j, root, "tool");
	jadd_str(j, tool, "name", "python-sb");
	jadd_str(j, tool, "version", PACKAGE_VERSION);
	iso_time(&r->start_rt, t, sizeof(t), true);
	jadd_str(j, root, "start_time", t);
	jadd_num(j, root, "exit_status", exit_status);
	jadd(j, root, "config", config_path ? jstr(config_path) : cJSON_CreateNull());
	jadd_str(j, root, "cwd", r->cwd);
	for (size_t i = 0; i < r->n; i++) {
		denied += r->items[i].denied;
		would += r->items[i].would_deny;
	}
	sum = jadd_obj(j, root, "summary");
	jadd_num(j, sum, "distinct", (double)r->n);
	jadd_num(j, sum, "events", (double)r->events);
	jadd_num(j, sum, "denied", (double)denied);
	jadd_num(j, sum, "would_deny", (double)would);
	jadd_num(j, sum, "dropped_events", (double)r->dropped_events);
	fam = jadd_obj(j, sum, "families");
	for (int f = 0; f < F__COUNT; f++)
		if (r->fam_events[f])
			jadd_num(j, fam, families[f].id, (double)r->fam_events[f]);
	arr = jadd_arr(j, root, "violations");
	for (size_t i = 0; i < r->n && !j->oom; i++)
		json_item(j, arr, &r->items[i]);
	return root;
}

/* ---- JUnit XML ---------------------------------------------------------------------- */

static void xml_attr(struct buf *b, const char *name, const char *value)
{
	buf_printf(b, " %s=\"", name);
	add_clean(b, value, true, true);
	buf_add(b, "\"");
}

static void xml_property(struct buf *b, const char *name, const char *value)
{
	buf_add(b, "      <property");
	xml_attr(b, "name", name);
	xml_attr(b, "value", value);
	buf_add(b, "/>\n");
}

static void junit_case(struct buf *b, const struct sb_report *r, int f)
{
	unsigned long distinct = 0, denied = 0;
	char msg[160];

	for (size_t i = 0; i < r->n; i++)
		if (r->items[i].fam == (enum fam)f) {
			distinct++;
			denied += r->items[i].denied;
		}
	buf_add(b, "    <testcase");
	xml_attr(b, "name", families[f].id);
	xml_attr(b, "classname", "python-sb.policy");
	buf_add(b, " time=\"0\"");
	if (!r->fam_events[f]) {
		buf_add(b, "/>\n");
		return;
	}
	buf_add(b, ">\n      <failure");
	snprintf(msg, sizeof(msg), "%lu distinct access(es), %lu event(s) %s", distinct, r->fam_events[f],
		 denied ? "refused" : "would have been refused");
	xml_attr(b, "message", msg);
	xml_attr(b, "type", denied ? "denied" : "would-deny");
	buf_add(b, ">");
	for (size_t i = 0; i < r->n; i++) {
		const struct item *it = &r->items[i];

		if (it->fam != (enum fam)f)
			continue;
		add_clean(b, it->message, true, false);
		if (it->denied + it->would_deny > 1)
			buf_printf(b, " [%lu times]", it->denied + it->would_deny);
		buf_add(b, "\n");
	}
	if (r->fam_dropped[f])
		buf_printf(b, "(%lu more event(s) not itemised: the report is full)\n", r->fam_dropped[f]);
	buf_add(b, "</failure>\n    </testcase>\n");
}

static void build_junit(struct buf *b, const struct sb_report *r, int exit_status, const char *config_path)
{
	int failures = 0;
	char t[64], num[32];
	double secs = elapsed(r);

	for (int f = 0; f < F__COUNT; f++)
		failures += r->fam_events[f] != 0;
	iso_time(&r->start_rt, t, sizeof(t), false);
	buf_add(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	buf_printf(b, "<testsuites name=\"python-sb\" tests=\"%d\" failures=\"%d\" errors=\"0\" time=\"%.3f\">\n",
		   F__COUNT, failures, secs);
	buf_printf(b, "  <testsuite name=\"python-sb policy\" tests=\"%d\" failures=\"%d\" errors=\"0\" "
		   "skipped=\"0\" time=\"%.3f\" timestamp=\"%s\">\n", F__COUNT, failures, secs, t);
	buf_add(b, "    <properties>\n");
	xml_property(b, "tool", "python-sb " PACKAGE_VERSION);
	xml_property(b, "config", config_path ? config_path : "");
	snprintf(num, sizeof(num), "%d", exit_status);
	xml_property(b, "exit_status", num);
	snprintf(num, sizeof(num), "%lu", r->events);
	xml_property(b, "events", num);
	snprintf(num, sizeof(num), "%lu", r->dropped_events);
	xml_property(b, "dropped_events", num);
	buf_add(b, "    </properties>\n");
	for (int f = 0; f < F__COUNT; f++)
		junit_case(b, r, f);
	buf_add(b, "  </testsuite>\n</testsuites>\n");
}

/* ---- writing ------------------------------------------------------------------------ */

/* Temporary file next to `path`, then rename: a reader (or a CI step that
 * runs after a crash) sees the old report or the new one, never half. */
static int write_atomic(const char *path, const char *data, size_t len)
{
	const char *slash = strrchr(path, '/');
	char *tmp = NULL;
	int fd, rc;

	if (asprintf(&tmp, "%.*s.%s.XXXXXX", slash ? (int)(slash - path + 1) : 0, path,
		     slash ? slash + 1 : path) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	rc = sb_write_all(fd, data, len);
	if (!rc && fchmod(fd, 0644) < 0)
		rc = -errno;
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

static int render_json(struct jctx *j, cJSON *doc, char **text)
{
	*text = NULL;
	if (!doc || j->oom) {
		cJSON_Delete(doc);
		return -ENOMEM;
	}
	*text = cJSON_Print(doc);
	cJSON_Delete(doc);
	return *text ? 0 : -ENOMEM;
}

int sb_report_write(struct sb_report *r, int exit_status, const char *config_path)
{
	struct jctx j = { false };
	struct buf b = { 0 };
	char *text = NULL;
	int rc = 0;

	if (!r)
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	switch (r->format) {
	case SB_REPORT_SARIF:
		rc = render_json(&j, build_sarif(&j, r, exit_status, config_path), &text);
		break;
	case SB_REPORT_JSON:
		rc = render_json(&j, build_json(&j, r, exit_status, config_path), &text);
		break;
	case SB_REPORT_JUNIT:
		build_junit(&b, r, exit_status, config_path);
		rc = b.oom ? -ENOMEM : 0;
		text = b.s;
		if (rc) {
			free(text);
			text = NULL;
		}
		break;
	}
	pthread_mutex_unlock(&r->lock);
	if (!rc) {
		size_t len = strlen(text);

		/* cJSON_Print ends without a newline; text tools want one. */
		if (len && text[len - 1] != '\n') {
			char *t2 = realloc(text, len + 2);

			if (!t2) {
				free(text);
				return -ENOMEM;
			}
			text = t2;
			text[len++] = '\n';
			text[len] = '\0';
		}
		rc = write_atomic(r->path, text, len);
	}
	free(text);
	return rc;
}
