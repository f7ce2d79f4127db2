/* Reading one thread's Python stack (python-frames.md §6-§8): thread
 * matching by native_thread_id, the frame walk, code objects (cached),
 * location tables and str objects.  Every loop has a fixed bound and every
 * pointer comes from the target, so each read may fail: a failure ends the
 * walk with what was read so far ("unknown" beyond), never an error for the
 * supervisor other than the process being gone. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pydecode.h"
#include "pyproc.h"

#define ENOTCODE ENOEXEC	/* "not a code object": skipped, not unreadable */
#define STR_BUF (256 + 4 * SB_PY_MAX_STR + 4)
#define LT_CHUNK 2048
#define LT_CARRY 32		/* longest location entry: 1 + 4 varints of 6 bytes */

static uint64_t get_u64(const uint8_t *buf, uint32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

static uint32_t get_u32(const uint8_t *buf, uint32_t off)
{
	uint32_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Brent's cycle detection for forged linked lists: step() is true once the
 * pointer sequence has been seen to repeat. */
struct cycle {
	uint64_t mark;
	unsigned power, len;
};

static bool cycle_step(struct cycle *c, uint64_t next)
{
	if (next == c->mark)
		return true;
	if (++c->len == c->power) {
		c->mark = next;
		c->power *= 2;
		c->len = 0;
	}
	return false;
}

static void cycle_init(struct cycle *c, uint64_t start)
{
	c->mark = start;
	c->power = 1;
	c->len = 0;
}

/* ---- str objects ---- */

static unsigned utf8_width(const struct sb_str_shape *sh)
{
	return sh->ascii ? 1 : sh->kind == 1 ? 2 : sh->kind == 2 ? 3 : 4;
}

/* Decode the str at addr into out.  keep_tail: a string too long for out
 * keeps its end, prefixed with "..." (file names: the tail names the file). */
static int read_str(struct sb_pyproc *p, uint64_t addr, char *out, size_t cap, bool keep_tail)
{
	const struct sb_pylayout *l = &p->lay;
	uint8_t buf[STR_BUF], *data;
	struct sb_str_shape sh;
	uint64_t daddr, skip = 0;
	int64_t length;
	size_t got, n, want, prefix = 0;
	int rc;

	out[0] = '\0';
	if (cap < 8)
		return -EINVAL;
	rc = sb_mem_read_some(&p->mem, addr, buf, l->str_ascii_data + SB_PY_MAX_STR, &got);
	if (rc < 0)
		return rc;
	if (got < l->str_ascii_data)
		return -EFAULT;
	memcpy(&length, buf + l->str_length, sizeof(length));
	if (length < 0 || length > (INT64_C(1) << 40) || sb_str_shape(get_u32(buf, l->str_state), &sh) < 0)
		return -EINVAL;
	n = (size_t)length;
	if (keep_tail && n > (cap - 4) / utf8_width(&sh)) {
		n = (cap - 4) / utf8_width(&sh);
		skip = (uint64_t)length - n;
		prefix = 3;
	} else if (n > cap - 1) {
		n = cap - 1;
	}
	if (n > SB_PY_MAX_STR)
		n = SB_PY_MAX_STR;
	if (sh.compact && sh.ascii) {
		daddr = addr + l->str_ascii_data;
	} else if (sh.compact) {
		daddr = addr + l->str_compact_data;
	} else {
		/* legacy string: PyUnicodeObject.data.any */
		rc = sb_mem_get(&p->mem, addr + l->str_compact_data, &daddr);
		if (rc < 0)
			return rc;
	}
	daddr += skip * sh.kind;
	want = n * sh.kind;
	if (daddr >= addr && daddr - addr <= got && got - (daddr - addr) >= want) {
		data = buf + (daddr - addr);
	} else {
		rc = sb_mem_read(&p->mem, daddr, buf, want);
		if (rc < 0)
			return rc;
		data = buf;
	}
	if (prefix)
		memcpy(out, "...", 3);
	sb_str_to_utf8(data, n, sh.kind, out + prefix, cap - prefix);
	return 0;
}

/* Index of the local called `want` in a co_localsplusnames tuple, -1. */
static int find_local(struct sb_pyproc *p, uint64_t tuple, const char *want)
{
	const struct sb_pylayout *l = &p->lay;
	uint64_t items[SB_PY_MAX_LOCALS];
	int64_t size;
	size_t n;

	if (sb_mem_get(&p->mem, tuple + l->tuple_size, &size) < 0 || size <= 0)
		return -1;
	n = size > SB_PY_MAX_LOCALS ? SB_PY_MAX_LOCALS : (size_t)size;
	if (sb_mem_read(&p->mem, tuple + l->tuple_item, items, n * sizeof(items[0])) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char name[16];
		if (read_str(p, items[i] & ~p->lay.tag_mask, name, sizeof(name), false) == 0 &&
		    strcmp(name, want) == 0)
			return (int)i;
	}
	return -1;
}

/* ---- code objects ---- */

static struct sb_pycode *code_slot(struct sb_pyproc *p, uint64_t code)
{
	uint64_t h = (code >> 4) * UINT64_C(0x9e3779b97f4a7c15);

	return &p->code[h >> (64 - __builtin_ctz(SB_PYCODE_CACHE))];
}

static void take_linetable(struct sb_pyproc *p, struct sb_pycode *e)
{
	const struct sb_pylayout *l = &p->lay;
	uint8_t buf[256 + SB_PYCODE_LT_INLINE];
	int64_t size;
	size_t got;

	e->lt_len = 0;
	e->lt_inline = false;
	if (sb_mem_read_some(&p->mem, e->linetable_ptr, buf, l->bytes_sval + SB_PYCODE_LT_INLINE, &got) < 0 ||
	    got < l->bytes_sval)
		return;
	memcpy(&size, buf + l->bytes_size, sizeof(size));
	if (size <= 0)
		return;
	e->lt_len = size > SB_PY_MAX_LINETABLE ? SB_PY_MAX_LINETABLE : (uint32_t)size;
	if (e->lt_len <= SB_PYCODE_LT_INLINE && got >= l->bytes_sval + e->lt_len) {
		memcpy(e->lt, buf + l->bytes_sval, e->lt_len);
		e->lt_inline = true;
	}
}

/* The cache entry for the code object at `code`, whose first
 * co_code_adaptive bytes are `hdr`: a hit is revalidated against the header,
 * a miss decoded.  -ENOTCODE: not a code object; -errno: unreadable. */
static int code_from_hdr(struct sb_pyproc *p, uint64_t code, const uint8_t *hdr, struct sb_pycode **out)
{
	const struct sb_pylayout *l = &p->lay;
	struct sb_pycode *e = code_slot(p, code);
	int rc;

	if (p->code_type && get_u64(hdr, l->ob_type) != p->code_type)
		return -ENOTCODE;
	uint64_t fn = get_u64(hdr, l->co_filename), qn = get_u64(hdr, l->co_qualname);
	uint64_t lt = get_u64(hdr, l->co_linetable), names = get_u64(hdr, l->co_localsplusnames);
	int first = (int)get_u32(hdr, l->co_firstlineno);

	if (e->addr == code && e->filename_ptr == fn && e->qualname_ptr == qn && e->linetable_ptr == lt &&
	    e->names_ptr == names && e->firstlineno == first) {
		e->walk_gen = p->walk_gen;
		*out = e;
		return 0;
	}
	memset(e, 0, offsetof(struct sb_pycode, lt));
	if ((rc = read_str(p, fn, e->file, sizeof(e->file), true)) < 0 ||
	    (rc = read_str(p, qn, e->func, sizeof(e->func), false)) < 0)
		return rc;
	e->filename_ptr = fn;
	e->qualname_ptr = qn;
	e->linetable_ptr = lt;
	e->names_ptr = names;
	e->firstlineno = first;
	e->flags = sb_pyclassify_code(e->file, e->func);
	e->file_hash = sb_pyhash(e->file);
	e->name_local = (e->flags & SB_PYC_FIND_AND_LOAD) ? find_local(p, names, "name") : -1;
	e->memo_idx = INT64_MIN;
	take_linetable(p, e);
	e->walk_gen = p->walk_gen;
	e->addr = code;	/* last: a failed fill leaves the slot empty */
	*out = e;
	return 0;
}

/* Line of code unit idx, streaming a location table too big for the cache
 * in bounded chunks. */
static int code_line(struct sb_pyproc *p, const struct sb_pycode *e, int64_t idx)
{
	uint8_t buf[LT_CHUNK + LT_CARRY];
	struct sb_lt_state st;
	uint64_t base = e->linetable_ptr + p->lay.bytes_sval;
	size_t have = 0, off = 0;

	if (idx < 0)
		return e->firstlineno < 0 ? -1 : e->firstlineno;	/* forged: unknown */
	if (e->lt_inline)
		return sb_linetable_line(e->lt, e->lt_len, e->firstlineno, idx);
	if (e->lt_len == 0)
		return -1;
	sb_lt_init(&st, e->firstlineno);
	while (!st.done && off < e->lt_len) {
		size_t want = e->lt_len - off < LT_CHUNK ? e->lt_len - off : LT_CHUNK;
		if (sb_mem_read(&p->mem, base + off, buf + have, want) < 0)
			return -1;
		off += want;
		have += want;
		size_t used = sb_lt_feed(&st, buf, have, idx, off >= e->lt_len);
		if (st.done)
			break;
		/* An incomplete entry is at most LT_CARRY bytes; anything more
		 * left over means the feed could not progress. */
		if (have - used > LT_CARRY)
			return -1;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	return st.done ? st.found : -1;
}

/* ---- threads ---- */

static int top_frame(struct sb_pyproc *p, const uint8_t *ts, uint64_t *frame)
{
	const struct sb_pylayout *l = &p->lay;
	uint64_t cframe;

	*frame = 0;
	if (l->ts_current_frame != SB_PYOFF_NONE) {
		*frame = get_u64(ts, l->ts_current_frame);
		return 0;
	}
	cframe = get_u64(ts, l->ts_cframe);
	if (!cframe)
		return 0;
	return sb_mem_get(&p->mem, cframe + l->cframe_current_frame, frame);
}

int sb_pyproc_inner_tid(struct sb_pyproc *p, pid_t tid, pid_t *inner)
{
	char path[80], buf[4096];
	ssize_t r;
	int fd;
	char *line;

	*inner = tid;
	if (tid <= 0)
		return -ESRCH;
	if (p->same_pidns)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)p->pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -ESRCH;
	buf[r] = '\0';
	line = strstr(buf, "\nNSpid:");
	if (!line)
		return 0;	/* kernel without NSpid: no namespaces to cross */
	line += strlen("\nNSpid:");
	/* The last number on the line is the tid in the innermost namespace. */
	for (char *tok = line; *tok && *tok != '\n';) {
		char *end;
		long v = strtol(tok, &end, 10);
		if (end == tok)
			break;
		*inner = (pid_t)v;
		tok = end;
	}
	return 0;
}

struct ts_iter {
	struct sb_pyproc *p;
	uint64_t interp, ts;
	unsigned ninterp, budget;
	struct cycle ic, tc;
	int err;		/* -ESRCH/-EPERM: the process, not the list, failed */
};

/* A read for the iterator: failures end the list; a vanished process is
 * remembered so that it is not mistaken for "no such thread". */
static bool it_get(struct ts_iter *it, uint64_t addr, uint64_t *v)
{
	int rc = sb_mem_get(&it->p->mem, addr, v);

	if (rc == -ESRCH || rc == -EPERM)
		it->err = rc;
	return rc == 0;
}

static void ts_iter_init(struct ts_iter *it, struct sb_pyproc *p)
{
	memset(it, 0, sizeof(*it));
	it->p = p;
	it->budget = SB_PY_MAX_TSTATES;
	if (!it_get(it, p->runtime + p->lay.rt_interpreters_head, &it->interp))
		it->interp = 0;
	cycle_init(&it->ic, it->interp);
	if (it->interp && !it_get(it, it->interp + p->lay.is_threads_head, &it->ts))
		it->ts = 0;
	cycle_init(&it->tc, it->ts);
}

/* Next tstate (address and its first ts_read bytes); false at the end. */
static bool ts_iter_next(struct ts_iter *it, uint64_t *addr, uint8_t *buf)
{
	const struct sb_pylayout *l = &it->p->lay;

	while (it->budget > 0) {
		if (!it->ts) {
			uint64_t next = 0;
			if (!it->interp || ++it->ninterp >= SB_PY_MAX_INTERPS ||
			    !it_get(it, it->interp + l->is_next, &next) || !next || cycle_step(&it->ic, next))
				return false;
			it->interp = next;
			if (!it_get(it, next + l->is_threads_head, &it->ts))
				it->ts = 0;
			cycle_init(&it->tc, it->ts);
			continue;
		}
		it->budget--;
		*addr = it->ts;
		int rc = sb_mem_read(&it->p->mem, it->ts, buf, l->ts_read);
		if (rc == -ESRCH || rc == -EPERM) {
			it->err = rc;
			return false;
		}
		if (rc < 0) {
			it->ts = 0;	/* a torn list: go on with the next interpreter */
			continue;
		}
		uint64_t next = get_u64(buf, l->ts_next);
		it->ts = (next && !cycle_step(&it->tc, next)) ? next : 0;
		return true;
	}
	return false;
}

/* A remembered tstate is used only while it is still linked into its
 * interpreter's list (prev->next or threads.head points back at it): a
 * thread that exited leaves freed memory that may still hold its tid. */
static bool hint_valid(struct sb_pyproc *p, const struct sb_pytid *hint, pid_t inner, const uint8_t *buf)
{
	const struct sb_pylayout *l = &p->lay;
	uint64_t prev, back;

	if (hint->tid != inner || (pid_t)get_u64(buf, l->ts_native_thread_id) != inner)
		return false;
	prev = get_u64(buf, l->ts_prev);
	if (prev)
		return sb_mem_get(&p->mem, prev + l->ts_next, &back) == 0 && back == hint->tstate;
	return sb_mem_get(&p->mem, get_u64(buf, l->ts_interp) + l->is_threads_head, &back) == 0 &&
	       back == hint->tstate;
}

static int find_tstate(struct sb_pyproc *p, pid_t inner, uint64_t *tstate, uint8_t *buf)
{
	const struct sb_pylayout *l = &p->lay;
	struct sb_pytid *hint = &p->tids[(unsigned)inner & (SB_PYTID_CACHE - 1)];
	struct ts_iter it;
	uint64_t addr, frame, fallback = 0;

	if (hint->tid == inner) {
		int rc = sb_mem_read(&p->mem, hint->tstate, buf, l->ts_read);
		if (rc == -ESRCH || rc == -EPERM)
			return rc;
		if (rc == 0 && hint_valid(p, hint, inner, buf)) {
			*tstate = hint->tstate;
			return 0;
		}
	}
	ts_iter_init(&it, p);
	while (ts_iter_next(&it, &addr, buf)) {
		if ((pid_t)get_u64(buf, l->ts_native_thread_id) != inner)
			continue;
		/* A thread with a tstate in several interpreters: the one
		 * running Python has a frame. */
		if (top_frame(p, buf, &frame) == 0 && frame) {
			hint->tid = inner;
			hint->tstate = addr;
			*tstate = addr;
			return 0;
		}
		if (!fallback)
			fallback = addr;
	}
	if (it.err)
		return it.err;
	if (!fallback)
		return -ENOENT;
	*tstate = fallback;
	return sb_mem_read(&p->mem, fallback, buf, l->ts_read);
}

int sb_pyproc_list_threads(struct sb_pyproc *p, uint64_t *tstates, pid_t *tids, size_t cap, size_t *n)
{
	uint8_t buf[SB_PYLAYOUT_MAX_TSTATE];
	struct ts_iter it;
	uint64_t addr;

	*n = 0;
	ts_iter_init(&it, p);
	while (*n < cap && ts_iter_next(&it, &addr, buf)) {
		tstates[*n] = addr;
		tids[*n] = (pid_t)get_u64(buf, p->lay.ts_native_thread_id);
		(*n)++;
	}
	return it.err;
}

/* ---- the walk ----
 * Pass 1 follows frame->previous and copies what each frame holds.  Frames
 * owned by the thread live in its data-stack chunks, below one another, so
 * the first frame found in a chunk brings the chunk's lower part in with one
 * read.  Pass 2 reads the code-object headers of up to SB_PY_CODE_BATCH
 * frames with one system call, checks them against the cache and emits the
 * frames.  Steady state: ~5 system calls per stack. */

enum { RAW_PY, RAW_SHIM, RAW_UNREADABLE };

struct fsrc {
	uint64_t next_chunk;	/* older chunk whose header is not read yet */
	uint64_t lo, hi;	/* data of the current chunk */
	uint64_t wlo, whi;	/* bytes held in p->window */
	unsigned nchunks;
};

/* Enter the chunk holding [addr, addr+len), following chunk->previous. */
static bool chunk_find(struct sb_pyproc *p, struct fsrc *src, uint64_t addr, size_t len)
{
	/* Without overflow: a forged address near 2^64 must not wrap into the chunk. */
	while (!(addr >= src->lo && addr <= src->hi && len <= src->hi - addr)) {
		uint64_t hdr[2];	/* previous, size */

		if (!src->next_chunk || src->nchunks >= SB_PY_MAX_CHUNKS ||
		    sb_mem_read(&p->mem, src->next_chunk, hdr, sizeof(hdr)) < 0 || hdr[1] < 24 ||
		    hdr[1] > (UINT64_C(1) << 30)) {
			src->next_chunk = 0;
			return false;
		}
		src->nchunks++;
		src->lo = src->next_chunk + 24;
		src->hi = src->next_chunk + hdr[1];
		src->next_chunk = hdr[0];
	}
	return true;
}

/* The fr_size bytes of the frame at addr. */
static int frame_bytes(struct sb_pyproc *p, struct fsrc *src, uint64_t addr, uint8_t *fb)
{
	const struct sb_pylayout *l = &p->lay;
	size_t fs = l->fr_size, got;
	int rc;

	if (addr >= src->wlo && addr <= src->whi && fs <= src->whi - addr) {
		memcpy(fb, p->window + (addr - src->wlo), fs);
		return 0;
	}
	rc = sb_mem_read(&p->mem, addr, fb, fs);
	if (rc < 0)
		return rc;
	/* Only a frame owned by the thread sits in a chunk; generator frames
	 * and entry shims live elsewhere and must not advance the chunks. */
	if (fb[l->fr_owner] != 0 || !chunk_find(p, src, addr, fs))
		return 0;
	uint64_t lo = addr + fs - src->lo > SB_PY_WINDOW ? addr + fs - SB_PY_WINDOW : src->lo;
	if (sb_mem_read_some(&p->mem, lo, p->window, addr + fs - lo, &got) == 0 && got == addr + fs - lo) {
		src->wlo = lo;
		src->whi = addr + fs;
	}
	return 0;
}

static int collect(struct sb_pyproc *p, const uint8_t *ts, uint64_t frame, size_t *n, bool *truncated)
{
	const struct sb_pylayout *l = &p->lay;
	uint8_t fb[SB_PYLAYOUT_MAX_FRAME];
	struct fsrc src = { .next_chunk = get_u64(ts, l->ts_datastack_chunk) };
	struct cycle c;

	*n = 0;
	*truncated = false;
	cycle_init(&c, frame);
	while (frame) {
		struct sb_pyraw *r;
		int rc;

		if (*n == SB_PY_MAX_WALK) {
			*truncated = true;
			break;
		}
		r = &p->raw[(*n)++];
		memset(r, 0, sizeof(*r));
		r->addr = frame;
		rc = frame_bytes(p, &src, frame, fb);
		if (rc == -ESRCH || rc == -EPERM)
			return rc;
		if (rc < 0) {
			r->kind = RAW_UNREADABLE;
			break;
		}
		r->kind = l->owner_shim && fb[l->fr_owner] >= l->owner_shim ? RAW_SHIM : RAW_PY;
		r->code = get_u64(fb, l->fr_code);
		r->instr = get_u64(fb, l->fr_instr);
		if (l->fr_localsplus + 8 <= l->fr_size)
			r->local0 = get_u64(fb, l->fr_localsplus);
		r->entry = l->fr_is_entry != SB_PYOFF_NONE && fb[l->fr_is_entry];

		uint64_t prev = get_u64(fb, l->fr_previous);
		if (!prev || cycle_step(&c, prev))
			break;
		frame = prev;
	}
	return 0;
}

/* Code address of a raw frame, 0 when it holds no code object. */
static uint64_t raw_code(const struct sb_pylayout *l, const struct sb_pyraw *r)
{
	uint64_t code = r->code;

	if (r->kind != RAW_PY)
		return 0;
	if (l->tag_mask) {
		/* _PyStackRef: (bits & 3) == 3 is a tagged int, 1 is NULL */
		if ((code & 3) == 3 || code == 1)
			return 0;
		code &= ~l->tag_mask;
	}
	return code;
}

struct walk_out {
	struct sb_pystack *out;
	struct sb_pywalk *w;
	struct sb_pyframe spare;
	int spare_item;
};

static void add_unreadable(struct walk_out *wo)
{
	struct sb_pywalk_item *it = &wo->w->item[wo->w->n++];

	memset(it, 0, sizeof(*it));
	it->out = -1;
	if (wo->out->n < SB_PYLOC_MAX_FRAMES) {
		struct sb_pyframe *f = &wo->out->f[wo->out->n];
		snprintf(f->file, sizeof(f->file), "<unreadable>");
		snprintf(f->func, sizeof(f->func), "?");
		f->line = -1;
		f->flags = SB_PYFRAME_UNREADABLE;
		it->out = (int16_t)wo->out->n++;
	}
}

static void import_name(struct sb_pyproc *p, const struct sb_pyraw *r, const struct sb_pycode *e,
			struct sb_pystack *out)
{
	const struct sb_pylayout *l = &p->lay;
	uint64_t v;

	if (e->name_local == 0)
		v = r->local0;
	else if (sb_mem_get(&p->mem, r->addr + l->fr_localsplus + 8 * (uint64_t)e->name_local, &v) < 0)
		return;
	if (read_str(p, v & ~l->tag_mask, out->importing, sizeof(out->importing), false) < 0)
		out->importing[0] = '\0';
}

static void emit(struct sb_pyproc *p, const struct sb_pyraw *r, uint64_t code, struct sb_pycode *e,
		 struct walk_out *wo)
{
	const struct sb_pylayout *l = &p->lay;
	struct sb_pywalk *w = wo->w;
	uint64_t base = code + l->co_code_adaptive;
	int64_t idx = r->instr < base ? -1 : (int64_t)((r->instr - base) / 2);
	struct sb_pyframe *f = NULL;

	if (e->memo_idx != idx) {
		e->memo_line = code_line(p, e, idx);
		e->memo_idx = idx;
	}

	struct sb_pywalk_item *it = &w->item[w->n++];
	it->flags = (uint16_t)e->flags;
	it->entry = r->entry;
	it->dyn = false;
	it->file_hash = e->file_hash;
	it->out = -1;
	if (wo->out->n < SB_PYLOC_MAX_FRAMES) {
		f = &wo->out->f[wo->out->n];
		it->out = (int16_t)wo->out->n++;
	} else if (wo->spare_item < 0 && !(e->flags & (SB_PYC_LIBRARY | SB_PYC_DYNFILE))) {
		f = &wo->spare;
		wo->spare_item = (int)(w->n - 1);
	}
	if (f) {
		memcpy(f->file, e->file, sizeof(f->file));
		memcpy(f->func, e->func, sizeof(f->func));
		f->line = e->memo_line;
		f->flags = 0;
	}
	if ((e->flags & SB_PYC_FIND_AND_LOAD) && e->name_local >= 0 && !wo->out->importing[0])
		import_name(p, r, e, wo->out);
}

/* Pass 2 over raw[g..g+k): one batched read of the headers the cache cannot
 * vouch for yet in this walk, then the frames in order. */
static int resolve_group(struct sb_pyproc *p, size_t g, size_t k, struct walk_out *wo)
{
	const struct sb_pylayout *l = &p->lay;
	uint8_t hdr[SB_PY_CODE_BATCH][SB_PYLAYOUT_MAX_CODE_HDR];
	struct sb_mem_iov iov[SB_PY_CODE_BATCH];
	size_t m = 0;
	int rc;

	for (size_t i = g; i < g + k; i++) {
		uint64_t code = raw_code(l, &p->raw[i]);
		const struct sb_pycode *e = code_slot(p, code);
		bool have = !code || (e->addr == code && e->walk_gen == p->walk_gen);
		for (size_t j = 0; j < m && !have; j++)
			have = iov[j].addr == code;
		if (have)
			continue;
		iov[m] = (struct sb_mem_iov){ .addr = code, .buf = hdr[m], .len = l->co_code_adaptive };
		m++;
	}
	if (m) {
		rc = sb_mem_readv(&p->mem, iov, m);
		if (rc < 0)
			return rc;
	}
	for (size_t i = g; i < g + k; i++) {
		const struct sb_pyraw *r = &p->raw[i];
		uint64_t code = raw_code(l, r);
		struct sb_pycode *e = code_slot(p, code);

		if (r->kind == RAW_SHIM) {
			/* C-stack shim: the Python frame above it was entered from C. */
			if (wo->w->n)
				wo->w->item[wo->w->n - 1].entry = true;
			continue;
		}
		if (r->kind == RAW_UNREADABLE) {
			add_unreadable(wo);
			continue;
		}
		if (!code)
			continue;
		if (!(e->addr == code && e->walk_gen == p->walk_gen)) {
			size_t j = 0;
			while (j < m && iov[j].addr != code)
				j++;
			rc = j < m ? iov[j].err : -EFAULT;
			if (rc == 0)
				rc = code_from_hdr(p, code, iov[j].buf, &e);
			if (rc == -ESRCH || rc == -EPERM)
				return rc;
			if (rc == -ENOTCODE)
				continue;
			if (rc < 0) {
				add_unreadable(wo);
				continue;
			}
		}
		if (!(e->flags & SB_PYC_SKIP))
			emit(p, r, code, e, wo);
	}
	return 0;
}

/* Keep the program's own frame although it is deeper than the window: it
 * replaces the last slot, the frames in between are counted as elided. */
static void place_spare(struct walk_out *wo)
{
	const int16_t last = SB_PYLOC_MAX_FRAMES - 1;
	struct sb_pywalk *w = wo->w;
	struct sb_pystack *out = wo->out;

	for (size_t k = 0; k < w->n; k++)
		if (w->item[k].out >= 0 && !(out->f[w->item[k].out].flags & SB_PYFRAME_UNREADABLE) &&
		    !(w->item[k].flags & (SB_PYC_LIBRARY | SB_PYC_DYNFILE)))
			return;	/* a user frame is in the window already */
	for (size_t k = 0; k < w->n; k++)
		if (w->item[k].out == last)
			w->item[k].out = -1;
	out->f[last] = wo->spare;
	w->item[wo->spare_item].out = last;
	out->elided = (size_t)wo->spare_item - (size_t)last;
}

static void stack_clear(struct sb_pystack *out)
{
	out->n = 0;
	out->from_eval = false;
	out->importing[0] = '\0';
	out->user_frame = -1;
	out->depth = out->elided = 0;
	out->truncated = false;
}

int sb_pyproc_walk_tstate(struct sb_pyproc *p, uint64_t tstate, struct sb_pystack *out, struct sb_pywalk *w)
{
	const struct sb_pylayout *l = &p->lay;
	uint8_t ts[SB_PYLAYOUT_MAX_TSTATE];
	struct walk_out wo = { .out = out, .w = w, .spare_item = -1 };
	uint64_t frame;
	size_t n;
	int rc;

	stack_clear(out);
	w->n = 0;
	w->truncated = false;
	rc = sb_mem_read(&p->mem, tstate, ts, l->ts_read);
	if (rc < 0)
		return rc == -ESRCH || rc == -EPERM ? rc : 0;
	rc = top_frame(p, ts, &frame);
	if (rc == -ESRCH || rc == -EPERM)
		return rc;
	p->walk_gen++;
	rc = collect(p, ts, rc < 0 ? 0 : frame, &n, &w->truncated);
	if (rc < 0)
		return rc;
	for (size_t g = 0; g < n; g += SB_PY_CODE_BATCH) {
		rc = resolve_group(p, g, n - g < SB_PY_CODE_BATCH ? n - g : SB_PY_CODE_BATCH, &wo);
		if (rc < 0)
			return rc;
	}
	out->truncated = w->truncated;
	if (wo.spare_item >= 0)
		place_spare(&wo);
	out->depth = w->n;
	sb_pyclassify_stack(out, w);
	return 0;
}

int sb_pyproc_stack(struct sb_pyproc *p, pid_t tid, struct sb_pystack *out)
{
	uint8_t ts[SB_PYLAYOUT_MAX_TSTATE];
	uint64_t tstate;
	pid_t inner;
	int rc;

	stack_clear(out);
	rc = sb_pyproc_inner_tid(p, tid, &inner);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&p->lock);
	rc = find_tstate(p, inner, &tstate, ts);
	if (rc == 0)
		rc = sb_pyproc_walk_tstate(p, tstate, out, &p->walk);
	else if (rc != -ESRCH && rc != -EPERM)
		rc = 0;	/* no Python thread state: n == 0 */
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void sb_pystack_format_loc(const struct sb_pystack *s, char *buf, size_t cap)
{
	const struct sb_pyframe *f;
	int i;

	if (cap == 0)
		return;
	buf[0] = '\0';
	if (s->n == 0)
		return;
	i = s->user_frame >= 0 && (size_t)s->user_frame < s->n ? s->user_frame : 0;
	f = &s->f[i];
	if (f->line > 0)
		snprintf(buf, cap, "%s:%d in %s()", f->file, f->line, f->func);
	else
		snprintf(buf, cap, "%s in %s()", f->file, f->func);
}
