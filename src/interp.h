/* Which interpreter to run, and how it must be named (SPEC §3 "Launching"). */
#ifndef SB_INTERP_H
#define SB_INTERP_H

struct sb_interp {
	char *exe;	/* owned: path to execve, absolute, symlinks kept (venvs rely on them) */
	char *argv0;	/* owned: argv[0] for the interpreter */
	char *prefix;	/* owned: sys.prefix as CPython derives it (the venv when in one) */
	char *base_prefix;	/* owned: sys.base_prefix, NULL when equal to prefix */
};

/* Find `requested` (NULL = "python3") on PATH when it has no '/', make it
 * absolute, and when it is a script (a pyenv shim) ask it for the real
 * sys.executable.  Returns 0 or -errno (-ENOENT: not found). */
int sb_interp_find(const char *requested, const char *path_env, struct sb_interp *out);
void sb_interp_free(struct sb_interp *in);

#endif
