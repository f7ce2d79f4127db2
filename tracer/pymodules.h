/* The modules a running CPython has imported (issue 6: --attach --learn).
 *
 * Reads sys.modules from outside the process: _PyRuntime -> every
 * interpreter -> interp->modules (3.11) / interp->imports.modules (3.12+)
 * -> the dict's keys table -> each key's str, and each module's __file__
 * (module->md_dict["__file__"]).  What an attached learner cannot otherwise
 * see: the imports the program made before the attach, and the files they
 * were loaded from (the main script among them).
 *
 * Everything read is the target's memory and may be forged or changing
 * under us: every size, count and loop is bounded, a key that is not a
 * plain ASCII dotted identifier is skipped, and a table swapped while we
 * read it is read again (a few times) or given up with -EAGAIN.  The names
 * are information for a learner to propose, never a reason to allow
 * anything.  Library style: 0 or -errno, never prints.
 */
#ifndef SB_TRACER_PYMODULES_H
#define SB_TRACER_PYMODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SB_PYMOD_NAME 128		/* a top-level name, NUL included (= SB_EV_NAME_MAX) */
#define SB_PYMOD_MAX_NAMES 4096		/* distinct top-level names kept */
#define SB_PYMOD_MAX_ENTRIES 65536	/* dict entries looked at per interpreter */
#define SB_PYMOD_MAX_FILES 4096		/* __file__ paths kept */
#define SB_PYMOD_FILE_BYTES (1u << 20)	/* ... and their total size */
#define SB_PYMOD_DUNDER_SCAN 32		/* first entries of a module's dict searched for __file__ */

/* Distinct top-level module names ("json" for "json.decoder"), sorted; the
 * modules' files as their __file__ says (absolute or relative to the
 * process's current directory, UTF-8, control characters as '?'), in
 * sys.modules order, possibly repeated. */
struct sb_pymodules {
	size_t n;
	bool truncated;			/* more than SB_PYMOD_MAX_NAMES, or an entry bound hit */
	unsigned interps;		/* interpreters whose sys.modules was read */
	char name[SB_PYMOD_MAX_NAMES][SB_PYMOD_NAME];
	char **file;			/* owned, n_files strings */
	size_t n_files, file_bytes;
};

/* Where the modules dict and a dict's keys are, for one CPython minor. */
struct sb_pymodlayout {
	uint32_t is_modules;		/* PyInterpreterState: the sys.modules dict */
	uint32_t dict_ma_keys;		/* PyDictObject.ma_keys */
	uint32_t dict_ma_values;	/* PyDictObject.ma_values (split tables) */
	uint32_t md_dict;		/* PyModuleObject.md_dict */
};

/* sys.modules of every interpreter of process pid, as top-level names.
 * *out is malloc'ed (sb_pymodules_free).  -ENOENT: not a supported CPython
 * (3.11-3.14); -EAGAIN: not initialised yet, or the table kept changing;
 * -ESRCH/-EPERM: cannot read the process; -EINVAL: no plausible dict;
 * -ENOMEM. */
int sb_pymodules_read(pid_t pid, struct sb_pymodules **out);
void sb_pymodules_free(struct sb_pymodules *m);

/* Is s a plain ASCII dotted identifier ("a.b_c.d2")?  Sets *top_len to the
 * length of its first component. */
bool sb_pymodules_valid_name(const char *s, size_t len, size_t *top_len);

/* The layout for the target described by lay (struct sb_pylayout).  3.11
 * and 3.12 from a built-in table; 3.13+ from the target's _Py_DebugOffsets
 * blob (len bytes read at &_PyRuntime), checked against lay.  -ENOENT for
 * another version, -EINVAL for a blob that does not fit. */
struct sb_pylayout;
int sb_pymodlayout_get(const struct sb_pylayout *lay, const void *blob, size_t len,
		       struct sb_pymodlayout *out);

/* The same, on an opened process (internal to tracer/ and its tests). */
struct sb_pyproc;
int sb_pyproc_modules(struct sb_pyproc *p, struct sb_pymodules *out);

#endif
