/* Learning: record events, generalise them into rules and merge them into the
 * rule file (reference §3, issue 4).  Library style. */
#ifndef SB_LEARN_H
#define SB_LEARN_H

#include "diag.h"
#include "event.h"
#include "policy.h"

struct sb_learn;

struct sb_learn_opts {
	const struct sb_policy *policy;	/* accesses it already allows are not learned */
	char *const *envp;		/* launching environment (HOME, PWD, VIRTUAL_ENV, TMPDIR...) */
	const char *cwd;
	const char *python_prefix;	/* interpreter tree: never learned */
};

int sb_learn_new(const struct sb_learn_opts *opts, struct sb_learn **out);
void sb_learn_free(struct sb_learn *l);

/* Record one event (called from the supervisor's event thread). */
void sb_learn_record(struct sb_learn *l, const struct sb_event *ev);

/* Merge what was learned into `path` (template text when it does not exist),
 * backup to .old/.old_N, atomic write keeping permissions.  *message receives
 * the upstream INFO text ("Write all learning rules in '...'. ...") or NULL
 * when nothing new was learned. */
int sb_learn_write(struct sb_learn *l, const char *path, const char *template_path,
		   char **message, struct sb_diag *diag);

#endif
