/* Python attribution in the supervisor (SPEC §6, issue 5): which Python code
 * made a notified call, and the refusals that follow from it.
 *
 * The stack is read through tracer/ (sb_pyloc_stack) on the deciding worker
 * while the target waits in its system call, at most once per notification,
 * and only when something needs it (doc/attribution.md, "Costs"):
 *   - a refusal (enforce) or a would-be refusal the learner keeps (learn,
 *     audit), for the human line, the JSON event and `# why:` comments;
 *   - enforce mode, python-import= listing modules: opens and stats of module
 *     files (x.py, x.pyc, x*.so, a package directory), to refuse those made
 *     for an import of a module the list does not name;
 *   - enforce mode, eval possible outside the agent's guard (eval-* rules,
 *     python-api=ALLOW:dynamic-code, or no agent): opens outside the implicit
 *     grants, connects and execs, to refuse those made by code from eval.
 *
 * The program owns the memory read here and may forge every byte of it: the
 * stack is only ever a reason to refuse, never to allow (doc/attribution.md,
 * "Trust").  When it cannot be read (an interpreter we do not know, a torn
 * walk), nothing is refused because of it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent.h"
#include "pyframes.h"
#include "sup_priv.h"

#define PY_PROCS 64		/* processes whose attribution state is tracked */
#define PY_NOTICED 64		/* (process, module) import refusals already printed */
#define PY_PKG_DIRS 32		/* package directories whose __init__ was refused */
#define PY_MEMO 256		/* threads remembered by the import memo */
#define PY_SEEN 1024		/* would-be refusals remembered as attributed */

#define BOOTSTRAP "<frozen importlib._bootstrap>"
#define BOOTSTRAP_EXTERNAL "<frozen importlib._bootstrap_external>"

struct sb_pyctx {
	bool judge_import;	/* enforce python-import= on module files */
	bool judge_eval;	/* refuse opens, connects, execs made by eval code */
	cJSON *rules;		/* owned: sb_policy_attr_json() (imports, eval-*) */
	const char **roots;	/* owned array: directories of the implicit grants (the
				 * interpreter's sys.path), borrowed strings */
	bool *root_pkg;		/* owned: roots[i] is a package (has __init__.py) */
	size_t n_roots;
	char cwd[PATH_MAX];	/* start directory + '/': locations are shown relative to it */
	size_t cwd_len;
	char agent_pkg[PATH_MAX];	/* ".../pysandboxes/": the agent's own frames */
	size_t agent_pkg_len;

	pthread_mutex_t lock;	/* the tables below */
	struct {
		pid_t pid;
		int pidfd;
	} procs[PY_PROCS];
	size_t n_procs;
	uint64_t noticed[PY_NOTICED];
	unsigned noticed_next;
	uint64_t pkg_dirs[PY_PKG_DIRS];
	atomic_uint n_pkg_dirs;
	atomic_uint proc_cats;	/* learn: api categories already attributed */
	/* Per thread (tid % PY_MEMO), the module whose import it was last let
	 * through: the import system stats, then opens the same module's files
	 * several times in a row (find, source times, bytecode). */
	_Atomic uint64_t memo[PY_MEMO];
	/* Learn/audit: objects whose would-be refusal was attributed already
	 * (the learner keeps the first location of each). */
	_Atomic uint64_t seen[PY_SEEN];
};

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

#define HASH_INIT UINT64_C(0xcbf29ce484222325)

/* ---- set-up ---------------------------------------------------------------------- */

/* The agent's bootstrap and package directories are library code, not the
 * program's (sb_agent_prepare() names them in the child's environment:
 * PYSANDBOXES_AGENT_PKGDIR, and the bootstrap first on PYTHONPATH).  Once
 * per process for the tracer, whose list only grows; the package directory
 * also in c, whose walks look through the agent's own frames. */
static void add_agent_dirs(struct sb_pyctx *c, char *const *envp)
{
	static bool done;
	char dir[PATH_MAX];

	if (!envp)
		return;
	for (char *const *e = envp; *e; e++) {
		const char *v = NULL;
		bool pkg = false;

		if (strncmp(*e, SB_AGENT_ENV_PKGDIR "=", sizeof(SB_AGENT_ENV_PKGDIR)) == 0)
			v = *e + sizeof(SB_AGENT_ENV_PKGDIR), pkg = true;
		else if (strncmp(*e, "PYTHONPATH=", 11) == 0)
			v = *e + 11;
		if (!v || !*v)
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)strcspn(v, ":"), v);
		if (pkg) {
			int len = snprintf(c->agent_pkg, sizeof(c->agent_pkg), "%s/pysandboxes/", dir);

			c->agent_pkg_len = len > 0 && (size_t)len < sizeof(c->agent_pkg) ? (size_t)len : 0;
		}
		/* Only a prefix of our own: a full list stays as it was. */
		if (!done)
			(void)sb_pyclassify_add_library_dir(dir);
	}
	done = true;
}

/* The implicitly granted directories: where the interpreter's own modules
 * live (the standard library, dist-packages). */
static int load_roots(struct sb_pyctx *c, const struct sb_policy *p)
{
	const struct sb_expose *e;
	size_t n = sb_policy_exposures(p, &e);
	char init[PATH_MAX];
	struct stat st;

	c->roots = calloc(n ? n : 1, sizeof(*c->roots));
	c->root_pkg = calloc(n ? n : 1, sizeof(*c->root_pkg));
	if (!c->roots || !c->root_pkg)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (!e[i].implicit || stat(e[i].path, &st) != 0 || !S_ISDIR(st.st_mode) || !strcmp(e[i].path, "/"))
			continue;
		snprintf(init, sizeof(init), "%s/__init__.py", e[i].path);
		c->root_pkg[c->n_roots] = access(init, F_OK) == 0;
		c->roots[c->n_roots++] = e[i].path;
	}
	return 0;
}

static bool has_import_names(const cJSON *rules)
{
	const cJSON *imp = cJSON_GetObjectItemCaseSensitive(rules, "import");

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(imp, "all")))
		return false;
	return cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(imp, "names")) > 0;
}

int sb_pyctx_new(const struct sb_run_opts *o, struct sb_pyctx **out)
{
	struct sb_pyctx *c = calloc(1, sizeof(*c));
	char *json = NULL;
	bool enforce = o->mode == SB_MODE_ENFORCE;
	int rc;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	/* As the agent does (Agent.location): the start directory, which is
	 * the program's until it moves. */
	if (getcwd(c->cwd, sizeof(c->cwd) - 1) && strcmp(c->cwd, "/") != 0) {
		c->cwd_len = strlen(c->cwd);
		c->cwd[c->cwd_len++] = '/';
		c->cwd[c->cwd_len] = '\0';
	}
	rc = sb_policy_attr_json(o->policy, &json);
	if (rc == 0 && !(c->rules = cJSON_Parse(json)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = load_roots(c, o->policy);
	free(json);
	if (rc) {
		sb_pyctx_free(c);
		return rc;
	}
	/* No python-import= line at all: imports are the agent's business (its
	 * empty list refuses all of them); a list gets syscall-level teeth. */
	c->judge_import = enforce && has_import_names(c->rules);
	/* Eval the agent does not guard: with eval-* rules it runs guarded
	 * code, with ALLOW:dynamic-code unguarded code, and without an agent
	 * nothing watches it.  Otherwise the agent refuses eval outright. */
	c->judge_eval = enforce &&
			(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(c->rules, "eval"), "present")) ||
			 sb_policy_api_granted(o->policy, SB_API_DYNAMIC_CODE) || o->agent_fd < 0);
	if (o->agent_fd >= 0)
		add_agent_dirs(c, o->envp);
	*out = c;
	return 0;
}

void sb_pyctx_free(struct sb_pyctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_procs; i++)
		close(c->procs[i].pidfd);
	cJSON_Delete(c->rules);
	free(c->roots);
	free(c->root_pkg);
	pthread_mutex_destroy(&c->lock);
	free(c);
	sb_pyloc_reset();
}

/* ---- processes: forget their state when they exit ---------------------------------- */

static void forget_at_locked(struct sb_pyctx *c, size_t i)
{
	sb_pyloc_forget(c->procs[i].pid);
	close(c->procs[i].pidfd);
	c->procs[i] = c->procs[--c->n_procs];
}

/* A process we hold attribution state for.  Those that exited meanwhile are
 * forgotten now (their pidfd is readable), so a fork-heavy program does not
 * keep dead processes' caches alive. */
static void track(struct sb_pyctx *c, pid_t pid)
{
	struct pollfd pfd;
	int fd;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_procs; i++)
		if (c->procs[i].pid == pid)
			goto out;
	for (size_t i = 0; i < c->n_procs;) {
		pfd = (struct pollfd){ c->procs[i].pidfd, POLLIN, 0 };
		if (poll(&pfd, 1, 0) > 0)
			forget_at_locked(c, i);
		else
			i++;
	}
	if (c->n_procs < PY_PROCS && (fd = (int)syscall(SYS_pidfd_open, pid, 0)) >= 0) {
		c->procs[c->n_procs].pid = pid;
		c->procs[c->n_procs++].pidfd = fd;
	}
out:
	pthread_mutex_unlock(&c->lock);
}

void sb_pyctx_exited(struct sb_pyctx *c, pid_t pid)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->n_procs; i++) {
		if (c->procs[i].pid == pid) {
			forget_at_locked(c, i);
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	sb_pyloc_forget(pid);
}

/* ---- reading the stack ------------------------------------------------------------- */

static bool user_eval(const struct sb_pystack *s);
static bool pseudo_file(const struct sb_pyframe *f);
static int pseudo_is_user(const struct sb_pystack *s, size_t i);

/* The stack as struct sb_event keeps it (event.h). */
static void pack_stack(const struct sb_pystack *s, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		const struct sb_pyframe *f = &s->f[i];
		int w = snprintf(buf + len, cap - len, "%s\t%d\t%s\t%s%s\n", f->file, f->line, f->func,
				 (f->flags & SB_PYFRAME_DYNAMIC) ? "e" : "",
				 (f->flags & SB_PYFRAME_LIBRARY) ? "l" : "");

		if (w < 0 || (size_t)w >= cap - len) {
			buf[len] = '\0';	/* the frames that fit */
			return;
		}
		len += (size_t)w;
	}
}

int sb_notif_attribute(struct sb_notif *n)
{
	struct sb_pyctx *c = sb_sup_py(n->sup);
	struct sb_pystack *s = n->stk;
	pid_t tgid;
	int rc;

	if (n->attr)
		return n->attr < 0 ? n->attr : 0;
	if (!s || !c)
		return n->attr = -ENOMEM;
	rc = sb_notif_tgid(n, &tgid);
	if (rc == 0)
		rc = sb_pyloc_stack(tgid, (pid_t)n->req->pid, s);
	/* The thread may have died (and its tid been reused) or left the call
	 * while it was read: then the stack belongs to nobody we judge. */
	if (rc == 0)
		rc = sb_notif_valid(n);
	if (rc) {
		s->n = 0;
		return n->attr = rc;
	}
	n->attr = 1;
	track(c, tgid);
	if (s->n == 0)
		return 0;	/* not Python, or not yet: unknown */
	/* The program's own code only: framework frames (the import system at
	 * start-up, a .pth line) are in the stack, not in the human line nor
	 * in a `# why:` comment. */
	if (s->user_frame >= 0 && (size_t)s->user_frame < s->n &&
	    (!pseudo_file(&s->f[s->user_frame]) || pseudo_is_user(s, (size_t)s->user_frame) == 1))
		sb_pystack_format_loc(s, n->ev->pyloc, sizeof(n->ev->pyloc));
	if (c->cwd_len && !strncmp(n->ev->pyloc, c->cwd, c->cwd_len))
		memmove(n->ev->pyloc, n->ev->pyloc + c->cwd_len, strlen(n->ev->pyloc + c->cwd_len) + 1);
	n->ev->from_eval = user_eval(s);
	snprintf(n->ev->importing, sizeof(n->ev->importing), "%s", s->importing);
	pack_stack(s, n->ev->stack, sizeof(n->ev->stack));
	return 0;
}

/* Calls that only look at a path: their would-be refusals teach the learner
 * less than the open that follows, which carries the location. */
static bool is_meta_call(const struct sb_notif *n)
{
	const struct sb_syscall_row *row = sb_notif_row(n);
	sb_notif_handler *h = row ? row->handler : NULL;

	return h == sb_handle_stat || h == sb_handle_access || h == sb_handle_readlink ||
	       h == sb_handle_chdir || h == sb_handle_xattr_read;
}

static bool pseudo_fs(const char *p)
{
	return !strncmp(p, "/proc/", 6) || !strncmp(p, "/sys/", 5) || !strncmp(p, "/dev/", 5) ||
	       !strcmp(p, "/proc") || !strcmp(p, "/sys") || !strcmp(p, "/dev");
}

/* True when this object (path and access, or address) was attributed
 * before: a loop over one unexposed file walks the stack once.  Lossy: a
 * slot another object took over only costs one more walk. */
static bool seen_before(struct sb_pyctx *c, const struct sb_event *ev)
{
	uint64_t h = hash_str(HASH_INIT ^ ((uint64_t)ev->kind << 8 | ev->access), ev->path);
	_Atomic uint64_t *slot;

	if (ev->kind == SB_EV_NET) {
		const unsigned char *a = (const unsigned char *)&ev->addr;

		for (size_t i = 0; i < sizeof(ev->addr); i++)
			h = (h ^ a[i]) * UINT64_C(0x100000001b3);
		h ^= ev->proto * UINT64_C(0x9e3779b97f4a7c15);
	}
	h |= 1;
	slot = &c->seen[h % PY_SEEN];
	if (atomic_load_explicit(slot, memory_order_relaxed) == h)
		return true;
	atomic_store_explicit(slot, h, memory_order_relaxed);
	return false;
}

void sb_notif_attribute_would_deny(struct sb_notif *n)
{
	struct sb_pyctx *c = sb_sup_py(n->sup);
	const struct sb_event *ev = n->ev;

	if (!c || is_meta_call(n))
		return;
	/* What the learner never keeps (pseudo file systems), and a category
	 * it already has a location for, are not worth a walk. */
	if ((ev->kind == SB_EV_PATH || ev->kind == SB_EV_EXEC) && pseudo_fs(ev->path))
		return;
	if (ev->kind == SB_EV_PROC && ev->category >= 0 && ev->category < 32) {
		unsigned bit = 1u << ev->category;

		if (atomic_fetch_or(&c->proc_cats, bit) & bit)
			return;
	} else if (seen_before(c, ev)) {
		return;
	}
	sb_notif_attribute(n);
}

/* ---- imports ---------------------------------------------------------------------- */

static bool import_machinery(const struct sb_pyframe *f)
{
	return !strcmp(f->file, BOOTSTRAP) || !strcmp(f->file, BOOTSTRAP_EXTERNAL);
}

/* A frame the walk cannot see past: unreadable, or followed by the frames a
 * deep stack left out. */
static bool walk_ends(const struct sb_pystack *s, size_t i)
{
	return (s->f[i].flags & SB_PYFRAME_UNREADABLE) || (s->elided && i + 1 == s->n);
}

/* Code with a made-up file name ("<string>"): from exec/eval/compile, or the
 * main program of -c. */
static bool pseudo_file(const struct sb_pyframe *f)
{
	return f->file[0] == '<' && strncmp(f->file, "<frozen ", 8) != 0;
}

/* Frame i has a made-up file name: whose code is it?  Code that library code
 * ran through exec (site.py running a .pth line, which may exec again) is
 * library code; the outermost frame (python -c) and code that the program's
 * own frames ran are the program's.  -1: cannot tell. */
static int pseudo_is_user(const struct sb_pystack *s, size_t i)
{
	for (; i < s->n; i++) {
		if (walk_ends(s, i))
			return -1;
		if (!pseudo_file(&s->f[i]))
			return !(s->f[i].flags & SB_PYFRAME_LIBRARY);
	}
	return 1;
}

/* Walking out from frame k, is the import charged to the program?  As the
 * agent's importer() does (doc/agent-protocol.md, "Who is judged"): past the
 * import machinery, the first frame of the program's own code is charged,
 * unless the module-level code of a library module comes first (a standard
 * module's own dependencies load with it).  A frame that could not be read,
 * or the frames left out of a deep stack, end the walk uncharged: the stack
 * is only ever a reason to refuse. */
static bool charged(const struct sb_pystack *s, size_t k)
{
	for (size_t i = k; i < s->n; i++) {
		const struct sb_pyframe *f = &s->f[i];

		if (walk_ends(s, i))
			return false;
		if (import_machinery(f))
			continue;
		if (pseudo_file(f))
			return pseudo_is_user(s, i) == 1;
		if (!(f->flags & SB_PYFRAME_LIBRARY))
			return true;
		if (!strcmp(f->func, "<module>"))
			return false;
	}
	return false;
}

/* Is the call made under eval code that the program itself ran?  The
 * tracer's from_eval, less code run through exec by library code that
 * itself runs exec (a .pth line that execs a string). */
static bool user_eval(const struct sb_pystack *s)
{
	if (!s->from_eval)
		return false;
	for (size_t i = 0; i < s->n; i++)
		if ((s->f[i].flags & SB_PYFRAME_DYNAMIC) && pseudo_is_user(s, i) == 1)
			return true;
	return false;
}

/* The module a file of the import system stands for, by its name: "x" for
 * x.py, x.pyc, x.cpython-311.pyc, x.cpython-311-x86_64-linux-gnu.so,
 * x.abi3.so, and for x/__init__.* (then *pkg_dir tells).  False for other
 * files. */
static bool module_of_file(const char *canon, char *mod, size_t cap, bool *pkg_dir)
{
	const char *base = strrchr(canon, '/'), *end;
	size_t len, blen;

	*pkg_dir = false;
	if (!base || !base[1])
		return false;
	base++;
	blen = strlen(base);
	if (!((blen > 3 && !strcmp(base + blen - 3, ".py")) || (blen > 4 && !strcmp(base + blen - 4, ".pyc")) ||
	      (blen > 3 && !strcmp(base + blen - 3, ".so"))))
		return false;
	len = strcspn(base, ".");
	if (len == 8 && !strncmp(base, "__init__", 8)) {
		/* the package: the directory holding it */
		end = base - 1;
		if (end == canon)
			return false;
		base = end;
		while (base > canon && base[-1] != '/')
			base--;
		len = (size_t)(end - base);
		*pkg_dir = true;
	}
	if (len == 0 || len >= cap)
		return false;
	memcpy(mod, base, len);
	mod[len] = '\0';
	return true;
}

static uint64_t dir_hash(const char *canon, size_t len)
{
	uint64_t h = HASH_INIT;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)canon[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* The module a module file stands for, as a path without suffix: D/M for
 * D/M.py and D/__pycache__/M.cpython-311.pyc, D/P for D/P/__init__.py and
 * D/P/__pycache__/__init__.cpython-311.pyc; hashed with the thread. */
static uint64_t module_key(const char *canon, pid_t tid)
{
	const char *base = strrchr(canon, '/');
	size_t dlen, slen;
	uint64_t h;

	if (!base)
		return 0;
	dlen = (size_t)(base - canon);
	base++;
	if (dlen >= 12 && !strncmp(canon + dlen - 12, "/__pycache__", 12))
		dlen -= 12;
	slen = strcspn(base, ".");
	h = dir_hash(canon, dlen);
	if (!(slen == 8 && !strncmp(base, "__init__", 8))) {
		h = (h ^ '/') * UINT64_C(0x100000001b3);
		for (size_t i = 0; i < slen; i++)
			h = (h ^ (unsigned char)base[i]) * UINT64_C(0x100000001b3);
	}
	h ^= (uint64_t)(uint32_t)tid * UINT64_C(0x9e3779b97f4a7c15);
	return h | 1;
}

static bool last_component_is(const char *dotted, const char *mod)
{
	const char *dot = strrchr(dotted, '.');

	return !strcmp(dot ? dot + 1 : dotted, mod);
}

/* A package directory whose __init__ was just refused: the import system
 * looks at the directory itself next (a namespace package otherwise). */
static void remember_pkg_dir(struct sb_pyctx *c, const char *init_file)
{
	const char *slash = strrchr(init_file, '/');
	uint64_t h;

	if (!slash || slash == init_file)
		return;
	h = dir_hash(init_file, (size_t)(slash - init_file)) | 1;	/* 0: a free slot */
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < PY_PKG_DIRS; i++)
		if (c->pkg_dirs[i] == h)
			goto out;
	c->pkg_dirs[atomic_load(&c->n_pkg_dirs) % PY_PKG_DIRS] = h;
	atomic_fetch_add(&c->n_pkg_dirs, 1);
out:
	pthread_mutex_unlock(&c->lock);
}

static bool is_pkg_dir(struct sb_pyctx *c, const char *canon)
{
	uint64_t h;
	bool found = false;

	if (atomic_load(&c->n_pkg_dirs) == 0)
		return false;
	h = dir_hash(canon, strlen(canon)) | 1;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < PY_PKG_DIRS && !found; i++)
		found = c->pkg_dirs[i] == h;
	pthread_mutex_unlock(&c->lock);
	return found;
}

/* ---- eval-* grants ------------------------------------------------------------------ */

/* Does some eval profile grant `name` in its list `key` ("call", "import")?
 * Within a profile a DENY: item wins (reference §2.8); the supervisor does
 * not know which profile ran the code, so any profile's grant counts. */
static bool eval_grants(const struct sb_pyctx *c, const char *key, const char *name)
{
	const cJSON *profs = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(c->rules, "eval"), "profiles");
	const cJSON *prof, *it;

	cJSON_ArrayForEach(prof, profs) {
		bool allow = false, deny = false;

		cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(prof, key)) {
			const char *v = cJSON_IsString(it) ? it->valuestring : NULL;

			if (!v)
				continue;
			if (!strncmp(v, "DENY:", 5))
				deny |= fnmatch(v + 5, name, 0) == 0;
			else
				allow |= fnmatch(v, name, 0) == 0;
		}
		if (allow && !deny)
			return true;
	}
	return false;
}

static bool import_allowed(const struct sb_policy *p, const char *top);

/* A module file in the interpreter's own directories whose top-level name
 * (its first component there) may be imported, also by eval code: whatever
 * imports it, no refusal can follow, so no walk is needed.  (Only that
 * directory on sys.path makes it that module; another path to it is at
 * worst a refusal missed, never one made wrongly.) */
static bool allowed_in_root(const struct sb_pyctx *c, const struct sb_policy *p, const char *canon)
{
	char top[SB_EV_NAME_MAX];
	size_t best = 0, len, root = 0;

	for (size_t i = 0; i < c->n_roots; i++) {
		len = strlen(c->roots[i]);
		if (len > best && !strncmp(canon, c->roots[i], len) && canon[len] == '/') {
			best = len;
			root = i;
		}
	}
	if (!best)
		return false;
	/* No package is named like lib-dynload or site-packages: such a
	 * directory is a sys.path entry of its own.  A granted directory that is
	 * a package itself (the agent's) names the module. */
	if (c->root_pkg[root]) {
		canon = c->roots[root] + best;
		while (canon > c->roots[root] && canon[-1] != '/')
			canon--;
	} else {
		canon += best + 1;
		while ((len = strcspn(canon, "/")) && canon[len] == '/' &&
		       (memchr(canon, '-', len) || (len == 11 && !strncmp(canon, "__pycache__", 11))))
			canon += len + 1;
	}
	len = strcspn(canon, "/.");
	if (len == 0 || len >= sizeof(top))
		return false;
	memcpy(top, canon, len);
	top[len] = '\0';
	return (!c->judge_import || import_allowed(p, top)) && (!c->judge_eval || eval_grants(c, "import", top));
}

static bool import_allowed(const struct sb_policy *p, const char *top)
{
	/* Never judged, as by the agent (python/pysandboxes/guards/imports.py). */
	static const char *const core[] = { "sys", "builtins", "warnings", "_io", "asyncio", "tokenize",
					     "__main__", "encodings", NULL };

	for (const char *const *m = core; *m; m++)
		if (!strcmp(*m, top))
			return true;
	return sb_policy_import_allowed(p, top);
}

/* ---- the vetoes --------------------------------------------------------------------- */

bool sb_notif_implicit(const struct sb_notif *n)
{
	const struct sb_rule_ref *r = n->ev->rule;

	/* sb_policy_grant() names its rules "<why>"; a file cannot. */
	return !r || !r->file || r->file[0] == '<';
}

/* Refuse for `cause`; the line that would allow it is key=value. */
static bool refuse_for(struct sb_notif *n, int err, enum sb_event_cause cause, const char *key, const char *value)
{
	char tip[SB_EV_NAME_MAX + 32];

	snprintf(tip, sizeof(tip), "%s=%s", key, value);
	n->ev->cause = cause;
	return sb_notif_refuse(n, err, NULL, tip);
}

/* An access on behalf of the import system, for module `mod` (dotted name;
 * its top-level name is judged).  Returns true when refused. */
static bool judge_import(struct sb_notif *n, const char *mod, const char *canon, bool pkg_init)
{
	struct sb_pyctx *c = sb_sup_py(n->sup);
	char top[SB_EV_NAME_MAX];
	bool refused = false;

	snprintf(top, sizeof(top), "%s", mod);
	top[strcspn(top, ".")] = '\0';
	if (!n->ev->importing[0])
		snprintf(n->ev->importing, sizeof(n->ev->importing), "%s", mod);
	if (c->judge_import && !import_allowed(n->policy, top))
		refused = refuse_for(n, ENOENT, SB_CAUSE_IMPORT, "python-import", top);
	else if (c->judge_eval && user_eval(n->stk) && !eval_grants(c, "import", top))
		refused = refuse_for(n, ENOENT, SB_CAUSE_EVAL, "eval-import", top);
	if (refused && pkg_init)
		remember_pkg_dir(c, canon);
	return refused;
}

/* The agent's frames innermost: python/pysandboxes/_importstat.py stands in
 * for importlib's stat helpers, so the import machinery is the frame that
 * called them.  Looking through frames only ever finds more to refuse. */
static size_t past_agent_frames(const struct sb_pyctx *c, const struct sb_pystack *s)
{
	size_t k = 0;

	if (!c->agent_pkg_len)
		return 0;
	while (k < s->n && !walk_ends(s, k) && !strncmp(s->f[k].file, c->agent_pkg, c->agent_pkg_len))
		k++;
	return k;
}

/* Is this access made for an import?  *mod gets the module.  -1: the stack
 * says nothing (unknown), 0: not an import file, 1: an import of *mod that
 * is charged to the program. */
static int import_context(struct sb_notif *n, const char *canon, bool is_dir, char *mod, size_t cap, bool *pkg_init)
{
	const struct sb_pystack *s = n->stk;
	char file_mod[SB_EV_NAME_MAX];
	size_t k0;

	*pkg_init = false;
	if (is_dir) {
		const char *base = strrchr(canon, '/');

		snprintf(file_mod, sizeof(file_mod), "%s", base ? base + 1 : canon);
	} else if (!module_of_file(canon, file_mod, sizeof(file_mod), pkg_init)) {
		return 0;
	}
	if (s->importing[0]) {
		/* The innermost import in progress: its files only (x.py, x/, its
		 * __init__), charged from its _find_and_load frame outwards. */
		if (!last_component_is(s->importing, file_mod))
			return 0;
		for (size_t k = 0; k < s->n; k++) {
			if (!strcmp(s->f[k].file, BOOTSTRAP) && !strcmp(s->f[k].func, "_find_and_load")) {
				snprintf(mod, cap, "%s", s->importing);
				return charged(s, k + 1) ? 1 : -1;
			}
		}
		return -1;
	}
	/* A loader called directly (importlib.util.spec_from_file_location +
	 * exec_module, module_from_spec for an extension): no _find_and_load,
	 * the import machinery itself reads the file.  The file names the
	 * module. */
	k0 = past_agent_frames(sb_sup_py(n->sup), s);
	if (k0 < s->n && import_machinery(&s->f[k0]) && !is_dir) {
		snprintf(mod, cap, "%s", file_mod);
		return charged(s, k0) ? 1 : -1;
	}
	return 0;
}

bool sb_notif_py_veto(struct sb_notif *n, enum sb_pyv what, const char *canon, bool implicit)
{
	struct sb_pyctx *c = sb_sup_py(n->sup);
	char mod[SB_EV_NAME_MAX], file_mod[SB_EV_NAME_MAX];
	bool pkg_init, dir = false, modfile, need;
	uint64_t key;
	int imp;

	if (!c || n->mode != SB_MODE_ENFORCE || (!c->judge_import && !c->judge_eval))
		return false;
	switch (what) {
	case SB_PYV_EXEC:
		if (!c->judge_eval || sb_notif_attribute(n) || !user_eval(n->stk) ||
		    eval_grants(c, "call", "subprocess") || eval_grants(c, "call", "os") ||
		    eval_grants(c, "import", "subprocess") || eval_grants(c, "import", "os"))
			return false;
		return refuse_for(n, EACCES, SB_CAUSE_EVAL, "eval-call", "subprocess");
	case SB_PYV_OPEN:
	case SB_PYV_META:
		break;
	}
	/* Only what may be a module file costs a walk, and files outside the
	 * implicit grants when eval is judged. */
	modfile = module_of_file(canon, file_mod, sizeof(file_mod), &pkg_init);
	key = modfile ? module_key(canon, (pid_t)n->req->pid) : 0;
	if (key && atomic_load_explicit(&c->memo[n->req->pid % PY_MEMO], memory_order_relaxed) == key)
		return false;	/* the same import this thread was just let through */
	if (modfile && implicit && allowed_in_root(c, n->policy, canon))
		return false;
	if (!modfile && what == SB_PYV_META && is_pkg_dir(c, canon))
		modfile = dir = true;
	need = modfile || (c->judge_eval && what == SB_PYV_OPEN && !implicit);
	if (!need || sb_notif_attribute(n) || n->stk->n == 0)
		return false;
	imp = modfile ? import_context(n, canon, dir, mod, sizeof(mod), &pkg_init) : 0;
	if (imp > 0 && judge_import(n, mod, canon, pkg_init))
		return true;
	if (imp != 0) {
		/* Let through (allowed, or not charged to the program). */
		if (key)
			atomic_store_explicit(&c->memo[n->req->pid % PY_MEMO], key, memory_order_relaxed);
		return false;
	}
	/* The import system's own work (listing a directory of sys.path, its
	 * caches) for an import that eval code started: judged above, on
	 * the module's files. */
	if (import_machinery(&n->stk->f[0]))
		return false;
	if (c->judge_eval && what == SB_PYV_OPEN && !implicit && user_eval(n->stk) && !eval_grants(c, "call", "open"))
		return refuse_for(n, EACCES, SB_CAUSE_EVAL, "eval-call", "open");
	return false;
}

/* connect and sendto are decided before their handler runs: the socket,
 * the address and the policy do not matter to code that may not use the
 * network at all.  The event gets what the program passed. */
bool sb_notif_py_veto_net(struct sb_notif *n)
{
	struct sb_pyctx *c = sb_sup_py(n->sup);
	const struct seccomp_data *d = &n->req->data;
	const struct sb_syscall_row *row = sb_notif_row(n);
	bool connect = row && row->handler == sb_handle_connect;
	struct sockaddr_storage ss;
	uint64_t addr = connect ? d->args[1] : d->args[4];
	size_t len = (size_t)(uint32_t)(connect ? d->args[2] : d->args[5]);
	int fd, type = 0;
	socklen_t tl = sizeof(type);

	if (!c || !c->judge_eval || n->mode != SB_MODE_ENFORCE || sb_notif_attribute(n) || !user_eval(n->stk) ||
	    eval_grants(c, "call", "socket") || eval_grants(c, "import", "socket"))
		return false;
	memset(&ss, 0, sizeof(ss));
	if (len > sizeof(ss))
		len = sizeof(ss);
	if (addr && len && sb_notif_read(n, addr, &ss, len) == 0 && ss.ss_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;

		n->ev->kind = SB_EV_UNIX;
		snprintf(n->ev->path, sizeof(n->ev->path), "%.*s", (int)sizeof(un->sun_path), un->sun_path);
	} else {
		n->ev->addr = ss;
		n->ev->dir = SB_DIR_OUT;
		fd = sb_notif_getfd(n, (int)d->args[0]);
		if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0)
			n->ev->proto = type == SOCK_STREAM ? SB_PROTO_TCP : type == SOCK_DGRAM ? SB_PROTO_UDP : 0;
		if (fd >= 0)
			close(fd);
	}
	return refuse_for(n, ECONNREFUSED, SB_CAUSE_EVAL, "eval-call", "socket");
}

/* ---- notices ------------------------------------------------------------------------ */

bool sb_pyctx_first_notice(struct sb_pyctx *c, pid_t pid, const struct sb_event *ev)
{
	char top[SB_EV_NAME_MAX];
	uint64_t h;
	bool first = true;

	if (!c || ev->cause != SB_CAUSE_IMPORT)
		return true;
	snprintf(top, sizeof(top), "%s", ev->importing);
	top[strcspn(top, ".")] = '\0';
	h = hash_str(HASH_INIT ^ (uint64_t)(uint32_t)pid, top) | 1;
	pthread_mutex_lock(&c->lock);
	for (unsigned i = 0; i < PY_NOTICED && first; i++)
		first = c->noticed[i] != h;
	if (first)
		c->noticed[c->noticed_next++ % PY_NOTICED] = h;
	pthread_mutex_unlock(&c->lock);
	return first;
}
