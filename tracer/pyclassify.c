/* Classifying a walked stack (python-frames.md §10, §11): which frames run
 * code from eval/exec/compile, and which frame is the program's own code.
 * The module being imported is found by the walker (it needs the frame's
 * locals); here only names and the shape of the stack are used. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "pyproc.h"

#define BOOTSTRAP "<frozen importlib._bootstrap>"

uint64_t sb_pyhash(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Extra directories whose code is not the program's own (the agent, its
 * bootstrap); set once at start-up, before any attribution. */
#define SB_MAX_LIBRARY_DIRS 8
static char library_dirs[SB_MAX_LIBRARY_DIRS][256];
static unsigned n_library_dirs;

int sb_pyclassify_add_library_dir(const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len == 0 || len + 2 > sizeof(library_dirs[0]))
		return -ENAMETOOLONG;
	if (n_library_dirs == SB_MAX_LIBRARY_DIRS)
		return -ENOSPC;
	memcpy(library_dirs[n_library_dirs], dir, len);
	library_dirs[n_library_dirs][len] = '/';
	library_dirs[n_library_dirs][len + 1] = '\0';
	n_library_dirs++;
	return 0;
}

static bool in_library_dir(const char *file)
{
	for (unsigned i = 0; i < n_library_dirs; i++)
		if (starts_with(file, library_dirs[i]))
			return true;
	return false;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* ".../lib/python3.N/..." or ".../lib64/python3.Nt/...": an interpreter's
 * standard library (site-packages below it are caught separately). */
static bool is_stdlib_path(const char *file)
{
	for (const char *p = strstr(file, "/python3."); p; p = strstr(p + 1, "/python3.")) {
		const char *d = p + strlen("/python3.");
		bool lib = (p - file >= 4 && strncmp(p - 4, "/lib", 4) == 0) ||
			   (p - file >= 6 && strncmp(p - 6, "/lib64", 6) == 0);
		if (!lib || !isdigit((unsigned char)*d))
			continue;
		while (isdigit((unsigned char)*d))
			d++;
		if (*d == 't' || *d == 'd')
			d++;
		if (*d == '/')
			return true;
	}
	return false;
}

unsigned sb_pyclassify_code(const char *file, const char *qualname)
{
	unsigned f = 0;

	if (strcmp(qualname, "<module>") == 0)
		f |= SB_PYC_MODULE;
	if (starts_with(file, "<frozen "))
		f |= SB_PYC_FROZEN | SB_PYC_LIBRARY;
	else if (file[0] == '<')
		f |= SB_PYC_DYNFILE;
	if (is_stdlib_path(file) || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
	    strstr(file, "/pysandboxes/") || in_library_dir(file))
		f |= SB_PYC_LIBRARY;
	if (strcmp(file, BOOTSTRAP) == 0) {
		if (strcmp(qualname, "_find_and_load") == 0)
			f |= SB_PYC_FIND_AND_LOAD;
		else if (strcmp(qualname, "_call_with_frames_removed") == 0)
			f |= SB_PYC_CALL_REMOVED;
	}
	if (strcmp(qualname, "_run_code") == 0 && (strcmp(file, "<frozen runpy>") == 0 || ends_with(file, "/runpy.py")))
		f |= SB_PYC_RUN_CODE;
	/* dataclasses builds __init__/__repr__/... with exec() in the stdlib:
	 * benign generated code, like the upstream exemption of stdlib call
	 * sites. */
	if (strcmp(file, "<string>") == 0 && starts_with(qualname, "__create_fn__.<locals>."))
		f |= SB_PYC_GENERATED;
	/* 3.13: CALL_ALLOC_AND_ENTER_INIT's _Py_InitCleanup code object. */
	if (strcmp(file, "__init__") == 0 && strcmp(qualname, "__init__") == 0)
		f |= SB_PYC_SKIP;
	return f;
}

enum region { STATIC, DYN_USER, DYN_LIB };

/* Outermost to innermost: a "<module>" code object entered from C with a
 * Python caller P is an import body (P = _call_with_frames_removed), the
 * main program (P = runpy._run_code, or no P at all) or code run by
 * exec/eval at P.  Frames compiled from the same source as that code are
 * dynamic; everything called from it is not, but the stack as a whole is
 * "from eval" as long as the exec'd code is on it. */
static void mark_dynamic(struct sb_pywalk *w)
{
	enum region region = STATIC;
	uint64_t region_file = 0, main_pseudo = 0;

	for (size_t k = w->n; k-- > 0;) {
		struct sb_pywalk_item *it = &w->item[k];
		const struct sb_pywalk_item *p = k + 1 < w->n ? &w->item[k + 1] : NULL;

		if ((it->flags & SB_PYC_MODULE) && (it->entry || !p)) {
			if (!p) {
				region = STATIC;
				/* python -c / stdin: the main program itself is
				 * "<string>"/"<stdin>" */
				if (it->flags & SB_PYC_DYNFILE)
					main_pseudo = it->file_hash;
			} else if (p->flags & (SB_PYC_CALL_REMOVED | SB_PYC_RUN_CODE)) {
				region = STATIC;
			} else {
				region = (p->flags & SB_PYC_LIBRARY) ? DYN_LIB : DYN_USER;
				region_file = it->file_hash;
			}
		}
		if (region == DYN_USER)
			it->dyn = it->file_hash == region_file;
		else if (region == STATIC)
			it->dyn = (it->flags & SB_PYC_DYNFILE) && !(it->flags & SB_PYC_GENERATED) &&
				  !(main_pseudo && it->file_hash == main_pseudo);
		else
			it->dyn = false;
	}
}

void sb_pyclassify_stack(struct sb_pystack *s, struct sb_pywalk *w)
{
	int fallback = -1;

	mark_dynamic(w);
	s->from_eval = false;
	s->user_frame = -1;
	for (size_t k = 0; k < w->n; k++) {
		const struct sb_pywalk_item *it = &w->item[k];

		s->from_eval |= it->dyn;
		if (it->out < 0 || (size_t)it->out >= s->n)
			continue;
		struct sb_pyframe *f = &s->f[it->out];
		if (it->dyn)
			f->flags |= SB_PYFRAME_DYNAMIC;
		if (it->flags & SB_PYC_LIBRARY)
			f->flags |= SB_PYFRAME_LIBRARY;
		if (f->flags & (SB_PYFRAME_LIBRARY | SB_PYFRAME_UNREADABLE))
			continue;
		/* The human line prefers a real source file over "<string>". */
		if (!(it->flags & SB_PYC_DYNFILE) && s->user_frame < 0)
			s->user_frame = it->out;
		if (fallback < 0)
			fallback = it->out;
	}
	if (s->user_frame < 0)
		s->user_frame = fallback;
}
