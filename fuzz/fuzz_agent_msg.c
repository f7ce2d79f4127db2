/* libFuzzer target: one message from the in-interpreter agent
 * (sb_agent_parse_message, src/agent.h), then everything its events reach:
 * the JSON log line, the human line, and the learner.
 *
 * The agent lives inside the sandboxed program, which owns its socket: any
 * byte string can arrive as one SOCK_SEQPACKET record.  Input: the record,
 * handed over in a buffer of exactly its length (no terminator).
 *
 * Promises checked:
 *  - the parser returns the number of events it delivered (at least one),
 *    or -EINVAL;
 *  - each event is one of the agent's kinds (import, api, env, dns, eval) with
 *    NUL-terminated fields free of control characters (they reach terminals,
 *    logs and rule files), a known verdict, and an address only for dns;
 *  - each event gives a JSON line cJSON parses and a one-line notice;
 *  - learning from the events (no policy: everything is new) writes a rule
 *    file, from the template, that loads again: a hostile agent cannot make
 *    the learned file unreadable, nor slip a line of its own into it. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "agent.h"
#include "event.h"
#include "fuzz_input.h"
#include "fuzz_learnenv.h"
#include "log.h"

static struct lenv env;

struct seen {
	struct sb_learn *l;
	int n;
};

static bool terminated_clean(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	return n < cap && fuzz_one_line(s, n);
}

static void on_event(const struct sb_event *ev, void *data)
{
	static char line[SB_LOG_LINE_MAX];
	struct seen *s = data;
	cJSON *o;
	int len;

	s->n++;
	FUZZ_CHECK(ev->kind == SB_EV_IMPORT || ev->kind == SB_EV_API || ev->kind == SB_EV_ENV ||
		   ev->kind == SB_EV_DNS || ev->kind == SB_EV_EVAL);
	FUZZ_CHECK(ev->kind != SB_EV_EVAL || (unsigned)ev->eval_key < SB_EVAL__COUNT);
	FUZZ_CHECK(ev->verdict == SB_ALLOWED || ev->verdict == SB_DENIED || ev->verdict == SB_WOULD_DENY);
	FUZZ_CHECK(ev->nr == -1 && ev->pid >= 0 && ev->tid >= 0);
	FUZZ_CHECK(ev->category >= -1 && ev->category < SB_API__COUNT);
	FUZZ_CHECK(terminated_clean(ev->syscall, sizeof(ev->syscall)));
	FUZZ_CHECK(strcmp(ev->syscall, sb_event_kind_name(ev->kind)) == 0);
	FUZZ_CHECK(terminated_clean(ev->name, sizeof(ev->name)) && ev->name[0]);
	FUZZ_CHECK(terminated_clean(ev->pyloc, sizeof(ev->pyloc)));
	FUZZ_CHECK(terminated_clean(ev->tip, sizeof(ev->tip)));
	FUZZ_CHECK(strnlen(ev->path, sizeof(ev->path)) == 0);
	if (ev->kind == SB_EV_DNS)
		FUZZ_CHECK(ev->addr.ss_family == AF_INET || ev->addr.ss_family == AF_INET6 ||
			   ev->addr.ss_family == AF_UNSPEC);
	else
		FUZZ_CHECK(ev->addr.ss_family == AF_UNSPEC);

	len = sb_event_to_json(ev, line, sizeof(line));
	FUZZ_CHECK(len > 1 && line[len - 1] == '\n');
	o = cJSON_ParseWithLength(line, (size_t)len - 1);
	FUZZ_CHECK(o && cJSON_IsObject(o));
	cJSON_Delete(o);
	len = sb_event_to_notice(ev, line, SB_NOTICE_MAX);
	FUZZ_CHECK(len > 1 && line[len - 1] == '\n' && fuzz_one_line(line, (size_t)len - 1));
	sb_learn_record(s->l, ev);
}

/* Every learned line is a line of the file: nothing the agent said may
 * have become a second rule on a line of its own. */
static void check_learned(struct sb_learn *l)
{
	char *text = NULL, *msg = NULL;
	struct sb_policy *p;
	struct sb_diag d;
	int rc;

	sb_diag_init(&d);
	rc = sb_learn_lines(l, &text, &d);
	FUZZ_CHECK(rc == 0 && text);
	for (char *line = text, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		FUZZ_CHECK(nl != NULL);
		FUZZ_CHECK(fuzz_one_line(line, (size_t)(nl - line)));
		FUZZ_CHECK(line[0] == '#' || !strncmp(line, "python-import=", 14) || !strncmp(line, "python-api=", 11) ||
			   !strncmp(line, "env=", 4) || !strncmp(line, "net=", 4) || !strncmp(line, "eval-", 5));
	}
	free(text);
	lenv_clean(&env);
	rc = sb_learn_write(l, env.cfg, env.tmpl, &msg, &d);
	FUZZ_CHECK(rc == 0);
	free(msg);
	sb_diag_free(&d);
	lenv_check_no_temp(&env);
	p = lenv_load(&env, true);
	if (!p) {
		size_t n;
		char *file = lenv_slurp(env.cfg, &n);

		fprintf(stderr, "---- learned file ----\n%s\n----\n", file ? file : "(none)");
		free(file);
		FUZZ_CHECK(!"a learned rule file loads");
	}
	sb_policy_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { NULL, 0 };
	char *msg;
	int rc;

	if (!env.dir[0])
		lenv_init(&env, "fuzz_agent_msg");
	if (size > SB_AGENT_MSG_MAX)
		return 0;
	msg = malloc(size ? size : 1);	/* exactly the record: no terminator */
	if (!msg)
		abort();
	memcpy(msg, data, size);
	s.l = lenv_learner(&env, NULL);
	rc = sb_agent_parse_message(msg, size, on_event, &s);
	FUZZ_CHECK(rc == -EINVAL || rc == s.n);
	FUZZ_CHECK(rc != 0);
	if (rc > 0)
		check_learned(s.l);
	/* The parser alone, with no receiver. */
	FUZZ_CHECK(sb_agent_parse_message(msg, size, NULL, NULL) == rc);
	sb_learn_free(s.l);
	free(msg);
	return 0;
}
