/* libFuzzer target: the decision log and the human refusal line
 * (src/log.h) on events whose every string came from a hostile program.
 *
 * Input: fixed fields (kind, verdict, errno, access, protocol, direction,
 * category, cause, eval flag, syscall number, ids, time, address family and
 * bytes, rule line, whether there is a rule and whether the packed stack is
 * left unterminated), then NUL-separated strings: syscall, path, name, tip,
 * Python location, module being imported, packed stack, rule file and rule
 * text.
 *
 * Promises checked:
 *  - sb_event_to_json fits SB_LOG_LINE_MAX for any event, is exactly one
 *    line, parses back with cJSON as one object and nothing after it, and
 *    every string field reads back as the event's string with each byte
 *    that is not valid UTF-8 shown as the text \xHH; a smaller buffer gives
 *    the same line or -ENOSPC with an empty buffer;
 *  - sb_event_to_notice fits SB_NOTICE_MAX and is one line of valid UTF-8
 *    with no control character before its final newline (terminal-safe),
 *    whatever the program chose (the syscall name, which the supervisor
 *    chooses, is taken from its table);
 *  - sb_json_put_str round-trips the same way or leaves the length alone;
 *  - the packed stack is read within its buffer even when unterminated. */
#include "config.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "event.h"
#include "fuzz_input.h"
#include "log.h"

/* RFC 3629 length of the sequence at s (NUL-terminated), 0 when invalid;
 * an independent copy of the rule log.c documents. */
static size_t utf8_ok(const unsigned char *s)
{
	unsigned c = s[0];
	size_t len;
	uint32_t v;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, v = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10ffff)) || (v >= 0xd800 && v < 0xe000))
		return 0;
	return len;
}

/* What a JSON reader must get back for `s`. */
static char *expected_text(const char *s)
{
	static const char hex[] = "0123456789abcdef";
	char *out = malloc(4 * strlen(s) + 1), *o = out;

	if (!out)
		abort();
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_ok(p);

		if (n == 0) {
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
			p++;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	return out;
}

static void check_field(const cJSON *o, const char *key, const char *want)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	char *exp = expected_text(want);

	if (!cJSON_IsString(v) || strcmp(v->valuestring, exp) != 0) {
		fprintf(stderr, "field %s: got %s, want %s\n", key, cJSON_IsString(v) ? v->valuestring : "(none)",
			exp);
		abort();
	}
	free(exp);
}

static bool valid_utf8(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_ok(p);

		if (n == 0)
			return false;
		p += n;
	}
	return true;
}

static void check_json(const struct sb_event *ev, size_t small_cap)
{
	static char line[SB_LOG_LINE_MAX];
	int len = sb_event_to_json(ev, line, sizeof(line));
	const char *end = NULL;
	cJSON *o;

	FUZZ_CHECK(len > 1 && (size_t)len == strlen(line));
	FUZZ_CHECK(line[len - 1] == '\n' && line[len - 2] == '}');
	FUZZ_CHECK(fuzz_one_line(line, (size_t)len - 1));
	FUZZ_CHECK(valid_utf8(line));
	o = cJSON_ParseWithLengthOpts(line, (size_t)len - 1, &end, false);
	FUZZ_CHECK(o && cJSON_IsObject(o));
	FUZZ_CHECK(end == line + len - 1);
	check_field(o, "syscall", ev->syscall);
	check_field(o, "kind", sb_event_kind_name(ev->kind));
	switch (ev->kind) {
	case SB_EV_PATH:
	case SB_EV_UNIX:
	case SB_EV_EXEC:
		check_field(o, "object", ev->path);
		break;
	case SB_EV_ENV:
	case SB_EV_IMPORT:
	case SB_EV_API:
	case SB_EV_DNS:
		check_field(o, "object", ev->name);
		break;
	default:
		break;
	}
	if (ev->pyloc[0])
		check_field(o, "python", ev->pyloc);
	if (ev->importing[0])
		check_field(o, "importing", ev->importing);
	if (ev->rule) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "rule");

		FUZZ_CHECK(cJSON_IsObject(r));
		check_field(r, "file", ev->rule->file ? ev->rule->file : "");
		check_field(r, "text", ev->rule->text ? ev->rule->text : "");
	}
	cJSON_Delete(o);

	/* The same line into a small buffer, or a clean refusal. */
	char *small = malloc(small_cap ? small_cap : 1);
	int n2;

	if (!small)
		abort();
	n2 = sb_event_to_json(ev, small, small_cap);
	if (n2 >= 0)
		FUZZ_CHECK(n2 == len && strcmp(small, line) == 0);
	else
		FUZZ_CHECK(n2 == -ENOSPC && (small_cap == 0 || small[0] == '\0'));
	free(small);
}

static void check_notice(const struct sb_event *ev)
{
	static char line[SB_NOTICE_MAX];
	int len = sb_event_to_notice(ev, line, sizeof(line));

	FUZZ_CHECK(len > 1 && (size_t)len == strlen(line));
	FUZZ_CHECK(line[len - 1] == '\n');
	FUZZ_CHECK(strncmp(line, "python-sb: ", 11) == 0);
	if (!fuzz_one_line(line, (size_t)len - 1) || !valid_utf8(line)) {
		fprintf(stderr, "notice: %s", line);
		FUZZ_CHECK(!"a notice is one clean line");
	}
	/* The other texts: bounded, whatever they say. */
	len = sb_event_refusal_text(ev, line, sizeof(line));
	FUZZ_CHECK(len == -EINVAL || len == -ENOSPC || (len >= 0 && (size_t)len == strlen(line)));
	len = sb_event_tip(ev, line, sizeof(line));
	FUZZ_CHECK(len == -ENOSPC || (len >= 0 && (size_t)len == strlen(line)));
}

static void check_put_str(const char *s, size_t cap)
{
	char *buf = malloc(cap + 8);
	size_t len = 3;
	int rc;

	if (!buf)
		abort();
	memcpy(buf, "[0,", 3);
	rc = sb_json_put_str(buf, cap + 3, &len, s);
	if (rc == 0) {
		FUZZ_CHECK(len < cap + 3 && strlen(buf) == len);
		memcpy(buf + len, "]", 2);
		cJSON *o = cJSON_Parse(buf);
		FUZZ_CHECK(o && cJSON_GetArraySize(o) == 2);
		char *exp = expected_text(s);
		FUZZ_CHECK(strcmp(cJSON_GetArrayItem(o, 1)->valuestring, exp) == 0);
		free(exp);
		cJSON_Delete(o);
	} else {
		FUZZ_CHECK(rc == -ENOSPC && len == 3);
	}
	free(buf);
}

static void fill_addr(struct sb_event *ev, struct fin *f)
{
	uint8_t fam = fin_u8(f);
	uint8_t raw[28];

	fin_take(f, raw, sizeof(raw));
	memset(&ev->addr, 0, sizeof(ev->addr));
	switch (fam % 4) {
	case 0: {
		struct sockaddr_in *in = (struct sockaddr_in *)&ev->addr;
		in->sin_family = AF_INET;
		memcpy(&in->sin_port, raw, 2);
		memcpy(&in->sin_addr, raw + 2, 4);
		break;
	}
	case 1: {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ev->addr;
		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_port, raw, 2);
		memcpy(&in6->sin6_addr, raw + 2, 16);
		if (fam & 4) {	/* IPv4-mapped */
			memset(&in6->sin6_addr, 0, 10);
			in6->sin6_addr.s6_addr[10] = in6->sin6_addr.s6_addr[11] = 0xff;
		}
		break;
	}
	case 2:
		ev->addr.ss_family = AF_UNIX;
		memcpy(((struct sockaddr_un *)&ev->addr)->sun_path, raw, sizeof(raw));
		break;
	default:
		memcpy(&ev->addr, raw, sizeof(raw));
		break;
	}
}

static const char *const syscalls[] = {
	"", "openat", "open", "creat", "newfstatat", "statx", "execve", "execveat", "connect", "sendto", "sendmsg",
	"bind", "listen", "clone", "kill", "unlinkat", "renameat2", "mkdirat", "readlinkat", "env", "import",
	"api", "dns",
};
#define NSYSCALLS (sizeof(syscalls) / sizeof(syscalls[0]))

static bool known_syscall(const char *s)
{
	for (size_t i = 0; i < NSYSCALLS; i++)
		if (strcmp(s, syscalls[i]) == 0)
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sb_event ev;
	static char rule_file[PATH_MAX], rule_text[PATH_MAX];
	struct sb_rule_ref ref;
	struct fin f = { data, size };
	uint8_t flags;
	size_t small_cap;

	memset(&ev, 0, sizeof(ev));
	ev.kind = (enum sb_event_kind)(fin_u8(&f) % 9);
	ev.verdict = (enum sb_verdict)(fin_u8(&f) % 3);
	ev.err = (int8_t)fin_u8(&f);
	ev.access = fin_u8(&f);
	ev.proto = fin_u8(&f) & 7;
	ev.dir = fin_u8(&f) & 7;
	ev.category = (int8_t)fin_u8(&f) % 12;
	ev.cause = (enum sb_event_cause)(fin_u8(&f) % 3);
	flags = fin_u8(&f);
	ev.from_eval = flags & 1;
	ev.nr = (int32_t)fin_u32(&f);
	ev.pid = (pid_t)fin_u32(&f);
	ev.tid = (pid_t)fin_u32(&f);
	ev.ts.tv_sec = (time_t)fin_u64(&f);
	ev.ts.tv_nsec = (long)(fin_u32(&f) % 1000000000u);
	fill_addr(&ev, &f);
	ref.line = fin_u32(&f);
	small_cap = fin_u16(&f);

	fin_str(&f, ev.syscall, sizeof(ev.syscall));
	fin_str(&f, ev.path, sizeof(ev.path));
	fin_str(&f, ev.name, sizeof(ev.name));
	fin_str(&f, ev.tip, sizeof(ev.tip));
	fin_str(&f, ev.pyloc, sizeof(ev.pyloc));
	fin_str(&f, ev.importing, sizeof(ev.importing));
	fin_str(&f, ev.stack, sizeof(ev.stack));
	if (flags & 2) {
		/* A packed stack that fills its buffer without a terminator. */
		size_t k = strlen(ev.stack);

		for (size_t i = k; i < sizeof(ev.stack); i++)
			ev.stack[i] = "a\tb\tc\td\n"[i % 8];
		ev.stack[sizeof(ev.stack) - 1] = k ? ev.stack[0] : 'x';
	}
	fin_str(&f, rule_file, sizeof(rule_file));
	fin_str(&f, rule_text, sizeof(rule_text));
	ref.file = flags & 8 ? NULL : rule_file;
	ref.text = flags & 16 ? NULL : rule_text;
	ev.rule = flags & 4 ? &ref : NULL;

	check_json(&ev, small_cap);
	/* The notice prints the syscall name as is: it comes from the
	 * supervisor's table or is one of the agent's four kinds, never from
	 * the program.  Keep it one of those. */
	if (!known_syscall(ev.syscall))
		snprintf(ev.syscall, sizeof(ev.syscall), "%s", syscalls[strlen(ev.syscall) % NSYSCALLS]);
	check_notice(&ev);
	check_put_str(ev.path, small_cap % 512);
	return 0;
}
