/* The decision log: one JSON object per line (doc/log-schema.md), and the
 * human refusal line printed on stderr.
 *
 * Every function here writes into a caller's buffer and never allocates, so
 * the supervisor may call them on a deciding worker or in the event thread.
 */
#ifndef SB_LOG_H
#define SB_LOG_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"

/* Version of the JSON lines schema ("version" field). */
#define SB_LOG_SCHEMA_VERSION 1

/* A buffer this big holds the JSON line of any event (every byte of every
 * string escaped, rule file and text up to PATH_MAX each). */
#define SB_LOG_LINE_MAX (192 * 1024)
/* A buffer this big holds the human line of any event (long names and paths
 * are cut with "..." there). */
#define SB_NOTICE_MAX 8192

/* Serialise `ev` as one JSON line (with '\n') into buf.  Returns the length,
 * or -ENOSPC when it does not fit (buf then holds no usable line). */
int sb_event_to_json(const struct sb_event *ev, char *buf, size_t cap);

/* Is `ip` (inet_ntop's text; an IPv4-mapped address as IPv4) the address
 * of a cloud metadata service, which hands out the machine's credentials
 * (169.254.169.254 and its kin, listed in log.c)? */
bool sb_ip_is_metadata(const char *ip);

/* The human refusal line, "python-sb: DENIED open '/x' (read) at a.py:3 in f(): no expose rule; add expose-ro=/"
 * with '\n' ("WOULD DENY" for SB_WOULD_DENY).  Returns the length or -ENOSPC. */
int sb_event_to_notice(const struct sb_event *ev, char *buf, size_t cap);

/* The message of the exception the in-interpreter agent raises for a refused
 * open, connect or exec (upstream's texts: "Access to '/x' must be accepted
 * by a rule.", "Guard network connection to '[1.2.3.4]:80' DENIED by
 * implicit default policy." ...), without '\n'.  Returns the length,
 * -ENOSPC, or -EINVAL for an event of another kind. */
int sb_event_refusal_text(const struct sb_event *ev, char *buf, size_t cap);

/* The rule line that would allow `ev` ("expose-ro=~/.ssh", "net=ALLOW|TCP|
 * 10.0.0.1/32|80|OUT", "python-api=ALLOW:threads"...): ev->tip when the
 * supervisor filled it, else computed from the event (HOME and the current
 * directory give the ~/ and ./ spellings).  Empty when no line can allow it
 * (an explicit net=DENY, an ignore= rule, the protected policy file).
 * Returns the length or -ENOSPC. */
int sb_event_tip(const struct sb_event *ev, char *buf, size_t cap);

/* The import system caching bytecode: a write to a __pycache__ directory or
 * to a .pyc (or its temporary file) directly in one.  Where the program may
 * not write, the interpreter goes on without: the refusal is logged but not
 * printed, counted by neither --audit nor the CI report, and never learned
 * (a writable cache would let one run plant code for every later run). */
bool sb_event_bytecode_write(const struct sb_event *ev);

/* Fill ev->comm from /proc/TID/comm (a host tid).  Off the hot path: the
 * thread may be gone by then (-ENOENT, comm stays ""). */
int sb_event_fill_comm(struct sb_event *ev);

/* Names used in both the log and the rule files. */
const char *sb_api_category_name(int cat);		/* "process-exec", ... or NULL */
int sb_api_category_from_name(const char *name);	/* enum sb_api_category or -1 */
const char *sb_event_kind_name(enum sb_event_kind kind);	/* "path", "net", ... */

/* Append `s` to buf[*len..cap) as a JSON string with its quotes: '"' and
 * '\\' escaped, control characters as \n/\t/\u00XX, and bytes that are not
 * valid UTF-8 as the text \xHH (a backslash, 'x' and two hex digits, so a
 * hostile name can neither break the line nor be mistaken for another).
 * Returns 0 or -ENOSPC (then *len is unchanged). */
int sb_json_put_str(char *buf, size_t cap, size_t *len, const char *s);

#endif
