/* The --audit summary: what the policy would have refused, once each.
 *
 * In audit mode the recorder sees every event with the enforced policy, so
 * what it keeps is exactly what that policy would refuse; the summary lists
 * the refusals (with how often and where), counts them per rule family, and
 * ends with the lines learning would add, generalised the same way.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "learn_int.h"

static const char *const family_names[LA__COUNT] = {
	[LA_FILES] = "files", [LA_NET] = "network", [LA_EXEC] = "exec", [LA_PROC] = "processes",
	[LA_ENV] = "environment", [LA_IMPORT] = "imports", [LA_API] = "python-api", [LA_EVAL] = "eval",
};

static void add_refusals(struct sbuf *b, const struct sb_learn *l)
{
	unsigned long events = 0;
	bool first = true;

	for (int f = 0; f < LA__COUNT; f++)
		events += l->audit_counts[f];
	sbuf_printf(b, "python-sb: audit: %zu distinct access(es) would have been refused (%lu event(s):",
		    l->audit.n + l->audit_dropped, events);
	for (int f = 0; f < LA__COUNT; f++) {
		if (!l->audit_counts[f])
			continue;
		sbuf_printf(b, "%s %s %lu", first ? "" : ",", family_names[f], l->audit_counts[f]);
		first = false;
	}
	sbuf_add(b, ")\n");
	for (size_t i = 0; i < l->audit.n; i++) {
		const struct litem *it = &l->audit.items[i];
		const char *line = it->aux ? it->aux : it->key;

		/* The notice without its "python-sb: " prefix, indented. */
		if (strncmp(line, "python-sb: ", 11) == 0)
			line += 11;
		sbuf_printf(b, "  %s", line);
		if (it->count > 1)
			sbuf_printf(b, " [%lu times]", it->count);
		sbuf_add(b, "\n");
	}
	if (l->audit_dropped)
		sbuf_printf(b, "  ... and %lu more\n", l->audit_dropped);
}

int sb_learn_audit_summary(struct sb_learn *l, char **text)
{
	struct sbuf b = { 0 };
	char *lines = NULL;
	size_t n;
	int rc;

	*text = NULL;
	pthread_mutex_lock(&l->lock);
	n = l->audit.n + l->audit_dropped;
	if (n)
		add_refusals(&b, l);
	pthread_mutex_unlock(&l->lock);
	if (!n) {
		*text = strdup("");
		return *text ? 0 : -ENOMEM;
	}
	if ((rc = sb_learn_lines(l, &lines, NULL))) {
		free(b.s);
		return rc;
	}
	if (*lines) {
		sbuf_add(&b, "python-sb: audit: lines that would allow them (review before adding):\n");
		for (char *p = lines, *nl; *p; p = nl + 1) {
			nl = strchr(p, '\n');
			sbuf_add(&b, "  ");
			sbuf_addn(&b, p, (size_t)(nl - p) + 1);
		}
	}
	free(lines);
	if (b.oom) {
		free(b.s);
		return -ENOMEM;
	}
	*text = b.s;
	return n > (size_t)__INT_MAX__ ? __INT_MAX__ : (int)n;
}
