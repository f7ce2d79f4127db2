/* Policy drift: what a rule file allows that another did not (issue 4).
 *
 * `python-sb --diff OLD NEW` compares two rule files semantically for CI
 * review of `git diff '*.py-sandboxes'`: rules added and removed per family,
 * ignoring comments, order, blank lines and the "# Add rules" headers; list
 * values are compared item by item (python-import=a, b is {a, b}; a net=
 * rule is one entry per protocol, port and direction).  Includes and ${VAR}
 * are not expanded: the files are compared as written.
 * Library style: 0 or -errno, errors in diag.
 */
#ifndef SB_DRIFT_H
#define SB_DRIFT_H

#include <stdbool.h>

#include "diag.h"

struct sb_drift_result {
	bool differ;	/* any rule added or removed */
	bool widens;	/* NEW allows something OLD did not (an ALLOW added, a DENY,
			 * ignore= or unenv= removed, a setting changed...) */
	unsigned added, removed;
};

/* Compare and describe.  *text (malloc'ed) is the report, one line per
 * change, "+" added in NEW, "-" removed, "(widens)" on the lines that let
 * NEW allow more. */
int sb_drift_compare(const char *old_path, const char *new_path, char **text,
		     struct sb_drift_result *res, struct sb_diag *diag);

/* The CLI's form: *widens tells whether NEW widens OLD (python-sb then exits
 * 1).  envp and cwd name how the files were found (relative names in the
 * report); the comparison itself does not expand anything. */
int sb_drift_diff(const char *old_path, const char *new_path, char *const *envp, const char *cwd,
		  char **text, bool *widens, struct sb_diag *diag);

#endif
