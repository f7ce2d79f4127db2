/* The CLI's voice: every line python-sb itself prints starts with "python-sb:".
 * Only main.c and its helpers print; the libraries return -errno. */
#ifndef SB_PRINT_H
#define SB_PRINT_H

#include "diag.h"

void sb_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sb_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print an error with a "Hint:" line. */
void sb_error_hint(const char *hint, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Print the warnings of `d` (one line each, "python-sb: warning: ..."). */
void sb_print_warnings(const struct sb_diag *d);
/* Print upstream's configuration error block: "Syntax error in config files."
 * then each error "<file>(<line>): <detail>", sorted by (file, line). */
void sb_print_config_errors(struct sb_diag *d);

#endif
