/* libFuzzer target: the ELF reader the frame walker uses to find _PyRuntime,
 * Py_Version and PyCode_Type in a python executable or libpython
 * (tracer/sbelf.h), on a hostile file.
 *
 * Input: one control byte, then the file.  With bit 0 of the control byte
 * the ELF identification, machine, type and header entry sizes are set to
 * valid values first, so that the mutations reach the program headers,
 * notes, section headers, string tables and symbol tables instead of dying
 * at the magic.  The file is a fresh memfd for every input (the reader's
 * cache is keyed by file identity).
 *
 * Promises checked: 0 or a negative errno (-ENOEXEC, -ENOENT, a read error); on
 * success a runtime address and a type of ET_EXEC or ET_DYN, a build-id no
 * longer than its buffer; asking again (the cache, which re-reads the
 * build-id) gives the same answer; nothing is read or written out of bounds
 * (ASan), and every count read from the file is bounded (time-out). */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "sbelf.h"

static void repair_header(uint8_t *file, size_t n, uint8_t ctl)
{
	Elf64_Ehdr eh;

	if (n < sizeof(eh))
		return;
	memcpy(&eh, file, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
#if defined(__x86_64__)
	eh.e_machine = EM_X86_64;
#elif defined(__aarch64__)
	eh.e_machine = EM_AARCH64;
#endif
	eh.e_type = ctl & 2 ? ET_EXEC : ET_DYN;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	memcpy(file, &eh, sizeof(eh));
}

static bool same_syms(const struct sb_elf_syms *a, const struct sb_elf_syms *b)
{
	return a->type == b->type && a->load_vaddr == b->load_vaddr && a->runtime == b->runtime &&
	       a->runtime_from_section == b->runtime_from_section && a->py_version == b->py_version &&
	       a->code_type == b->code_type && a->needs_libpython == b->needs_libpython &&
	       a->build_id_len == b->build_id_len && memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fin f = { data, size };
	uint8_t ctl = fin_u8(&f);
	struct sb_elf_syms s, again;
	size_t n = f.n;
	uint8_t *file = malloc(n ? n : 1);
	int fd, rc, rc2;

	if (!file)
		abort();
	memcpy(file, f.p, n);
	if (ctl & 1)
		repair_header(file, n, ctl);
	fd = memfd_create("fuzz_elf", MFD_CLOEXEC);
	if (fd < 0 || (n && write(fd, file, n) != (ssize_t)n))
		abort();
	free(file);

	rc = sb_elf_python_syms(fd, &s);
	/* -ENOEXEC and -ENOENT as documented, or the error of a read the file's
	 * offsets made impossible (-EINVAL for a negative offset...). */
	FUZZ_CHECK(rc <= 0 && rc > -4096);
	if (rc == 0) {
		FUZZ_CHECK(s.runtime != 0);
		FUZZ_CHECK(s.type == ET_EXEC || s.type == ET_DYN);
	}
	if (rc == 0 || rc == -ENOENT) {
		FUZZ_CHECK(s.build_id_len <= sizeof(s.build_id));
		(void)sb_elf_runtime_addr(&s, 0x7f0000000000u, s.runtime);
	}
	if (rc != -ENOMEM) {
		rc2 = sb_elf_python_syms(fd, &again);
		FUZZ_CHECK(rc2 == rc);
		if (rc == 0 || rc == -ENOENT)
			FUZZ_CHECK(same_syms(&s, &again));
	}
	close(fd);
	return 0;
}
