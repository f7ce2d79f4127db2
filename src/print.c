/* See print.h. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "print.h"

static void vline(const char *prefix, const char *fmt, va_list ap)
{
	fputs("python-sb: ", stderr);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sb_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("", fmt, ap);
	va_end(ap);
}

void sb_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("warning: ", fmt, ap);
	va_end(ap);
}

void sb_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("error: ", fmt, ap);
	va_end(ap);
}

void sb_error_hint(const char *hint, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("error: ", fmt, ap);
	va_end(ap);
	fprintf(stderr, "python-sb: Hint: %s\n", hint);
}

void sb_print_warnings(const struct sb_diag *d)
{
	for (size_t i = 0; i < d->n; i++) {
		char *s;

		if (d->items[i].level != SB_DIAG_WARNING)
			continue;
		s = sb_diag_format(&d->items[i]);
		sb_warn("%s", s ? s : d->items[i].msg);
		free(s);
	}
}

void sb_print_config_errors(struct sb_diag *d)
{
	sb_diag_sort(d);
	fputs("Syntax error in config files.\n", stderr);
	for (size_t i = 0; i < d->n; i++) {
		char *s;

		if (d->items[i].level != SB_DIAG_ERROR)
			continue;
		s = sb_diag_format(&d->items[i]);
		fprintf(stderr, "%s\n", s ? s : d->items[i].msg);
		free(s);
	}
	if (d->lost_error)
		fputs("(more errors were lost: out of memory)\n", stderr);
}
