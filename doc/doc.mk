## Man pages and design notes.
dist_man_MANS += doc/py-sandboxes.5
EXTRA_DIST += $(wildcard $(srcdir)/doc/*.md)
