/* The few ELF facts the frame reader needs from a python executable or
 * libpython: where _PyRuntime, Py_Version and PyCode_Type live, and how to
 * turn a link-time address into a run-time one.  Parsed once per build
 * (cache keyed by file identity and GNU build-id); every count and size read
 * from the file is bounded, the file may be hostile. */
#ifndef SB_TRACER_SBELF_H
#define SB_TRACER_SBELF_H

#include <stdbool.h>
#include <stdint.h>

struct sb_elf_syms {
	uint16_t type;			/* ET_EXEC or ET_DYN */
	uint64_t load_vaddr;		/* first PT_LOAD p_vaddr, rounded down to p_align */
	uint64_t runtime;		/* _PyRuntime (link-time address), 0 = none */
	bool runtime_from_section;	/* runtime is the .PyRuntime section start */
	uint64_t py_version;		/* &Py_Version, 0 = none (3.10 and older) */
	uint64_t code_type;		/* &PyCode_Type, 0 = none */
	bool needs_libpython;		/* .dynstr names a libpython (shared build) */
	uint8_t build_id[32];
	unsigned build_id_len;
};

/* Parse fd (an opened ELF file).  -ENOEXEC: not a 64-bit ELF of this
 * machine; -ENOENT: no _PyRuntime by symbol or section. */
int sb_elf_python_syms(int fd, struct sb_elf_syms *out);

/* Link-time address -> run-time address, given where the file's offset-0
 * mapping starts in the process. */
uint64_t sb_elf_runtime_addr(const struct sb_elf_syms *s, uint64_t map_start, uint64_t link_addr);

#endif
