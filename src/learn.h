/* Learning: record events, generalise them into rules and merge them into the
 * rule file (reference §3, issue 4).  Library style: 0 or -errno, never prints.
 *
 * Life cycle in python-sb (learn mode):
 *   sb_learn_new()                 before the program starts
 *   sb_learn_replay(journal)       what a killed python-sb had seen (optional)
 *   sb_learn_journal_open(journal) crash-proof copy of every new item (optional)
 *   sb_learn_record()              for each event (supervisor and agent)
 *   sb_learn_write()               at the end, whatever the end was
 *   sb_learn_journal_close(true)   the journal is no longer needed
 *   sb_learn_free()
 * In --audit mode the same recorder collects what the policy would refuse and
 * sb_learn_audit_summary() gives the text printed at exit.
 */
#ifndef SB_LEARN_H
#define SB_LEARN_H

#include <stdbool.h>

#include "diag.h"
#include "event.h"
#include "policy.h"

struct sb_learn;

struct sb_learn_opts {
	const struct sb_policy *policy;	/* accesses it already allows are not learned (NULL: none are) */
	char *const *envp;		/* launching environment (HOME, VIRTUAL_ENV, TMPDIR, ports...) */
	const char *cwd;		/* launching directory (the ./ spelling) */
	/* The interpreter's own tree (sys.prefix): never learned.  A path to a
	 * file (the executable) is taken as python_exe instead. */
	const char *python_prefix;
	const char *python_base_prefix;	/* sys.base_prefix when it differs (venvs), or NULL */
	const char *python_exe;		/* the interpreter: its launch is not an exec= line */
	const char *hosts_path;		/* names for addresses; NULL = /etc/hosts */
	const char *datadir;		/* module lists; NULL = installed data, else the source tree */
	bool audit;			/* keep each refusal for sb_learn_audit_summary() (--audit) */
};

int sb_learn_new(const struct sb_learn_opts *opts, struct sb_learn **out);
void sb_learn_free(struct sb_learn *l);

/* Record one event (called from the supervisor's event thread and the
 * agent's; serialised inside).  Deduplicated; what the policy already allows
 * is dropped here, so merging into an existing file adds only new lines.
 * With opts->audit, refusals (SB_DENIED, SB_WOULD_DENY) are also kept, once
 * each, for the audit summary. */
void sb_learn_record(struct sb_learn *l, const struct sb_event *ev);

/* Merge what was learned into `path` (template text when it does not exist;
 * `template_path` NULL = the installed rules/py-sandboxes.template, else the
 * source tree's), backup to .old/.old_N, atomic write keeping permissions.
 * *message receives the upstream INFO text ("Write all learning rules in
 * '...'.\nCheck and update this file to validate the rules.") or NULL when
 * nothing new was learned (then nothing is written). */
int sb_learn_write(struct sb_learn *l, const char *path, const char *template_path,
		   char **message, struct sb_diag *diag);

/* The learned lines as they would be merged, one block after the other
 * (tests, --audit).  *text malloc'ed, "" when nothing was learned. */
int sb_learn_lines(struct sb_learn *l, char **text, struct sb_diag *diag);

/* ---- journal: survive a SIGKILL of python-sb itself -------------------- */

/* Append every new deduplicated item to `path` as one JSON line (created
 * 0600 when missing, appended to otherwise), fsync'ed in batches and on
 * close. */
int sb_learn_journal_open(struct sb_learn *l, const char *path);
/* fsync and close; remove the file when `remove` (after a successful write). */
int sb_learn_journal_close(struct sb_learn *l, bool remove);
/* Feed the items of a journal left by an earlier run back into the recorder
 * (still filtered by the policy).  A missing file is not an error; a torn last
 * line is skipped.  *n_items (may be NULL) receives how many were read. */
int sb_learn_replay(struct sb_learn *l, const char *path, unsigned long *n_items);
/* The journal name for a rule file: "<dir>/.py-sandboxes.journal" for
 * "<dir>/.py-sandboxes", "<dir>/.<name>.journal" for a visible name.  malloc'ed. */
char *sb_learn_journal_name(const char *rule_file);

/* ---- audit ----------------------------------------------------------- */

/* Every would-be refusal once, with its count, Python location and tip, a
 * count per rule family, then the lines to add (generalised as learning
 * would).  *text malloc'ed; "" when nothing would have been refused.
 * Returns the number of distinct refusals (>= 0) or -errno. */
int sb_learn_audit_summary(struct sb_learn *l, char **text);

#endif
