/* Internal to tracer/: the per-process state behind struct sb_pyproc and the
 * pieces the frame walker, the classifier and the stack dump share. */
#ifndef SB_TRACER_PYPROC_H
#define SB_TRACER_PYPROC_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mem.h"
#include "pyframes.h"
#include "pyversion.h"

/* Bounds against a forged runtime (python-frames.md §13). */
#define SB_PY_MAX_INTERPS 64
#define SB_PY_MAX_TSTATES 4096		/* total over all interpreters */
#define SB_PY_MAX_WALK 1024		/* frames followed per thread */
#define SB_PY_MAX_STR 255		/* code points read from one str */
#define SB_PY_MAX_LINETABLE (1u << 20)	/* location-table bytes decoded */
#define SB_PY_MAX_LOCALS 256		/* co_localsplusnames entries searched */

#define SB_PYCODE_CACHE 128		/* code objects cached per process (power of 2) */
#define SB_PYCODE_LT_INLINE 160		/* location tables up to this size are cached */
#define SB_PYTID_CACHE 64		/* tid -> tstate hints (power of 2) */
#define SB_PY_WINDOW (32u << 10)	/* bytes of a data-stack chunk copied in one read */
#define SB_PY_MAX_CHUNKS 16		/* data-stack chunks followed per walk */
#define SB_PY_CODE_BATCH 32		/* code-object headers read per system call */

/* What the classifier needs to know about a code object (pyclassify.c). */
enum sb_pycode_flags {
	SB_PYC_MODULE = 1u << 0,	/* co_qualname "<module>" */
	SB_PYC_FROZEN = 1u << 1,	/* "<frozen ...>" */
	SB_PYC_DYNFILE = 1u << 2,	/* "<...>" that is not frozen: eval/exec/compile or REPL */
	SB_PYC_LIBRARY = 1u << 3,	/* stdlib, site-packages, frozen, our agent */
	SB_PYC_FIND_AND_LOAD = 1u << 4,	/* importlib._bootstrap._find_and_load */
	SB_PYC_CALL_REMOVED = 1u << 5,	/* importlib._bootstrap._call_with_frames_removed */
	SB_PYC_RUN_CODE = 1u << 6,	/* runpy._run_code */
	SB_PYC_GENERATED = 1u << 7,	/* known stdlib code generator (dataclasses) */
	SB_PYC_SKIP = 1u << 8,		/* interpreter-internal code (3.13 __init__ cleanup shim) */
};

struct sb_pycode {
	uint64_t addr;			/* 0: empty slot */
	/* validation: a code object freed and replaced at the same address
	 * differs in at least one of these */
	uint64_t filename_ptr, qualname_ptr, linetable_ptr, names_ptr;
	int firstlineno;
	unsigned flags;
	int name_local;			/* index of "name" in localsplus (_find_and_load), -1 */
	uint64_t file_hash;		/* FNV-1a of file, for "same source" tests */
	char file[sizeof(((struct sb_pyframe *)0)->file)];
	char func[sizeof(((struct sb_pyframe *)0)->func)];
	uint32_t walk_gen;		/* walk in which it was last validated */
	int64_t memo_idx;		/* last code unit looked up ... */
	int memo_line;			/* ... and its line */
	uint32_t lt_len;		/* co_linetable length */
	bool lt_inline;			/* lt holds the whole table */
	uint8_t lt[SB_PYCODE_LT_INLINE];
};

/* A frame as read in the first pass of a walk. */
struct sb_pyraw {
	uint64_t addr, code, instr;
	uint64_t local0;		/* localsplus[0] */
	uint8_t kind;			/* enum in pyframes.c: python, shim, unreadable */
	bool entry;			/* 3.11 is_entry */
};

struct sb_pytid {
	pid_t tid;			/* inner (target namespace) tid, 0: empty */
	uint64_t tstate;
};

/* One frame of a walk, before classification. */
struct sb_pywalk_item {
	uint64_t file_hash;
	uint16_t flags;			/* enum sb_pycode_flags of its code */
	bool entry;			/* first frame of an eval-loop activation */
	bool dyn;			/* out: runs eval/exec/compile code */
	int16_t out;			/* index in sb_pystack.f, -1 if not kept */
};

struct sb_pywalk {
	struct sb_pywalk_item item[SB_PY_MAX_WALK];
	size_t n;			/* Python frames seen, innermost first */
	bool truncated;			/* stopped at SB_PY_MAX_WALK */
};

struct sb_pyproc {
	pid_t pid;
	struct sb_mem mem;		/* owned */
	struct sb_pylayout lay;
	uint64_t runtime;		/* &_PyRuntime in the target */
	uint64_t code_type;		/* &PyCode_Type in the target, 0 if unknown */
	bool same_pidns;		/* target tids equal ours */
	char image[PATH_MAX];		/* file holding the runtime (exe or libpython) */

	pthread_mutex_t lock;		/* guards the caches below */
	struct sb_pycode code[SB_PYCODE_CACHE];
	struct sb_pytid tids[SB_PYTID_CACHE];
	/* scratch of one walk */
	uint32_t walk_gen;
	struct sb_pywalk walk;
	struct sb_pyraw raw[SB_PY_MAX_WALK];
	uint8_t window[SB_PY_WINDOW];
};

/* pyframes.c */
int sb_pyproc_walk_tstate(struct sb_pyproc *p, uint64_t tstate, struct sb_pystack *out,
			  struct sb_pywalk *w);
int sb_pyproc_list_threads(struct sb_pyproc *p, uint64_t *tstates, pid_t *tids, size_t cap, size_t *n);
int sb_pyproc_inner_tid(struct sb_pyproc *p, pid_t tid, pid_t *inner);

/* pyclassify.c */
unsigned sb_pyclassify_code(const char *file, const char *qualname);
void sb_pyclassify_stack(struct sb_pystack *s, struct sb_pywalk *w);
uint64_t sb_pyhash(const char *s);

#endif
