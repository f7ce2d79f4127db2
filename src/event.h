/* One decision of the supervisor (or the attach backend, or the agent), as it
 * reaches the log writer and the learn recorder (SPEC §5).
 *
 * Events are built on the deciding worker's stack and copied by value into the
 * event ring; they hold no pointers into the target or the heap except the
 * rule reference, which points into the (immutable, long-lived) policy.
 */
#ifndef SB_EVENT_H
#define SB_EVENT_H

#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "policy.h"

enum sb_event_kind {
	SB_EV_PATH = 0,	/* open/stat/unlink/... of a path */
	SB_EV_NET,	/* connect/bind/listen/sendto of an address */
	SB_EV_UNIX,	/* AF_UNIX socket path (judged as a path) */
	SB_EV_EXEC,	/* execve/execveat */
	SB_EV_PROC,	/* process/thread creation, signals, privileges: api category */
	SB_EV_ENV,	/* an environment variable read (from the agent) */
	SB_EV_IMPORT,	/* a module import (from the agent) */
	SB_EV_API,	/* a python-api function call (from the agent) */
	SB_EV_DNS,	/* a host name the program resolved, with its addresses (agent) */
	SB_EV_EVAL,	/* a construct evaluated code used outside its eval-* profile (agent) */
};

/* The eval-* list keys, in the order the learner writes them (reference §3),
 * then the pseudo key of a call site whose own namespace was honoured. */
enum sb_eval_key {
	SB_EVAL_SYNTAX = 0,
	SB_EVAL_IMPORT,
	SB_EVAL_CALL,
	SB_EVAL_ATTRIBUTE,
	SB_EVAL_MAGIC,
	SB_EVAL_CONTEXT_SITE,
	SB_EVAL_CALLER_SITE,	/* a bare evaluation that needed the caller's scope */
	SB_EVAL_REFUSED,	/* refused for a reason no eval-* list lifts (a limit
				 * such as eval-timeout, a construct never allowed):
				 * the name is the guard's reason, never learned */
	SB_EVAL__COUNT
};

enum sb_verdict {
	SB_ALLOWED = 0,
	SB_DENIED,	/* refused */
	SB_WOULD_DENY,	/* --audit / learning: would have been refused, let through */
};

#define SB_EV_NAME_MAX 128
#define SB_EV_LOC_MAX 256
#define SB_EV_STACK_MAX 2048

/* Why the supervisor refused (or would refuse) a call, when it is not the
 * plain policy verdict on the object. */
enum sb_event_cause {
	SB_CAUSE_POLICY = 0,	/* the rule (or its absence) for the object */
	SB_CAUSE_IMPORT,	/* made for an import of a module python-import= does not list */
	SB_CAUSE_EVAL,		/* made by code from eval/exec/compile, no eval-* rule grants it */
};

struct sb_event {
	struct timespec ts;
	pid_t pid, tid;
	int nr;				/* syscall number, -1 for agent events */
	char comm[16];			/* the thread's name (/proc/TID/comm) when known, else "" */
	char syscall[24];		/* "openat", "connect", ... */
	enum sb_event_kind kind;
	enum sb_verdict verdict;
	int err;			/* errno returned to the program (0 if allowed) */
	unsigned access;		/* enum sb_access bits for paths */

	char path[PATH_MAX];		/* SB_EV_PATH/UNIX/EXEC: canonical path */

	/* SB_EV_NET: address, proto (enum sb_net_proto), dir (enum sb_net_dir) */
	struct sockaddr_storage addr;
	unsigned proto, dir;

	/* SB_EV_PROC/API: category; SB_EV_ENV/IMPORT/API/DNS: name;
	 * SB_EV_EVAL: the token (node, name, module, "file:line" of a site) */
	int category;			/* enum sb_api_category or -1 */
	char name[SB_EV_NAME_MAX];
	/* SB_EV_EVAL: which key, and the named profile ("" for the default) */
	enum sb_eval_key eval_key;
	char eval_profile[SB_EV_NAME_MAX];

	const struct sb_rule_ref *rule;	/* deciding rule, points into the policy */
	char tip[SB_EV_NAME_MAX + PATH_MAX];	/* the line that would allow it, "" if none */
	char pyloc[SB_EV_LOC_MAX];	/* "app/tools.py:42 in fetch()" or "" */
	bool from_eval;			/* made by code from eval/exec/compile */
	char importing[SB_EV_NAME_MAX];	/* module being imported, or "" */
	/* The Python stack, innermost first, one frame per line:
	 * "file\tline\tfunc\tflags\n" (line -1 when unknown; flags: 'e' code from
	 * eval, 'l' library code, may be empty).  File and function names hold no
	 * control characters (the tracer replaces them), so tabs and newlines
	 * separate safely.  Frames that do not fit are left out.  "" if unknown. */
	char stack[SB_EV_STACK_MAX];
	enum sb_event_cause cause;
};

#endif
