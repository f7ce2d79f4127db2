/* --report=FILE: the run's refusals summarised for CI (issue 11).
 *
 * The format follows the file name: ".sarif" SARIF 2.1.0 (code-scanning
 * UIs: one result per refused or would-be-refused access, located at the
 * Python file:line that made it), ".xml" JUnit XML (one test case per rule
 * family), ".json" a plain JSON document (schema in doc/user-guide.md).
 *
 * Library style: 0 or -errno, never prints.  Life cycle in python-sb:
 *   sb_report_new()    before the program starts (an unknown extension is a
 *                      usage error, found before anything runs)
 *   sb_report_add()    for every event (any thread; allowed ones are skipped
 *                      at once)
 *   sb_report_write()  at the end, whatever the end was
 *   sb_report_free()
 */
#ifndef SB_REPORT_H
#define SB_REPORT_H

#include <stddef.h>

#include "event.h"

enum sb_report_format {
	SB_REPORT_SARIF = 0,
	SB_REPORT_JUNIT,
	SB_REPORT_JSON,
};

/* Distinct (family, object) refusals kept; past it events are only counted
 * (a hostile program opening random names must not exhaust memory). */
#define SB_REPORT_MAX_ITEMS 10000

struct sb_report;

/* A report that will be written to `path`.  -EINVAL when the extension is
 * none of .sarif, .xml, .json (case-insensitive); -ENOMEM. */
int sb_report_new(const char *path, struct sb_report **out);
void sb_report_free(struct sb_report *r);

/* The format chosen from the path, or -EINVAL. */
int sb_report_format_of(const char *path);

/* Keep `ev` when it was refused (SB_DENIED) or would have been
 * (SB_WOULD_DENY), deduplicated by (rule family, object) with counts, the
 * first Python location and the tip.  Thread-safe; never fails (what cannot
 * be stored is counted as dropped and said in the report). */
void sb_report_add(struct sb_report *r, const struct sb_event *ev);

/* Write the report atomically (a temporary file in the same directory,
 * fsync'ed, then renamed over `path`).  `exit_status` is python-sb's exit
 * status; `config_path` the rule file in use (NULL if none): results without
 * a Python location point at it.  Paths under the current directory of
 * sb_report_new() are written relative to it.  May be called again (the
 * file is replaced). */
int sb_report_write(struct sb_report *r, int exit_status, const char *config_path);

/* How many distinct refusals are kept, and how many events they stand for. */
size_t sb_report_count(struct sb_report *r, unsigned long *events);

/* The rule family of an event: "file-read", "file-write", "unix-socket",
 * "exec", "net-connect", "net-bind", "process", "env", "import",
 * "python-api", "dns". */
const char *sb_report_family(const struct sb_event *ev);

#endif
