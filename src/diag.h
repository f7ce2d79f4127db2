/* Collected diagnostics: "<file>(<line>): <detail>" lines, reported together.
 *
 * The policy loader, the CLI splitter and the learner never print; they append
 * to an sb_diag and return -errno.  Only main.c prints the list, sorted by
 * (file, line), as upstream does ("Syntax error in config files.").
 */
#ifndef SB_DIAG_H
#define SB_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum sb_diag_level {
	SB_DIAG_ERROR = 0,	/* fatal: the run stops with status 255 */
	SB_DIAG_WARNING = 1,	/* printed, the run goes on */
};

struct sb_diag_item {
	enum sb_diag_level level;
	char *file;		/* owned; "" when not tied to a file; "." = command line */
	unsigned line;		/* 0 when unknown / command line */
	char *msg;		/* owned */
};

struct sb_diag {
	struct sb_diag_item *items;	/* owned */
	size_t n, cap;
	bool lost_error;	/* an error could not be stored (ENOMEM) */
};

void sb_diag_init(struct sb_diag *d);
void sb_diag_free(struct sb_diag *d);

/* Append one item.  Returns 0 or -ENOMEM (the item is then lost, but
 * sb_diag_has_errors() stays true through the oom flag). */
int sb_diag_add(struct sb_diag *d, enum sb_diag_level level, const char *file,
		unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int sb_diag_vadd(struct sb_diag *d, enum sb_diag_level level, const char *file,
		 unsigned line, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

#define sb_diag_error(d, file, line, ...) sb_diag_add((d), SB_DIAG_ERROR, (file), (line), __VA_ARGS__)
#define sb_diag_warn(d, file, line, ...) sb_diag_add((d), SB_DIAG_WARNING, (file), (line), __VA_ARGS__)

bool sb_diag_has_errors(const struct sb_diag *d);
size_t sb_diag_count(const struct sb_diag *d, enum sb_diag_level level);

/* Stable sort by (file, line), keeping insertion order for equal keys. */
void sb_diag_sort(struct sb_diag *d);

/* Format one item as "<file>(<line>): <msg>" (or just "<msg>" when file is
 * empty) into a fresh string.  Returns NULL on ENOMEM. */
char *sb_diag_format(const struct sb_diag_item *it);

#endif
