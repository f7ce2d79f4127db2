/* The decision log: one JSON object per line (doc/log-schema.md). */
#ifndef SB_LOG_H
#define SB_LOG_H

#include <stddef.h>

#include "event.h"

/* Serialise `ev` as one JSON line (with '\n') into buf.  Returns the length,
 * or -ENOSPC when it does not fit. */
int sb_event_to_json(const struct sb_event *ev, char *buf, size_t cap);

/* The human refusal line, "python-sb: DENIED open '/x' (read) at a.py:3 in f(): no expose rule; add expose-ro=/"
 * with '\n'.  Returns the length or -ENOSPC. */
int sb_event_to_notice(const struct sb_event *ev, char *buf, size_t cap);

#endif
