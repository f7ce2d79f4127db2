/* Unit tests of tracer/pymodules.c: reading sys.modules from outside.
 *
 * A CPython runtime is forged in this process's own memory with the 3.11,
 * 3.12, 3.13 and 3.14 layouts (the last two from _Py_DebugOffsets blobs
 * at &_PyRuntime, as the real ones are) and read back through
 * /proc/self/mem exactly as a target is read: two interpreters, a
 * sys.modules of str keys (unicode and general keys tables), module objects
 * whose dicts hold __file__, keys that are no module names.  Then it is
 * corrupted on purpose and at random: the reader must end, return 0 or
 * -errno, and give only bounded, valid names.  Last, a real interpreter. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem.h"
#include "pymodules.h"
#include "pyproc.h"
#include "pyversion.h"

/* ---- _Py_DebugOffsets of 3.13.0 and 3.14.0 ---- */

#include "pydebug_fixtures.h"
#include "pyforge.h"


static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* ---- names and layouts, without memory ---- */

START_TEST(valid_names)
{
	static const struct {
		const char *s;
		bool ok;
		size_t top;
	} rows[] = {
		{ "json", true, 4 },		{ "json.decoder", true, 4 },	{ "_csv", true, 4 },
		{ "a.b.c", true, 1 },		{ "__main__", true, 8 },	{ "Mod2_x", true, 6 },
		{ "", false, 0 },		{ ".rel", false, 0 },		{ "a.", false, 0 },
		{ "a..b", false, 0 },		{ "1abc", false, 0 },		{ "a.1b", false, 0 },
		{ "bad-name", false, 0 },	{ "sp ace", false, 0 },		{ "new\nline", false, 0 },
		{ "caf\xc3\xa9", false, 0 },	{ "a/b", false, 0 },		{ "*", false, 0 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t top = 999;
		bool ok = sb_pymodules_valid_name(rows[i].s, strlen(rows[i].s), &top);

		ck_assert_msg(ok == rows[i].ok, "%s", rows[i].s);
		if (ok)
			ck_assert_uint_eq(top, rows[i].top);
	}
}
END_TEST

/* loop index: 0 = 3.13, 1 = 3.14 */
START_TEST(layout_from_blob)
{
	const uint64_t *words = _i ? dbg314_words : dbg313_words;
	size_t nw = _i ? 94 : 72, mod_idx = _i ? 11 : 10, dict_idx = _i ? 65 : 55;
	uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX], bad[SB_PY_DEBUG_OFFSETS_MAX];
	struct sb_pylayout lay;
	struct sb_pymodlayout ml;
	size_t len = make_blob(blob, words, nw);

	ck_assert_int_eq(sb_pylayout_from_debug_offsets(blob, len, 0, &lay), 0);
	ck_assert_int_eq(sb_pymodlayout_get(&lay, blob, len, &ml), 0);
	ck_assert_uint_eq(ml.is_modules, _i ? 7664 : 7656);
	ck_assert_uint_eq(ml.dict_ma_keys, 32);
	ck_assert_uint_eq(ml.dict_ma_values, 40);
	ck_assert_uint_eq(ml.md_dict, 16);

	/* Each corruption of what this reader uses is refused. */
	static const struct {
		int what;
		uint64_t v;
	} rows[] = {
		{ -1, 0 },		/* cookie */
		{ 0, 0x30c01f0 },	/* another minor */
		{ 1, 1 },		/* free-threaded */
		{ 7, 12 },		/* interpreter_state.next disagrees with the parsed layout */
		{ 100, 1u << 30 },	/* imports_modules beyond the interpreter's size */
		{ 101, 1u << 30 },	/* dict size */
		{ 102, 44 },		/* ma_keys not inside the dict */
		{ 103, 1u << 20 },	/* ma_values likewise */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t v = rows[i].v;
		size_t idx;

		memcpy(bad, blob, len);
		switch (rows[i].what) {
		case -1: bad[0] = 'X'; idx = SIZE_MAX; break;
		case 100: idx = mod_idx; break;
		case 101: idx = dict_idx; break;
		case 102: idx = dict_idx + 1; break;
		case 103: idx = dict_idx + 2; break;
		default: idx = (size_t)rows[i].what; break;
		}
		if (idx != SIZE_MAX)
			memcpy(bad + 8 + idx * 8, &v, 8);
		ck_assert_msg(sb_pymodlayout_get(&lay, bad, len, &ml) == -EINVAL, "row %zu", i);
	}
	/* Too short, or no blob at all. */
	ck_assert_int_eq(sb_pymodlayout_get(&lay, blob, len - 8, &ml), -EINVAL);
	ck_assert_int_eq(sb_pymodlayout_get(&lay, NULL, 0, &ml), -EINVAL);
	/* A minor whose order we do not know. */
	lay.minor = 15;
	ck_assert_int_eq(sb_pymodlayout_get(&lay, blob, len, &ml), -ENOENT);
}
END_TEST

START_TEST(layout_builtin)
{
	struct sb_pylayout lay;
	struct sb_pymodlayout ml;

	ck_assert_int_eq(sb_pylayout_builtin(0x030b02f0, &lay), 0);
	ck_assert_int_eq(sb_pymodlayout_get(&lay, NULL, 0, &ml), 0);
	ck_assert_uint_eq(ml.is_modules, 888);
	ck_assert_int_eq(sb_pylayout_builtin(0x030c01f0, &lay), 0);
	ck_assert_int_eq(sb_pymodlayout_get(&lay, NULL, 0, &ml), 0);
	ck_assert_uint_eq(ml.is_modules, 944);
	lay.version = 0x020712f0;
	ck_assert_int_eq(sb_pymodlayout_get(&lay, NULL, 0, &ml), -ENOENT);
}
END_TEST

/* ---- a forged runtime ---- */

#define ARENA_SIZE (1u << 20)

struct fake {
	struct fk_arena ar;
	struct sb_pymodlayout ml;
	uint64_t runtime, interp, interp2, modules, modules2;
	uint64_t keys;			/* sys.modules' keys object */
	uint64_t json_mod, pkg_key;	/* a module and a key, for the patches */
	uint64_t json_file;		/* its __file__ str */
};

/* Compact, not ASCII: latin-1 (kind 1) or UCS-2 (kind 2) code points. */
static uint64_t fk_str_wide(struct fake *f, const void *data, size_t n, unsigned kind)
{
	uint64_t o = fk_alloc(&f->ar, f->ar.l.str_compact_data + kind * (n + 1));

	put64(o, f->ar.l.str_length, n);
	put32(o, f->ar.l.str_state, (kind << 2) | (1u << 5));
	memcpy((void *)(uintptr_t)(o + f->ar.l.str_compact_data), data, kind * n);
	return o;
}

/* A combined dict: all-str keys (unicode table) or a general table. */
static uint64_t fk_dict(struct fake *f, const uint64_t *keys, const uint64_t *values, size_t n, bool general,
			uint64_t *keys_obj)
{
	unsigned log2 = 3, ib;
	size_t es = general ? 24 : 16, used = 0;
	uint64_t k, e, d;

	while ((size_t)((2u << log2) / 3) < n)
		log2++;
	ib = log2 + (log2 < 8 ? 0 : log2 < 16 ? 1 : 2);
	k = fk_alloc(&f->ar, 32 + (1u << ib) + ((2u << log2) / 3) * es);
	put64(k, 0, 1);
	((uint8_t *)(uintptr_t)k)[8] = (uint8_t)log2;
	((uint8_t *)(uintptr_t)k)[9] = (uint8_t)ib;
	((uint8_t *)(uintptr_t)k)[10] = general ? 0 : 1;
	put64(k, 24, n);
	memset((void *)(uintptr_t)(k + 32), 0xff, 1u << ib);	/* DKIX_EMPTY: not read */
	e = k + 32 + (1u << ib);
	for (size_t i = 0; i < n; i++) {
		if (general) {
			put64(e + i * es, 0, i * 0x9e37);
			put64(e + i * es, 8, keys[i]);
			put64(e + i * es, 16, values[i]);
		} else {
			put64(e + i * es, 0, keys[i]);
			put64(e + i * es, 8, values[i]);
		}
		used += keys[i] && values[i];
	}
	d = fk_alloc(&f->ar, 64);
	put64(d, 0, 1);
	put64(d, 16, used);
	put64(d, f->ml.dict_ma_keys, k);
	put64(d, f->ml.dict_ma_values, 0);
	if (keys_obj)
		*keys_obj = k;
	return d;
}

/* A module object whose dict has the dunders the import system sets, in
 * its order, then `extra` more names (a big module: __file__ is early). */
static uint64_t fk_module(struct fake *f, const char *name, uint64_t file, size_t extra)
{
	uint64_t keys[64], values[64], m;
	size_t n = 0;

	ck_assert_uint_le(extra, 40);
	keys[n] = fk_str(&f->ar, "__name__");
	values[n++] = fk_str(&f->ar, name);
	keys[n] = fk_str(&f->ar, "__doc__");
	values[n++] = fk_str(&f->ar, "doc");
	keys[n] = fk_str(&f->ar, "__package__");
	values[n++] = fk_str(&f->ar, "");
	keys[n] = fk_str(&f->ar, "__loader__");
	values[n++] = fk_str(&f->ar, "loader");
	keys[n] = fk_str(&f->ar, "__spec__");
	values[n++] = fk_str(&f->ar, "spec");
	if (file) {
		keys[n] = fk_str(&f->ar, "__file__");
		values[n++] = file;
	}
	for (size_t i = 0; i < extra; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "name%zu", i);
		keys[n] = fk_str(&f->ar, nm);
		values[n++] = fk_str(&f->ar, "v");
	}
	m = fk_alloc(&f->ar, 64);
	put64(m, 0, 1);
	put64(m, f->ml.md_dict, fk_dict(f, keys, values, n, false, NULL));
	return m;
}

static uint64_t fk_interp(struct fake *f)
{
	const struct sb_pylayout *l = &f->ar.l;
	uint32_t end = l->is_next > l->is_threads_head ? l->is_next : l->is_threads_head;

	if (f->ml.is_modules > end)
		end = f->ml.is_modules;
	return fk_alloc(&f->ar, end + 8);
}

/* Keys of sys.modules: names, dotted names, and keys no rule can name. */
static void fk_init(struct fake *f, int which, bool general)
{
	uint8_t blob[SB_PY_DEBUG_OFFSETS_MAX];
	uint64_t keys[16], values[16];
	static const char cafe[] = "/app/caf\xe9.py";	/* latin-1 */
	static const uint16_t wide_key[] = { 'm', 0x00e9, 'd' };
	size_t blen, rt_size, n = 0;

	memset(f, 0, sizeof(*f));
	fk_layout(which, &f->ar.l, blob, &blen);
	ck_assert_int_eq(sb_pymodlayout_get(&f->ar.l, blen ? blob : NULL, blen, &f->ml), 0);
	fk_arena_init(&f->ar, ARENA_SIZE);
	rt_size = f->ar.l.rt_interpreters_head + 8;
	f->runtime = fk_alloc(&f->ar, blen > rt_size ? blen : rt_size);
	if (blen)
		memcpy((void *)(uintptr_t)f->runtime, blob, blen);
	f->interp = fk_interp(f);
	f->interp2 = fk_interp(f);
	put64(f->runtime, f->ar.l.rt_interpreters_head, f->interp);
	put64(f->interp, f->ar.l.is_next, f->interp2);

	f->json_file = fk_str(&f->ar, "/usr/lib/python3/json/__init__.py");
	keys[n] = fk_str(&f->ar, "json");
	f->json_mod = values[n++] = fk_module(f, "json", f->json_file, 40);
	keys[n] = fk_str(&f->ar, "json.decoder");
	values[n++] = fk_module(f, "json.decoder", fk_str(&f->ar, "/usr/lib/python3/json/decoder.py"), 0);
	keys[n] = fk_str(&f->ar, "__main__");
	values[n++] = fk_module(f, "__main__", fk_str(&f->ar, "/app/main.py"), 3);
	keys[n] = fk_str(&f->ar, "sys");
	values[n++] = fk_module(f, "sys", 0, 0);	/* builtin: no __file__ */
	f->pkg_key = keys[n] = fk_str(&f->ar, "pkg.sub.mod");
	values[n++] = fk_module(f, "pkg.sub.mod", fk_str_wide(f, cafe, strlen(cafe), 1), 0);
	keys[n] = 0;				/* a deleted entry */
	values[n++] = 0;
	keys[n] = fk_str(&f->ar, "_csv");
	values[n++] = fk_str(&f->ar, "not a module");	/* its "md_dict" is string data */
	keys[n] = fk_str(&f->ar, "bad-name");
	values[n++] = fk_module(f, "bad-name", fk_str(&f->ar, "/app/bad-name.py"), 0);
	keys[n] = fk_str(&f->ar, "1abc");
	values[n++] = fk_str(&f->ar, "x");
	keys[n] = fk_str(&f->ar, ".rel");
	values[n++] = fk_str(&f->ar, "x");
	keys[n] = fk_str_wide(f, wide_key, 3, 2);	/* not ASCII */
	values[n++] = fk_str(&f->ar, "x");
	keys[n] = fk_str(&f->ar, "gone");
	values[n++] = 0;			/* no value: not live */
	f->modules = fk_dict(f, keys, values, n, general, &f->keys);
	put64(f->interp, f->ml.is_modules, f->modules);

	/* A second interpreter with a module of its own. */
	keys[0] = fk_str(&f->ar, "sub_only.x");
	values[0] = fk_module(f, "sub_only.x", fk_str(&f->ar, "rel/sub_only/x.py"), 0);
	f->modules2 = fk_dict(f, keys, values, 1, false, NULL);
	put64(f->interp2, f->ml.is_modules, f->modules2);
}

static struct sb_pymodules *mods_new(void)
{
	struct sb_pymodules *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	return m;
}

static void mods_clear(struct sb_pymodules *m)
{
	for (size_t i = 0; i < m->n_files; i++)
		free(m->file[i]);
	free(m->file);
	m->file = NULL;
	m->n_files = m->file_bytes = 0;
}

static bool has_file(const struct sb_pymodules *m, const char *path)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (!strcmp(m->file[i], path))
			return true;
	return false;
}

/* What every result must be, whatever the memory said. */
static void check_sane(const struct sb_pymodules *m)
{
	size_t top;

	ck_assert_uint_le(m->n, SB_PYMOD_MAX_NAMES);
	ck_assert_uint_le(m->n_files, SB_PYMOD_MAX_FILES);
	for (size_t i = 0; i < m->n; i++) {
		ck_assert_uint_lt(strnlen(m->name[i], SB_PYMOD_NAME), SB_PYMOD_NAME);
		ck_assert(sb_pymodules_valid_name(m->name[i], strlen(m->name[i]), &top));
		ck_assert_uint_eq(top, strlen(m->name[i]));
		if (i)
			ck_assert_int_lt(strcmp(m->name[i - 1], m->name[i]), 0);
	}
	for (size_t i = 0; i < m->n_files; i++) {
		ck_assert_uint_lt(strlen(m->file[i]), PATH_MAX);
		for (const char *c = m->file[i]; *c; c++)
			ck_assert((unsigned char)*c >= 0x20 && *c != 0x7f);
	}
}

/* loop index = layout (3.11, 3.12, 3.13, 3.14) x keys table (unicode, general) */
START_TEST(read_forged)
{
	static const char *const want[] = { "__main__", "_csv", "json", "pkg", "sub_only", "sys" };
	struct fake f;
	struct sb_pyproc *p;
	struct sb_pymodules *m = mods_new();

	fk_init(&f, _i / 2, _i % 2);
	p = fk_proc_new(&f.ar, f.runtime);
	ck_assert_int_eq(sb_pyproc_modules(p, m), 0);
	check_sane(m);
	ck_assert_uint_eq(m->interps, 2);
	ck_assert(!m->truncated);
	ck_assert_uint_eq(m->n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < m->n; i++)
		ck_assert_str_eq(m->name[i], want[i]);
	ck_assert(has_file(m, "/usr/lib/python3/json/__init__.py"));
	ck_assert(has_file(m, "/usr/lib/python3/json/decoder.py"));
	ck_assert(has_file(m, "/app/main.py"));
	ck_assert(has_file(m, "/app/caf\xc3\xa9.py"));	/* latin-1 -> UTF-8 */
	ck_assert(has_file(m, "rel/sub_only/x.py"));
	ck_assert(has_file(m, "/app/bad-name.py"));	/* a file is a file */
	ck_assert_uint_eq(m->n_files, 6);
	mods_clear(m);
	free(m);
	sb_pyproc_free(p);
	free(f.ar.a);
}
END_TEST

enum {
	P_HEAD_NULL, P_INTERP_LOOP, P_LOG2_HUGE, P_INDEX_BYTES, P_KIND_SPLIT, P_NENTRIES_HUGE,
	P_USED_GT, P_SPLIT_VALUES, P_KEYS_KERNEL, P_KEY_HUGE, P_KEY_NOT_STR, P_KEY_NEWLINE,
	P_FILE_HUGE, P_FILE_NOT_STR, P_MDDICT_SELF, P_MDDICT_MODULES, P_MODULES_UNMAPPED, P_COUNT
};

START_TEST(read_adversarial)
{
	for (int patch = 0; patch < P_COUNT; patch++) {
		struct sb_pymodules *m = mods_new();
		struct sb_pyproc *p;
		struct fake f;
		int rc;

		fk_init(&f, _i, false);
		const struct sb_pylayout *l = &f.ar.l;
		uint8_t *kb = (uint8_t *)(uintptr_t)f.keys;
		switch (patch) {
		case P_HEAD_NULL:
			put64(f.runtime, l->rt_interpreters_head, 0);
			break;
		case P_INTERP_LOOP:
			put64(f.interp2, l->is_next, f.interp);
			break;
		case P_LOG2_HUGE:
			kb[8] = 60;
			kb[9] = 62;
			break;
		case P_INDEX_BYTES:
			kb[9] = (uint8_t)(kb[9] + 1);
			break;
		case P_KIND_SPLIT:
			kb[10] = 2;
			break;
		case P_NENTRIES_HUGE:
			put64(f.keys, 24, UINT64_C(1) << 40);
			break;
		case P_USED_GT:
			put64(f.modules, 16, 1000);
			break;
		case P_SPLIT_VALUES:
			put64(f.modules, f.ml.dict_ma_values, f.keys);
			break;
		case P_KEYS_KERNEL:
			put64(f.modules, f.ml.dict_ma_keys, UINT64_C(0xffff880000001000));
			break;
		case P_KEY_HUGE:
			put64(f.pkg_key, l->str_length, UINT64_C(1) << 40);
			break;
		case P_KEY_NOT_STR:
			put32(f.pkg_key, l->str_state, 0);
			break;
		case P_KEY_NEWLINE:
			((char *)(uintptr_t)f.pkg_key)[l->str_ascii_data + 1] = '\n';
			break;
		case P_FILE_HUGE:
			put64(f.json_file, l->str_length, UINT64_C(1) << 40);
			break;
		case P_FILE_NOT_STR:
			put32(f.json_file, l->str_state, 7u << 2);
			break;
		case P_MDDICT_SELF:
			put64(f.json_mod, f.ml.md_dict, f.json_mod);
			break;
		case P_MDDICT_MODULES:
			put64(f.json_mod, f.ml.md_dict, f.modules);	/* sys.modules as a module dict */
			break;
		case P_MODULES_UNMAPPED:
			put64(f.interp, f.ml.is_modules, 0x1000);
			break;
		}
		p = fk_proc_new(&f.ar, f.runtime);
		rc = sb_pyproc_modules(p, m);
		check_sane(m);
		switch (patch) {
		case P_HEAD_NULL:
			ck_assert_int_eq(rc, -EAGAIN);
			ck_assert_uint_eq(m->n, 0);
			break;
		case P_INTERP_LOOP:
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(m->interps, 2);
			break;
		case P_USED_GT:
			/* the first interpreter's table looks half-updated every time */
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(m->interps, 1);
			ck_assert_uint_eq(m->n, 1);
			ck_assert_str_eq(m->name[0], "sub_only");
			break;
		case P_LOG2_HUGE:
		case P_INDEX_BYTES:
		case P_KIND_SPLIT:
		case P_NENTRIES_HUGE:
		case P_SPLIT_VALUES:
		case P_KEYS_KERNEL:
		case P_MODULES_UNMAPPED:
			/* the main interpreter's table is refused, the other one read */
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(m->interps, 1);
			ck_assert_uint_eq(m->n, 1);
			break;
		case P_KEY_HUGE:
			/* only the leading components that were read whole count: none */
		case P_KEY_NOT_STR:
		case P_KEY_NEWLINE:
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(m->n, 5);
			for (size_t i = 0; i < m->n; i++)
				ck_assert_str_ne(m->name[i], "pkg");
			break;
		case P_FILE_HUGE:
		case P_FILE_NOT_STR:
		case P_MDDICT_SELF:
		case P_MDDICT_MODULES:
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(m->n, 6);
			ck_assert(!has_file(m, "/usr/lib/python3/json/__init__.py"));
			ck_assert_uint_eq(m->n_files, 5);
			break;
		}
		mods_clear(m);
		free(m);
		sb_pyproc_free(p);
		free(f.ar.a);
	}
}
END_TEST

/* A long dotted name keeps its top-level part; a top-level part too long
 * for a rule is dropped. */
START_TEST(read_long_names)
{
	char longname[400], toolong[300];
	uint64_t keys[2], values[2];
	struct sb_pymodules *m = mods_new();
	struct sb_pyproc *p;
	struct fake f;

	fk_init(&f, _i, false);
	memset(longname, 0, sizeof(longname));
	strcpy(longname, "deep");
	while (strlen(longname) < 380)
		strcat(longname, ".component");
	memset(toolong, 'x', sizeof(toolong) - 1);
	toolong[sizeof(toolong) - 1] = '\0';
	keys[0] = fk_str(&f.ar, longname);
	values[0] = fk_str(&f.ar, "v");
	keys[1] = fk_str(&f.ar, toolong);
	values[1] = fk_str(&f.ar, "v");
	put64(f.interp2, f.ml.is_modules, fk_dict(&f, keys, values, 2, false, NULL));
	p = fk_proc_new(&f.ar, f.runtime);
	ck_assert_int_eq(sb_pyproc_modules(p, m), 0);
	check_sane(m);
	ck_assert_uint_eq(m->n, 6);	/* 5 of the main interpreter + "deep" */
	ck_assert_str_eq(m->name[2], "deep");
	mods_clear(m);
	free(m);
	sb_pyproc_free(p);
	free(f.ar.a);
}
END_TEST

/* Random corruption: 1-4 words or bytes anywhere in the forged objects. */
START_TEST(read_fuzz)
{
	struct sb_pymodules *m = mods_new();
	struct sb_pyproc *p;
	struct fake f;
	uint8_t *pristine;

	fk_init(&f, _i / 2, _i % 2);
	pristine = fk_snapshot(&f.ar);
	p = fk_proc_new(&f.ar, f.runtime);
	rng_state = 0x51ed270b1u + (uint64_t)_i;
	for (int round = 0; round < 400; round++) {
		int rc;

		fk_corrupt(&f.ar, pristine, rnd, &f.modules, 1);
		rc = sb_pyproc_modules(p, m);
		ck_assert_msg(rc == 0 || rc == -EINVAL || rc == -EFAULT || rc == -EAGAIN || rc == -ENOENT,
			      "rc %d", rc);
		check_sane(m);
		mods_clear(m);
	}
	free(m);
	sb_pyproc_free(p);
	free(pristine);
	free(f.ar.a);
}
END_TEST

/* ---- real processes ---- */

START_TEST(not_python)
{
	struct sb_pymodules *m = (struct sb_pymodules *)1;

	/* This test program is not Python. */
	ck_assert_int_eq(sb_pymodules_read(getpid(), &m), -ENOENT);
	ck_assert_ptr_null(m);
	ck_assert_int_lt(sb_pymodules_read(999999999, &m), 0);
	ck_assert_ptr_null(m);
	sb_pymodules_free(NULL);
}
END_TEST

/* The Debian interpreter, waiting on stdin after its imports. */
START_TEST(real_python)
{
	static const char prog[] = "import colorsys, json.decoder, sys; print('R', flush=True); sys.stdin.read()";
	const char *py = "/usr/bin/python3";
	struct sb_pymodules *m = NULL;
	int in[2], out[2], status;
	bool json = false, colorsys = false, sys_mod = false;
	char c;
	pid_t pid;

	if (access(py, X_OK) != 0)
		return;	/* reported by the integration tests, which require it */
	ck_assert_int_eq(pipe(in), 0);
	ck_assert_int_eq(pipe(out), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);	/* stdin ends when the test closes its end */
		close(out[0]);
		execl(py, py, "-S", "-c", prog, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	ck_assert_int_eq(read(out[0], &c, 1), 1);
	ck_assert_int_eq(sb_pymodules_read(pid, &m), 0);
	close(in[1]);
	close(out[0]);
	waitpid(pid, &status, 0);
	check_sane(m);
	ck_assert_uint_ge(m->interps, 1);
	for (size_t i = 0; i < m->n; i++) {
		json |= !strcmp(m->name[i], "json");
		colorsys |= !strcmp(m->name[i], "colorsys");
		sys_mod |= !strcmp(m->name[i], "sys");
	}
	ck_assert(json && colorsys && sys_mod);
	/* colorsys.py and json/decoder.py, read from the stdlib */
	bool file = false;
	for (size_t i = 0; i < m->n_files; i++)
		file |= strstr(m->file[i], "/json/decoder.py") != NULL;
	ck_assert(file);
	sb_pymodules_free(m);
}
END_TEST

static Suite *pymodules_suite(void)
{
	Suite *s = suite_create("pymodules");
	TCase *t;

	t = tcase_create("layouts");
	tcase_add_test(t, valid_names);
	tcase_add_loop_test(t, layout_from_blob, 0, 2);
	tcase_add_test(t, layout_builtin);
	suite_add_tcase(s, t);

	/* loop index: layout 3.11, 3.12, 3.13, 3.14 (x2: unicode, general keys) */
	t = tcase_create("forged");
	tcase_set_timeout(t, 60);
	tcase_add_loop_test(t, read_forged, 0, 8);
	tcase_add_loop_test(t, read_adversarial, 0, 4);
	tcase_add_loop_test(t, read_long_names, 0, 4);
	tcase_add_loop_test(t, read_fuzz, 0, 8);
	suite_add_tcase(s, t);

	t = tcase_create("processes");
	tcase_set_timeout(t, 30);
	tcase_add_test(t, not_python);
	tcase_add_test(t, real_python);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pymodules_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
