/* CPython layout descriptors; see pyversion.h.
 *
 * The 3.11 and 3.12 numbers mirror offsetof() over the interpreter's own
 * internal headers (-DPy_BUILD_CORE), checked against Debian 3.11.2, pyenv
 * 3.11.7 and 3.12.1 (doc/attribution.md says how to regenerate them); x86-64
 * and aarch64 share them (LP64, same alignment rules). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "pyversion.h"

#define NONE SB_PYOFF_NONE

static const struct sb_pylayout layout_311 = {
	.rt_finalizing = 24, .rt_interpreters_head = 40,
	.is_next = 0, .is_threads_head = 16,
	.ts_prev = 0, .ts_next = 8, .ts_interp = 16, .ts_thread_id = 152, .ts_native_thread_id = 160,
	.ts_datastack_chunk = 296, .ts_cframe = 56, .cframe_current_frame = 8,
	.ts_current_frame = NONE,
	.fr_size = 80, .fr_previous = 48, .fr_code = 32, .fr_instr = 56, .fr_owner = 69,
	.fr_localsplus = 72, .fr_is_entry = 68, .instr_is_prev = true,
	.owner_shim = 0, .owner_generator = 1, .tag_mask = 0,
	.co_firstlineno = 72, .co_localsplusnames = 96, .co_filename = 112, .co_name = 120,
	.co_qualname = 128, .co_linetable = 136, .co_code_adaptive = 184,
	.ob_type = 8, .tuple_size = 16, .tuple_item = 24, .bytes_size = 16, .bytes_sval = 32,
	.str_length = 16, .str_state = 32, .str_ascii_data = 48, .str_compact_data = 72,
};

static const struct sb_pylayout layout_312 = {
	.rt_finalizing = 24, .rt_interpreters_head = 40,
	.is_next = 0, .is_threads_head = 72,
	.ts_prev = 0, .ts_next = 8, .ts_interp = 16, .ts_thread_id = 136, .ts_native_thread_id = 144,
	.ts_datastack_chunk = 232, .ts_cframe = 56, .cframe_current_frame = 0,
	.ts_current_frame = NONE,
	.fr_size = 80, .fr_previous = 8, .fr_code = 0, .fr_instr = 56, .fr_owner = 70,
	.fr_localsplus = 72, .fr_is_entry = NONE, .instr_is_prev = true,
	.owner_shim = 3, .owner_generator = 1, .tag_mask = 0,
	.co_firstlineno = 68, .co_localsplusnames = 96, .co_filename = 112, .co_name = 120,
	.co_qualname = 128, .co_linetable = 136, .co_code_adaptive = 192,
	.ob_type = 8, .tuple_size = 16, .tuple_item = 24, .bytes_size = 16, .bytes_sval = 32,
	.str_length = 16, .str_state = 32, .str_ascii_data = 40, .str_compact_data = 56,
};

static int check_fits(struct sb_pylayout *l);

int sb_pylayout_builtin(uint32_t version, struct sb_pylayout *out)
{
	const struct sb_pylayout *l;

	if (sb_pyversion_major(version) != 3)
		return -ENOENT;
	switch (sb_pyversion_minor(version)) {
	case 11:
		l = &layout_311;
		break;
	case 12:
		l = &layout_312;
		break;
	default:
		return -ENOENT;
	}
	*out = *l;
	out->version = version;
	out->minor = sb_pyversion_minor(version);
	out->from_debug_offsets = false;
	return check_fits(out);
}

/* ---- _Py_DebugOffsets ----
 * After the 8-byte cookie the blob is a flat array of u64: version,
 * free_threaded, then groups.  A sized group starts with its struct size.
 * The order changes between minors, so each known minor has its own list. */

struct dbg_group {
	const char *name;
	bool sized;
	const char *fields;	/* space-separated, in blob order */
};

static const struct dbg_group dbg_313[] = {
	{ "runtime_state", true, "finalizing interpreters_head" },
	{ "interpreter_state", true, "id next threads_head gc imports_modules sysdict builtins ceval_gil "
	  "gil_runtime_state gil_runtime_state_enabled gil_runtime_state_locked gil_runtime_state_holder" },
	{ "thread_state", true, "prev next interp current_frame thread_id native_thread_id datastack_chunk status" },
	{ "interpreter_frame", true, "previous executable instr_ptr localsplus owner" },
	{ "code_object", true, "filename name qualname linetable firstlineno argcount localsplusnames "
	  "localspluskinds co_code_adaptive" },
	{ "pyobject", true, "ob_type" },
	{ "type_object", true, "tp_name tp_repr tp_flags" },
	{ "tuple_object", true, "ob_item ob_size" },
	{ "list_object", true, "ob_item ob_size" },
	{ "dict_object", true, "ma_keys ma_values" },
	{ "float_object", true, "ob_fval" },
	{ "long_object", true, "lv_tag ob_digit" },
	{ "bytes_object", true, "ob_size ob_sval" },
	{ "unicode_object", true, "state length asciiobject_size" },
	{ "gc", true, "collecting" },
	{ NULL, false, NULL },
};

static const struct dbg_group dbg_314[] = {
	{ "runtime_state", true, "finalizing interpreters_head" },
	{ "interpreter_state", true, "id next threads_head threads_main gc imports_modules sysdict builtins "
	  "ceval_gil gil_runtime_state gil_runtime_state_enabled gil_runtime_state_locked "
	  "gil_runtime_state_holder code_object_generation tlbc_generation" },
	{ "thread_state", true, "prev next interp current_frame thread_id native_thread_id datastack_chunk status" },
	{ "interpreter_frame", true, "previous executable instr_ptr localsplus owner stackpointer tlbc_index" },
	{ "code_object", true, "filename name qualname linetable firstlineno argcount localsplusnames "
	  "localspluskinds co_code_adaptive co_tlbc" },
	{ "pyobject", true, "ob_type" },
	{ "type_object", true, "tp_name tp_repr tp_flags" },
	{ "tuple_object", true, "ob_item ob_size" },
	{ "list_object", true, "ob_item ob_size" },
	{ "set_object", true, "used table mask" },
	{ "dict_object", true, "ma_keys ma_values" },
	{ "float_object", true, "ob_fval" },
	{ "long_object", true, "lv_tag ob_digit" },
	{ "bytes_object", true, "ob_size ob_sval" },
	{ "unicode_object", true, "state length asciiobject_size" },
	{ "gc", true, "collecting" },
	{ "gen_object", true, "gi_name gi_iframe gi_frame_state" },
	{ "llist_node", false, "next prev" },
	{ "debugger_support", false, "eval_breaker remote_debugger_support remote_debugging_enabled "
	  "debugger_pending_call debugger_script_path debugger_script_path_size" },
	{ NULL, false, NULL },
};

/* Does the space-separated list `fields` contain `f` at position *pos? */
static bool field_at(const char *fields, const char *f, unsigned *pos)
{
	size_t flen = strlen(f);
	unsigned i = 0;

	for (const char *p = fields; *p; i++) {
		const char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == flen && memcmp(p, f, len) == 0) {
			*pos = i;
			return true;
		}
		p += len;
		while (*p == ' ')
			p++;
	}
	return false;
}

static unsigned count_fields(const char *fields)
{
	unsigned n = 0;

	for (const char *p = fields; *p; p++)
		n += (p == fields || p[-1] == ' ') && *p != ' ';
	return n;
}

/* Word index (in the u64 array after the cookie) of group.field, where
 * field may be "size".  -1 if unknown. */
static int dbg_index(const struct dbg_group *g, const char *group, const char *field)
{
	unsigned w = 2;	/* version, free_threaded */

	for (; g->name; g++) {
		unsigned pos;
		if (strcmp(g->name, group) == 0) {
			if (strcmp(field, "size") == 0)
				return g->sized ? (int)w : -1;
			if (!field_at(g->fields, field, &pos))
				return -1;
			return (int)(w + g->sized + pos);
		}
		w += g->sized + count_fields(g->fields);
	}
	return -1;
}

static unsigned dbg_words(const struct dbg_group *g)
{
	unsigned w = 2;

	for (; g->name; g++)
		w += g->sized + count_fields(g->fields);
	return w;
}

struct dbg_ctx {
	const struct dbg_group *groups;
	const unsigned char *blob;
	size_t len;
	int err;
};

static uint64_t word(const struct dbg_ctx *c, int idx)
{
	uint64_t v;

	memcpy(&v, c->blob + 8 + (size_t)idx * 8, sizeof(v));
	return v;
}

/* Fetch group.field, checking that a field of `width` bytes lies inside the
 * group's struct and that the struct size is sane.  Errors stick in c->err. */
static uint32_t dbg_field(struct dbg_ctx *c, const char *group, const char *field, unsigned width)
{
	int fi = dbg_index(c->groups, group, field), si = dbg_index(c->groups, group, "size");
	uint64_t off, size;

	if (fi < 0 || si < 0) {
		c->err = -EINVAL;
		return NONE;
	}
	off = word(c, fi);
	size = word(c, si);
	if (size == 0 || size > SB_PYLAYOUT_MAX_STRUCT || off > size || width > size - off) {
		c->err = -EINVAL;
		return NONE;
	}
	return (uint32_t)off;
}

static uint32_t dbg_size(struct dbg_ctx *c, const char *group)
{
	int si = dbg_index(c->groups, group, "size");
	uint64_t size = si < 0 ? 0 : word(c, si);

	if (size == 0 || size > SB_PYLAYOUT_MAX_STRUCT) {
		c->err = -EINVAL;
		return NONE;
	}
	return (uint32_t)size;
}

static void fill_from_debug(struct dbg_ctx *c, struct sb_pylayout *l)
{
	l->rt_finalizing = dbg_field(c, "runtime_state", "finalizing", 8);
	l->rt_interpreters_head = dbg_field(c, "runtime_state", "interpreters_head", 8);
	l->is_next = dbg_field(c, "interpreter_state", "next", 8);
	l->is_threads_head = dbg_field(c, "interpreter_state", "threads_head", 8);
	l->ts_prev = dbg_field(c, "thread_state", "prev", 8);
	l->ts_next = dbg_field(c, "thread_state", "next", 8);
	l->ts_interp = dbg_field(c, "thread_state", "interp", 8);
	l->ts_current_frame = dbg_field(c, "thread_state", "current_frame", 8);
	l->ts_thread_id = dbg_field(c, "thread_state", "thread_id", 8);
	l->ts_native_thread_id = dbg_field(c, "thread_state", "native_thread_id", 8);
	l->ts_datastack_chunk = dbg_field(c, "thread_state", "datastack_chunk", 8);
	l->ts_cframe = NONE;
	l->cframe_current_frame = NONE;
	l->fr_size = dbg_size(c, "interpreter_frame");
	l->fr_previous = dbg_field(c, "interpreter_frame", "previous", 8);
	l->fr_code = dbg_field(c, "interpreter_frame", "executable", 8);
	l->fr_instr = dbg_field(c, "interpreter_frame", "instr_ptr", 8);
	l->fr_owner = dbg_field(c, "interpreter_frame", "owner", 1);
	/* localsplus is a flexible array member: it may equal the size. */
	l->fr_localsplus = dbg_field(c, "interpreter_frame", "localsplus", 0);
	l->fr_is_entry = NONE;
	l->co_filename = dbg_field(c, "code_object", "filename", 8);
	l->co_name = dbg_field(c, "code_object", "name", 8);
	l->co_qualname = dbg_field(c, "code_object", "qualname", 8);
	l->co_linetable = dbg_field(c, "code_object", "linetable", 8);
	l->co_firstlineno = dbg_field(c, "code_object", "firstlineno", 4);
	l->co_localsplusnames = dbg_field(c, "code_object", "localsplusnames", 8);
	l->co_code_adaptive = dbg_field(c, "code_object", "co_code_adaptive", 0);
	l->ob_type = dbg_field(c, "pyobject", "ob_type", 8);
	l->tuple_item = dbg_field(c, "tuple_object", "ob_item", 0);
	l->tuple_size = dbg_field(c, "tuple_object", "ob_size", 8);
	l->bytes_size = dbg_field(c, "bytes_object", "ob_size", 8);
	l->bytes_sval = dbg_field(c, "bytes_object", "ob_sval", 0);
	l->str_state = dbg_field(c, "unicode_object", "state", 4);
	l->str_length = dbg_field(c, "unicode_object", "length", 8);
	l->str_ascii_data = dbg_field(c, "unicode_object", "asciiobject_size", 0);
}

static uint32_t max_end(const uint32_t *off, size_t n, uint32_t width)
{
	uint32_t end = 0;

	for (size_t i = 0; i < n; i++)
		if (off[i] != NONE && off[i] + width > end)
			end = off[i] + width;
	return end;
}

#define MAX_END(width, ...) \
	max_end((const uint32_t[]){ __VA_ARGS__ }, sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t), (width))

/* The reader fetches a tstate, a frame and a code-object header each in one
 * read of a bounded size: every field it uses must lie inside that read. */
static int check_fits(struct sb_pylayout *l)
{
	l->ts_read = MAX_END(8, l->ts_prev, l->ts_next, l->ts_interp, l->ts_current_frame, l->ts_thread_id,
			     l->ts_native_thread_id, l->ts_datastack_chunk, l->ts_cframe);
	if (l->ts_read > SB_PYLAYOUT_MAX_TSTATE)
		return -EINVAL;
	if (l->fr_size > SB_PYLAYOUT_MAX_FRAME || l->fr_localsplus > l->fr_size ||
	    MAX_END(8, l->fr_previous, l->fr_code, l->fr_instr) > l->fr_size ||
	    MAX_END(1, l->fr_owner, l->fr_is_entry) > l->fr_size)
		return -EINVAL;
	if (l->co_code_adaptive > SB_PYLAYOUT_MAX_CODE_HDR ||
	    MAX_END(8, l->ob_type, l->co_filename, l->co_name, l->co_qualname, l->co_linetable,
		    l->co_localsplusnames) > l->co_code_adaptive ||
	    l->co_firstlineno + 4 > l->co_code_adaptive)
		return -EINVAL;
	if (l->str_ascii_data > 256 || MAX_END(8, l->ob_type, l->str_length) > l->str_ascii_data ||
	    l->str_state + 4 > l->str_ascii_data)
		return -EINVAL;
	if (l->bytes_sval > 256 || l->bytes_size + 8 > l->bytes_sval || l->tuple_item > 256 ||
	    l->tuple_size + 8 > l->tuple_item)
		return -EINVAL;
	return 0;
}

int sb_pylayout_from_debug_offsets(const void *blob, size_t len, uint32_t py_version,
				   struct sb_pylayout *out)
{
	struct dbg_ctx c = { .blob = blob, .len = len };
	uint64_t version, free_threaded;
	unsigned minor;

	if (len < 8 + 16 || memcmp(blob, "xdebugpy", 8) != 0)
		return -EINVAL;
	memcpy(&version, c.blob + 8, 8);
	memcpy(&free_threaded, c.blob + 16, 8);
	if (version > UINT32_MAX || sb_pyversion_major((uint32_t)version) != 3)
		return -EINVAL;
	minor = sb_pyversion_minor((uint32_t)version);
	if (py_version && (sb_pyversion_major(py_version) != 3 || sb_pyversion_minor(py_version) != minor))
		return -ESTALE;
	if (free_threaded != 0)
		return -ENOTSUP;
	if (minor == 13)
		c.groups = dbg_313;
	else if (minor == 14)
		c.groups = dbg_314;
	else
		return minor < 13 ? -EINVAL : -ENOTSUP;
	if (len < 8 + (size_t)dbg_words(c.groups) * 8)
		return -EINVAL;

	memset(out, 0, sizeof(*out));
	out->version = (uint32_t)version;
	out->minor = minor;
	out->from_debug_offsets = true;
	fill_from_debug(&c, out);
	if (c.err)
		return c.err;
	/* Not exported by the blob; fixed per minor (python-frames.md §5). */
	out->str_compact_data = out->str_ascii_data + 16;	/* utf8_length + utf8 */
	out->instr_is_prev = false;
	out->owner_shim = 3;		/* 3.13 CSTACK; 3.14 INTERPRETER(3), CSTACK(4) */
	out->owner_generator = 1;
	out->tag_mask = minor >= 14 ? 3 : 0;
	return check_fits(out);
}
