/* sys.modules of a running CPython, read from outside (pymodules.h).
 *
 * Layouts.  interp->modules is at 888 (3.11) and interp->imports.modules at
 * 944 (3.12), offsetof() over the internal headers of Debian 3.11.2, pyenv
 * 3.11.7 and 3.12.1; 3.13+ publish it in _Py_DebugOffsets
 * (interpreter_state.imports_modules), with the dict's ma_keys/ma_values.
 * The keys object (PyDictKeysObject) has kept one layout from 3.11 to 3.14
 * in default (GIL) builds: dk_log2_size @8, dk_log2_index_bytes @9,
 * dk_kind @10, dk_nentries @24, dk_indices @32; the entries follow the
 * 1 << dk_log2_index_bytes bytes of indices, 24 bytes each {hash, key,
 * value} for general keys, 16 bytes {key, value} for all-str keys.  A
 * module's dict (PyModuleObject.md_dict) follows its object header (@16)
 * in all of them.  Free-threaded builds (a lock in the keys object, a
 * bigger object header) are refused by the layout parser already
 * (pyversion.c). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "pydecode.h"
#include "pymodules.h"
#include "pyproc.h"

#define DK_LOG2_SIZE 8
#define DK_LOG2_INDEX_BYTES 9
#define DK_KIND 10
#define DK_NENTRIES 24
#define DK_INDICES 32
#define DK_MIN_LOG2 3		/* PyDict_LOG_MINSIZE */
#define DK_MAX_LOG2 20		/* a million slots: far beyond any real sys.modules */
#define KIND_GENERAL 0
#define KIND_UNICODE 1
#define ENTRY_GENERAL 24
#define ENTRY_UNICODE 16

#define DICT_HDR 64		/* bytes of a PyDictObject read (ma_keys, ma_values inside) */
#define NAME_READ 127		/* characters of a key read: its top-level part must fit */
#define ENTRY_BATCH 256		/* entries copied per read */
#define KEY_BATCH 64		/* str objects read per system call */
#define TRIES 4			/* reads of a dict that keeps changing */
#define STR_HDR_MAX 256		/* str header bytes: str_ascii_data fits (pyversion.c checks) */

/* ---- layouts ---- */

/* Word indices (after the cookie) of the fields we need in a 3.13 / 3.14
 * _Py_DebugOffsets blob; next and threads_head are read back too, to prove
 * these indices agree with the blob the frame reader parsed (pyversion.c). */
struct dbg_words {
	unsigned minor, words;
	unsigned is_size, is_next, is_threads_head, is_modules;
	unsigned dict_size, dict_keys, dict_values;
};

static const struct dbg_words dbg_words[] = {
	{ 13, 72, 5, 7, 8, 10, 55, 56, 57 },
	{ 14, 94, 5, 7, 8, 11, 65, 66, 67 },
};

static uint64_t blob_word(const unsigned char *blob, unsigned idx)
{
	uint64_t v;

	memcpy(&v, blob + 8 + (size_t)idx * 8, sizeof(v));
	return v;
}

static int layout_from_blob(const struct sb_pylayout *lay, const unsigned char *blob, size_t len,
			    struct sb_pymodlayout *out)
{
	const struct dbg_words *w = NULL;
	uint64_t version, is_size, dict_size, mod, keys, values;

	for (size_t i = 0; i < sizeof(dbg_words) / sizeof(dbg_words[0]); i++)
		if (dbg_words[i].minor == lay->minor)
			w = &dbg_words[i];
	if (!w)
		return -ENOENT;
	if (!blob || len < 8 + (size_t)w->words * 8 || memcmp(blob, "xdebugpy", 8) != 0)
		return -EINVAL;
	version = blob_word(blob, 0);
	if (version > UINT32_MAX || sb_pyversion_major((uint32_t)version) != 3 ||
	    sb_pyversion_minor((uint32_t)version) != lay->minor || blob_word(blob, 1) != 0)
		return -EINVAL;
	if (blob_word(blob, w->is_next) != lay->is_next || blob_word(blob, w->is_threads_head) != lay->is_threads_head)
		return -EINVAL;
	is_size = blob_word(blob, w->is_size);
	dict_size = blob_word(blob, w->dict_size);
	mod = blob_word(blob, w->is_modules);
	keys = blob_word(blob, w->dict_keys);
	values = blob_word(blob, w->dict_values);
	if (is_size > SB_PYLAYOUT_MAX_STRUCT || mod > is_size || is_size - mod < 8 || dict_size > DICT_HDR ||
	    keys > dict_size || dict_size - keys < 8 || values > dict_size || dict_size - values < 8)
		return -EINVAL;
	out->is_modules = (uint32_t)mod;
	out->dict_ma_keys = (uint32_t)keys;
	out->dict_ma_values = (uint32_t)values;
	out->md_dict = 16;	/* right after the object header, 3.11-3.14 */
	return 0;
}

int sb_pymodlayout_get(const struct sb_pylayout *lay, const void *blob, size_t len, struct sb_pymodlayout *out)
{
	if (sb_pyversion_major(lay->version) != 3)
		return -ENOENT;
	switch (lay->minor) {
	case 11:
		*out = (struct sb_pymodlayout){ .is_modules = 888, .dict_ma_keys = 32, .dict_ma_values = 40,
						 .md_dict = 16 };
		return 0;
	case 12:
		*out = (struct sb_pymodlayout){ .is_modules = 944, .dict_ma_keys = 32, .dict_ma_values = 40,
						 .md_dict = 16 };
		return 0;
	default:
		return layout_from_blob(lay, blob, len, out);
	}
}

/* ---- names ---- */

static bool ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ident_char(char c)
{
	return ident_start(c) || (c >= '0' && c <= '9');
}

bool sb_pymodules_valid_name(const char *s, size_t len, size_t *top_len)
{
	size_t top = 0;
	bool seg_start = true;

	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (seg_start)
				return false;	/* "", ".x", "a..b" */
			if (!top)
				top = i;
			seg_start = true;
		} else if (seg_start ? !ident_start(s[i]) : !ident_char(s[i])) {
			return false;
		} else {
			seg_start = false;
		}
	}
	if (seg_start)
		return false;	/* "a." */
	*top_len = top ? top : len;
	return true;
}

/* Sort and deduplicate the names gathered so far. */
static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void compact(struct sb_pymodules *m)
{
	size_t k = 0;

	if (m->n < 2)
		return;
	qsort(m->name, m->n, sizeof(m->name[0]), cmp_name);
	for (size_t i = 1; i < m->n; i++)
		if (strcmp(m->name[k], m->name[i]) != 0 && ++k != i)
			memcpy(m->name[k], m->name[i], sizeof(m->name[0]));
	m->n = k + 1;
}

/* Keep the top-level part of the key read into s (len characters of a str
 * of `length`); a key that is not a plain dotted identifier is skipped. */
static void add_name(struct sb_pymodules *m, const char *s, size_t len, uint64_t length)
{
	size_t top;

	if (len < length) {
		/* Only the leading components that were read whole count. */
		while (len > 0 && s[len - 1] != '.')
			len--;
		if (len < 2)
			return;
		len--;
	}
	if (!sb_pymodules_valid_name(s, len, &top) || top >= SB_PYMOD_NAME)
		return;
	if (m->n == SB_PYMOD_MAX_NAMES) {
		compact(m);
		if (m->n == SB_PYMOD_MAX_NAMES) {
			m->truncated = true;
			return;
		}
	}
	memcpy(m->name[m->n], s, top);
	m->name[m->n][top] = '\0';
	m->n++;
}

/* The process or our memory failed: the whole read fails.  Anything else
 * is one unreadable object, skipped. */
static bool fatal(int rc)
{
	return rc == -ESRCH || rc == -EPERM || rc == -ENOMEM;
}

static int fatal_rc(int rc)
{
	return fatal(rc) ? rc : 0;
}

/* ---- str objects ---- */

typedef void str_fn(void *ctx, size_t i, const char *s, size_t len, uint64_t length);

/* An ASCII compact str (anything else is not a module name we can write
 * as a rule, nor "__file__"): its first characters, up to NAME_READ.  buf
 * holds `got` bytes read at the object. */
static void ascii_from_bytes(const struct sb_pylayout *l, const uint8_t *buf, size_t got, size_t i, str_fn *fn,
			     void *ctx)
{
	struct sb_str_shape sh;
	int64_t length;
	uint32_t state;
	size_t n;

	if (got < l->str_ascii_data)
		return;
	memcpy(&length, buf + l->str_length, sizeof(length));
	memcpy(&state, buf + l->str_state, sizeof(state));
	if (length <= 0 || sb_str_shape(state, &sh) < 0 || !sh.compact || !sh.ascii)
		return;
	n = length > NAME_READ ? NAME_READ : (size_t)length;
	if (got - l->str_ascii_data < n)
		return;
	fn(ctx, i, (const char *)buf + l->str_ascii_data, n, (uint64_t)length);
}

/* Read the str objects at addr[0..n): one system call per batch; an object
 * near the end of a mapping is read again for what is there. */
static int read_strs(struct sb_pyproc *p, const uint64_t *addr, size_t n, str_fn *fn, void *ctx)
{
	const struct sb_pylayout *l = &p->lay;
	size_t each = l->str_ascii_data + NAME_READ;
	struct sb_mem_iov iov[KEY_BATCH];
	uint8_t *buf = malloc(KEY_BATCH * each);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t at = 0; at < n && !rc; at += KEY_BATCH) {
		size_t k = n - at < KEY_BATCH ? n - at : KEY_BATCH;

		for (size_t i = 0; i < k; i++)
			iov[i] = (struct sb_mem_iov){ .addr = addr[at + i], .buf = buf + i * each, .len = each };
		rc = sb_mem_readv(&p->mem, iov, k);
		for (size_t i = 0; i < k && !rc; i++) {
			size_t got = each;

			if (iov[i].err && sb_mem_read_some(&p->mem, iov[i].addr, iov[i].buf, each, &got) < 0)
				continue;
			ascii_from_bytes(l, iov[i].buf, got, at + i, fn, ctx);
		}
	}
	free(buf);
	return rc;
}

/* A str of any kind as UTF-8 into out (a path): -EINVAL when it is not a
 * compact str, is empty, or does not fit. */
static int read_text(struct sb_pyproc *p, uint64_t addr, char *out, size_t cap)
{
	const struct sb_pylayout *l = &p->lay;
	uint8_t hdr[STR_HDR_MAX];
	struct sb_str_shape sh;
	int64_t length;
	uint32_t state;
	uint8_t *data;
	size_t len;
	int rc;

	if (l->str_ascii_data > sizeof(hdr) || !sb_mem_plausible(addr, l->str_ascii_data))
		return -EINVAL;
	if ((rc = sb_mem_read(&p->mem, addr, hdr, l->str_ascii_data)) < 0)
		return rc;
	memcpy(&length, hdr + l->str_length, sizeof(length));
	memcpy(&state, hdr + l->str_state, sizeof(state));
	if (length <= 0 || (uint64_t)length >= cap || sb_str_shape(state, &sh) < 0 || !sh.compact)
		return -EINVAL;
	if (!(data = malloc((size_t)length * sh.kind)))
		return -ENOMEM;
	rc = sb_mem_read(&p->mem, addr + (sh.ascii ? l->str_ascii_data : l->str_compact_data), data,
			 (size_t)length * sh.kind);
	if (rc == 0) {
		len = sb_str_to_utf8(data, (size_t)length, sh.kind, out, cap);
		/* Cut short (wide characters): a path that is not the module's. */
		rc = len + 4 >= cap && !sh.ascii ? -EINVAL : 0;
	}
	free(data);
	return rc;
}

/* ---- dicts ---- */

struct dict_snap {
	uint64_t keys;		/* ma_keys */
	int64_t used;		/* ma_used */
	uint64_t entries;	/* address of the first entry */
	size_t esize, koff;	/* entry size, key offset in an entry */
	size_t n;		/* entries to look at */
	bool cut;		/* more entries than the caller's limit */
};

struct dict_item {
	uint64_t key, value;
};

static int dict_header(struct sb_pyproc *p, const struct sb_pymodlayout *ml, uint64_t dict, uint64_t *keys,
		       int64_t *used)
{
	uint8_t hdr[DICT_HDR];
	uint64_t values;
	int rc;

	if (!sb_mem_plausible(dict, DICT_HDR))
		return -EINVAL;
	if ((rc = sb_mem_read(&p->mem, dict, hdr, sizeof(hdr))) < 0)
		return rc;
	memcpy(keys, hdr + ml->dict_ma_keys, 8);
	memcpy(&values, hdr + ml->dict_ma_values, 8);
	memcpy(used, hdr + 16, 8);	/* ma_used follows the object header in every version */
	/* sys.modules and module dicts are combined tables; a split one has
	 * no values here. */
	return values || *used < 0 || !sb_mem_plausible(*keys, DK_INDICES) ? -EINVAL : 0;
}

static int dict_snapshot(struct sb_pyproc *p, const struct sb_pymodlayout *ml, uint64_t dict, size_t limit,
			 struct dict_snap *s)
{
	uint8_t kh[DK_INDICES];
	int64_t nentries;
	unsigned log2, ib;
	int rc;

	memset(s, 0, sizeof(*s));
	if ((rc = dict_header(p, ml, dict, &s->keys, &s->used)) < 0)
		return rc;
	if ((rc = sb_mem_read(&p->mem, s->keys, kh, sizeof(kh))) < 0)
		return rc;
	log2 = kh[DK_LOG2_SIZE];
	ib = kh[DK_LOG2_INDEX_BYTES];
	memcpy(&nentries, kh + DK_NENTRIES, sizeof(nentries));
	/* The index width follows from the size (dictobject.c new_keys_object). */
	if (log2 < DK_MIN_LOG2 || log2 > DK_MAX_LOG2 || ib != log2 + (log2 < 8 ? 0 : log2 < 16 ? 1 : 2))
		return -EINVAL;
	if (kh[DK_KIND] != KIND_GENERAL && kh[DK_KIND] != KIND_UNICODE)
		return -EINVAL;
	/* At most USABLE_FRACTION(size) entries. */
	if (nentries < 0 || nentries > ((INT64_C(2) << log2) / 3))
		return -EINVAL;
	/* Every live item is an entry: read while an insertion was half done. */
	if (s->used > nentries)
		return -EAGAIN;
	s->esize = kh[DK_KIND] == KIND_GENERAL ? ENTRY_GENERAL : ENTRY_UNICODE;
	s->koff = kh[DK_KIND] == KIND_GENERAL ? 8 : 0;
	s->entries = s->keys + DK_INDICES + (UINT64_C(1) << ib);
	s->n = (size_t)nentries;
	if (s->n > limit) {
		s->n = limit;
		s->cut = true;
	}
	if (s->n && !sb_mem_plausible(s->entries, s->n * s->esize))
		return -EINVAL;
	return 0;
}

/* The live entries (key and value both set). */
static int entry_items(struct sb_pyproc *p, const struct dict_snap *s, struct dict_item *items, size_t *n)
{
	uint8_t buf[ENTRY_BATCH * ENTRY_GENERAL];
	int rc;

	*n = 0;
	for (size_t at = 0; at < s->n; at += ENTRY_BATCH) {
		size_t k = s->n - at < ENTRY_BATCH ? s->n - at : ENTRY_BATCH;

		if ((rc = sb_mem_read(&p->mem, s->entries + at * s->esize, buf, k * s->esize)) < 0)
			return rc;
		for (size_t i = 0; i < k; i++) {
			struct dict_item it;

			memcpy(&it.key, buf + i * s->esize + s->koff, 8);
			memcpy(&it.value, buf + i * s->esize + s->koff + 8, 8);
			if (it.key && it.value && sb_mem_plausible(it.key, p->lay.str_ascii_data))
				items[(*n)++] = it;
		}
	}
	return 0;
}

/* The first `limit` live items of a dict, malloc'ed into *items.  The
 * program runs on while we read: a keys table replaced meanwhile (the dict
 * grew) may already be freed, so the items count only when the dict still
 * holds the same table afterwards. */
static int dict_items(struct sb_pyproc *p, const struct sb_pymodlayout *ml, uint64_t dict, size_t limit,
		      struct dict_item **items, size_t *n, bool *cut)
{
	struct dict_item *v = NULL;
	struct dict_snap s;
	uint64_t again;
	int64_t used;
	int rc = -EAGAIN;

	*items = NULL;
	*n = 0;
	for (int t = 0; t < TRIES && rc == -EAGAIN; t++) {
		if ((rc = dict_snapshot(p, ml, dict, limit, &s)) < 0)
			continue;	/* -EAGAIN tries again, the rest ends the loop */
		free(v);
		if (!(v = malloc((s.n ? s.n : 1) * sizeof(*v)))) {
			rc = -ENOMEM;
			break;
		}
		if ((rc = entry_items(p, &s, v, n)) < 0)
			break;
		if ((rc = dict_header(p, ml, dict, &again, &used)) < 0)
			break;
		rc = again == s.keys ? 0 : -EAGAIN;
	}
	if (rc) {
		free(v);
		*n = 0;
		return rc;
	}
	*cut = s.cut;
	*items = v;
	return 0;
}

/* ---- modules ---- */

static void name_found(void *ctx, size_t i, const char *s, size_t len, uint64_t length)
{
	(void)i;
	add_name(ctx, s, len, length);
}

static void dunder_found(void *ctx, size_t i, const char *s, size_t len, uint64_t length)
{
	if (length == 8 && len == 8 && !memcmp(s, "__file__", 8))
		*(ssize_t *)ctx = (ssize_t)i;
}

static int add_file(struct sb_pymodules *m, const char *path)
{
	size_t len = strlen(path) + 1;
	char **v;

	if (m->n_files == SB_PYMOD_MAX_FILES || len > SB_PYMOD_FILE_BYTES - m->file_bytes) {
		m->truncated = true;
		return 0;
	}
	if (!(v = realloc(m->file, (m->n_files + 1) * sizeof(*v))) || !(v[m->n_files] = strdup(path))) {
		if (v)
			m->file = v;
		return -ENOMEM;
	}
	m->file = v;
	m->n_files++;
	m->file_bytes += len;
	return 0;
}

/* module.__file__, searched among the first entries of its dict (the
 * import system sets it with the other dunders before the module's code
 * runs).  A module without one (builtin, frozen, namespace package) or an
 * object that is not a module gives nothing. */
static int module_file(struct sb_pyproc *p, const struct sb_pymodlayout *ml, uint64_t module,
		       struct sb_pymodules *m, char *path)
{
	struct dict_item *items = NULL;
	uint64_t dict, keys[SB_PYMOD_DUNDER_SCAN];
	ssize_t at = -1;
	size_t n = 0;
	bool cut;
	int rc;

	if (!sb_mem_plausible(module, ml->md_dict + 8))
		return 0;
	if ((rc = sb_mem_get(&p->mem, module + ml->md_dict, &dict)) < 0 || !dict)
		return fatal_rc(rc);
	if ((rc = dict_items(p, ml, dict, SB_PYMOD_DUNDER_SCAN, &items, &n, &cut)) < 0)
		return fatal_rc(rc);
	for (size_t i = 0; i < n; i++)
		keys[i] = items[i].key;
	rc = read_strs(p, keys, n, dunder_found, &at);
	if (!rc && at >= 0 && (rc = read_text(p, items[at].value, path, PATH_MAX)) == 0)
		rc = add_file(m, path);
	free(items);
	return fatal_rc(rc);
}

/* One sys.modules dict: the names, then each module's file. */
static int read_modules(struct sb_pyproc *p, const struct sb_pymodlayout *ml, uint64_t dict, struct sb_pymodules *m)
{
	struct dict_item *items = NULL;
	uint64_t *keys = NULL;
	char *path = NULL;
	size_t n = 0;
	bool cut = false;
	int rc;

	if ((rc = dict_items(p, ml, dict, SB_PYMOD_MAX_ENTRIES, &items, &n, &cut)) < 0)
		return rc;
	m->truncated |= cut;
	rc = -ENOMEM;
	if (!(keys = malloc((n ? n : 1) * sizeof(*keys))) || !(path = malloc(PATH_MAX)))
		goto out;
	for (size_t i = 0; i < n; i++)
		keys[i] = items[i].key;
	rc = read_strs(p, keys, n, name_found, m);
	for (size_t i = 0; i < n && !rc; i++)
		rc = module_file(p, ml, items[i].value, m, path);
out:
	free(path);
	free(keys);
	free(items);
	return rc;
}

/* ---- every interpreter ---- */

static int read_interps(struct sb_pyproc *p, const struct sb_pymodlayout *ml, struct sb_pymodules *m)
{
	uint64_t seen[SB_PY_MAX_INTERPS], interp = 0, dict;
	int rc, first_err = 0;

	if ((rc = sb_mem_get(&p->mem, p->runtime + p->lay.rt_interpreters_head, &interp)) < 0)
		return rc;
	for (size_t i = 0; interp && i < SB_PY_MAX_INTERPS; i++) {
		for (size_t j = 0; j < i; j++)
			if (seen[j] == interp)
				return m->interps ? 0 : (first_err ? first_err : -EINVAL);
		seen[i] = interp;
		rc = sb_mem_get(&p->mem, interp + ml->is_modules, &dict);
		/* NULL: an interpreter still starting, or one being torn down. */
		if (!rc && dict)
			rc = read_modules(p, ml, dict, m);
		if (fatal(rc))
			return rc;
		if (!rc && dict)
			m->interps++;
		else if (!first_err)
			first_err = rc;
		if ((rc = sb_mem_get(&p->mem, interp + p->lay.is_next, &interp)) < 0)
			return fatal(rc) || !m->interps ? rc : 0;
	}
	if (m->interps)
		return 0;
	/* No interpreter at all: not initialised yet. */
	return first_err ? first_err : -EAGAIN;
}

int sb_pyproc_modules(struct sb_pyproc *p, struct sb_pymodules *out)
{
	unsigned char blob[SB_PY_DEBUG_OFFSETS_MAX];
	struct sb_pymodlayout ml;
	size_t got = 0;
	int rc;

	out->n = 0;
	out->truncated = false;
	out->interps = 0;
	/* out->file: appended to (sb_pymodules_free frees it) */
	if (p->lay.minor >= 13) {
		rc = sb_mem_read_some(&p->mem, p->runtime, blob, sizeof(blob), &got);
		if (rc < 0)
			return rc;
	}
	if ((rc = sb_pymodlayout_get(&p->lay, got ? blob : NULL, got, &ml)) < 0)
		return rc == -EINVAL ? -ENOENT : rc;
	rc = read_interps(p, &ml, out);
	compact(out);
	return rc;
}

int sb_pymodules_read(pid_t pid, struct sb_pymodules **out)
{
	struct sb_pymodules *m = NULL;
	struct sb_pyproc *p = NULL;
	int rc;

	*out = NULL;
	if ((rc = sb_pyproc_open(pid, &p)) < 0)
		return rc;
	if (!(m = calloc(1, sizeof(*m)))) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = sb_pyproc_modules(p, m)) < 0)
		goto out;
	*out = m;
	m = NULL;
out:
	free(m);
	sb_pyproc_free(p);
	return rc;
}

void sb_pymodules_free(struct sb_pymodules *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_files; i++)
		free(m->file[i]);
	free(m->file);
	free(m);
}
