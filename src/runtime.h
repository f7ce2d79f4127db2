/* Implicit grants for the interpreter itself (reference §2.4 "Implicit
 * grants", rules/python-runtime.profile): what any Python program reads
 * before its own code runs. */
#ifndef SB_RUNTIME_H
#define SB_RUNTIME_H

#include "policy.h"

/* Grant, read-only, the interpreter `python` (absolute path), every link of
 * its symlink chain and the directories holding them, its standard library
 * and site directories (derived from the real path: /usr/bin/python3.11 ->
 * /usr/lib/python3.11, /usr/lib/python3/dist-packages,
 * /usr/local/lib/python3.11/dist-packages; pyenv and venv trees), and the
 * essentials of rules/python-runtime.profile.  Returns 0 or -errno
 * (-ENOENT: the profile is missing, -EINVAL: a malformed profile line). */
int sb_runtime_grants(struct sb_policy *p, const char *python);

/* The version ("3.12") of the interpreter whose canonical path (realpath)
 * is `real`, found as the grants find it: from its name (python3.12), else
 * from the lib/python3.N of its prefix that holds os.py.  Returns 0, or
 * -errno (-ENOENT: not a CPython layout known here). */
int sb_runtime_version(const char *real, char *ver, size_t cap);

/* The same with an explicit profile file (tests). */
int sb_runtime_grants_from(struct sb_policy *p, const char *python, const char *profile);

#endif
