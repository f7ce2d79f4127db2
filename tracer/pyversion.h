/* Layout descriptors of the CPython structures the frame reader touches
 * (c-style-anchors §8 habit 11): one descriptor, filled from a built-in table
 * for 3.11 and 3.12 and from the target's own _Py_DebugOffsets for 3.13+.
 * Offsets are bytes from the start of the object; SB_PYOFF_NONE marks a
 * field the version does not have. */
#ifndef SB_TRACER_PYVERSION_H
#define SB_TRACER_PYVERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SB_PYOFF_NONE UINT32_MAX

/* Upper bound of any struct size we accept (pystack's rule). */
#define SB_PYLAYOUT_MAX_STRUCT (1u << 20)
/* How many header bytes of a code object / frame / tstate we read at most. */
#define SB_PYLAYOUT_MAX_CODE_HDR 512
#define SB_PYLAYOUT_MAX_FRAME 256
#define SB_PYLAYOUT_MAX_TSTATE 1024

struct sb_pylayout {
	uint32_t version;		/* PY_VERSION_HEX of the target */
	unsigned minor;			/* 3.minor */
	bool from_debug_offsets;

	/* _PyRuntimeState */
	uint32_t rt_finalizing, rt_interpreters_head;
	/* PyInterpreterState */
	uint32_t is_next, is_threads_head;
	/* PyThreadState */
	uint32_t ts_prev, ts_next, ts_interp, ts_native_thread_id, ts_thread_id, ts_datastack_chunk;
	uint32_t ts_cframe;		/* 3.11/3.12: tstate->cframe, else NONE */
	uint32_t cframe_current_frame;	/* ... ->current_frame inside _PyCFrame */
	uint32_t ts_current_frame;	/* 3.13+: tstate->current_frame, else NONE */
	uint32_t ts_read;		/* bytes of a tstate to read (covers all of the above) */

	/* _PyInterpreterFrame */
	uint32_t fr_size, fr_previous, fr_code, fr_instr, fr_owner, fr_localsplus;
	uint32_t fr_is_entry;		/* 3.11 only */
	bool instr_is_prev;		/* 3.11/3.12: prev_instr (index - 1), else instr_ptr */
	unsigned owner_shim;		/* owner >= this: C-stack shim frame; 0: no such owner */
	unsigned owner_generator;	/* FRAME_OWNED_BY_GENERATOR */
	uint64_t tag_mask;		/* _PyStackRef tag bits (3.14: 3), 0 before */

	/* PyCodeObject */
	uint32_t co_firstlineno, co_localsplusnames, co_filename, co_name, co_qualname, co_linetable;
	uint32_t co_code_adaptive;	/* first code unit; also the header bytes we read */

	/* Objects */
	uint32_t ob_type;
	uint32_t tuple_size, tuple_item;
	uint32_t bytes_size, bytes_sval;
	uint32_t str_length, str_state, str_ascii_data, str_compact_data;
};

/* Built-in table for PY_VERSION_HEX `version`.  -ENOENT for a version that
 * has no built-in table (older than 3.11, or 3.13+ which must use debug
 * offsets). */
int sb_pylayout_builtin(uint32_t version, struct sb_pylayout *out);

/* Parse a _Py_DebugOffsets blob (len bytes read from &_PyRuntime) of a
 * target whose Py_Version is py_version (0 = unknown: trust the blob's own
 * version).  Knows the 3.13 and 3.14 field orders.
 *   -EINVAL   bad cookie, sizes or offsets out of range
 *   -ESTALE   blob version disagrees with Py_Version
 *   -ENOTSUP  free-threaded build, or a minor version whose order we do
 *             not know (3.15+) */
int sb_pylayout_from_debug_offsets(const void *blob, size_t len, uint32_t py_version,
				   struct sb_pylayout *out);

/* Bytes of _Py_DebugOffsets to read for parsing (largest known layout). */
#define SB_PY_DEBUG_OFFSETS_MAX 1024

static inline unsigned sb_pyversion_minor(uint32_t v)
{
	return (v >> 16) & 0xff;
}

static inline unsigned sb_pyversion_major(uint32_t v)
{
	return v >> 24;
}

#endif
