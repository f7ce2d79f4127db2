/* Collected diagnostics; see diag.h. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

void sb_diag_init(struct sb_diag *d)
{
	memset(d, 0, sizeof(*d));
}

void sb_diag_free(struct sb_diag *d)
{
	if (d->items) {
		for (size_t i = 0; i < d->n; i++) {
			free(d->items[i].file);
			free(d->items[i].msg);
		}
		free(d->items);
	}
	memset(d, 0, sizeof(*d));
}

int sb_diag_vadd(struct sb_diag *d, enum sb_diag_level level, const char *file,
		 unsigned line, const char *fmt, va_list ap)
{
	struct sb_diag_item it = { .level = level, .line = line };

	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 8;
		struct sb_diag_item *n = realloc(d->items, ncap * sizeof(*n));
		if (!n)
			goto oom;
		d->items = n;
		d->cap = ncap;
	}
	it.file = strdup(file ? file : "");
	if (!it.file || vasprintf(&it.msg, fmt, ap) < 0) {
		free(it.file);
		goto oom;
	}
	d->items[d->n++] = it;
	return 0;
oom:
	/* An error that cannot be stored must still stop the run. */
	if (level == SB_DIAG_ERROR)
		d->lost_error = true;
	return -ENOMEM;
}

int sb_diag_add(struct sb_diag *d, enum sb_diag_level level, const char *file,
		unsigned line, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sb_diag_vadd(d, level, file, line, fmt, ap);
	va_end(ap);
	return rc;
}

size_t sb_diag_count(const struct sb_diag *d, enum sb_diag_level level)
{
	size_t c = 0;

	for (size_t i = 0; i < d->n; i++)
		c += d->items[i].level == level;
	return c;
}

bool sb_diag_has_errors(const struct sb_diag *d)
{
	return d->lost_error || sb_diag_count(d, SB_DIAG_ERROR) > 0;
}

static int item_cmp(const struct sb_diag_item *a, const struct sb_diag_item *b)
{
	int c = strcmp(a->file, b->file);

	if (c)
		return c;
	return (a->line > b->line) - (a->line < b->line);
}

void sb_diag_sort(struct sb_diag *d)
{
	/* Insertion sort: stable, and the lists are short (one per config error). */
	for (size_t i = 1; i < d->n; i++) {
		struct sb_diag_item key = d->items[i];
		size_t j = i;

		while (j > 0 && item_cmp(&d->items[j - 1], &key) > 0) {
			d->items[j] = d->items[j - 1];
			j--;
		}
		d->items[j] = key;
	}
}

char *sb_diag_format(const struct sb_diag_item *it)
{
	char *s = NULL;
	int rc;

	if (it->file[0])
		rc = asprintf(&s, "%s(%u): %s", it->file, it->line, it->msg);
	else
		rc = asprintf(&s, "%s", it->msg);
	return rc < 0 ? NULL : s;
}
