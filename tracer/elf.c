/* ELF symbol lookup for the CPython runtime; see elf.h. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbelf.h"

#if defined(__x86_64__)
# define SB_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
# define SB_ELF_MACHINE EM_AARCH64
#else
# error "tracer/elf.c: unsupported architecture"
#endif

#define SB_ELF_MAX_PHDRS 256
#define SB_ELF_MAX_SHDRS 4096
#define SB_ELF_MAX_STRTAB (16u << 20)	/* larger string tables are ignored */
#define SB_ELF_MAX_SYMS (1u << 21)
#define SB_ELF_SYM_BATCH 256
#define SB_ELF_CACHE 8

static int file_read(int fd, uint64_t off, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ENOEXEC;
		done += (size_t)r;
	}
	return 0;
}

struct elf_file {
	int fd;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;		/* owned, eh.e_shnum entries (0 if no sections) */
	size_t nsh;
};

static int read_ehdr(struct elf_file *f)
{
	int rc = file_read(f->fd, 0, &f->eh, sizeof(f->eh));

	if (rc < 0)
		return rc;
	if (memcmp(f->eh.e_ident, ELFMAG, SELFMAG) != 0 || f->eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    f->eh.e_ident[EI_DATA] != ELFDATA2LSB || f->eh.e_machine != SB_ELF_MACHINE ||
	    (f->eh.e_type != ET_EXEC && f->eh.e_type != ET_DYN))
		return -ENOEXEC;
	if (f->eh.e_phentsize != sizeof(Elf64_Phdr) || f->eh.e_phnum == 0 ||
	    f->eh.e_phnum > SB_ELF_MAX_PHDRS)
		return -ENOEXEC;
	return 0;
}

static void take_build_id(int fd, const Elf64_Phdr *ph, struct sb_elf_syms *out)
{
	unsigned char buf[1024];
	size_t len = ph->p_filesz < sizeof(buf) ? ph->p_filesz : sizeof(buf);
	size_t pos = 0;

	if (file_read(fd, ph->p_offset, buf, len) < 0)
		return;
	/* Notes are 4-byte aligned {namesz, descsz, type, name, desc}. */
	while (pos + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		size_t name_at, desc_at, next;

		memcpy(&nh, buf + pos, sizeof(nh));
		name_at = pos + sizeof(nh);
		desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
		next = desc_at + ((nh.n_descsz + 3u) & ~3u);
		if (nh.n_namesz > len || nh.n_descsz > len || next > len)
			return;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(buf + name_at, "GNU", 4) == 0 && nh.n_descsz <= sizeof(out->build_id)) {
			memcpy(out->build_id, buf + desc_at, nh.n_descsz);
			out->build_id_len = nh.n_descsz;
			return;
		}
		pos = next;
	}
}

static int read_phdrs(struct elf_file *f, struct sb_elf_syms *out)
{
	Elf64_Phdr ph[SB_ELF_MAX_PHDRS];
	bool have_load = false;
	int rc = file_read(f->fd, f->eh.e_phoff, ph, f->eh.e_phnum * sizeof(Elf64_Phdr));

	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < f->eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !have_load) {
			uint64_t align = ph[i].p_align ? ph[i].p_align : 1;
			if (align & (align - 1))
				return -ENOEXEC;
			out->load_vaddr = ph[i].p_vaddr & ~(align - 1);
			have_load = true;
		} else if (ph[i].p_type == PT_NOTE && out->build_id_len == 0) {
			take_build_id(f->fd, &ph[i], out);
		}
	}
	return have_load ? 0 : -ENOEXEC;
}

static int read_shdrs(struct elf_file *f)
{
	size_t n = f->eh.e_shnum;

	if (n == 0 || f->eh.e_shoff == 0)
		return 0;	/* fully stripped of sections: symbols only from .dynamic, unsupported */
	if (f->eh.e_shentsize != sizeof(Elf64_Shdr) || n > SB_ELF_MAX_SHDRS)
		return -ENOEXEC;
	f->sh = calloc(n, sizeof(Elf64_Shdr));
	if (!f->sh)
		return -ENOMEM;
	f->nsh = n;
	return file_read(f->fd, f->eh.e_shoff, f->sh, n * sizeof(Elf64_Shdr));
}

/* Read a whole string table section into a fresh NUL-terminated buffer. */
static char *read_strtab(const struct elf_file *f, size_t idx, size_t *len)
{
	const Elf64_Shdr *s;
	char *buf;

	if (idx >= f->nsh)
		return NULL;
	s = &f->sh[idx];
	if (s->sh_type != SHT_STRTAB || s->sh_size == 0 || s->sh_size > SB_ELF_MAX_STRTAB)
		return NULL;
	buf = malloc(s->sh_size + 1);
	if (!buf)
		return NULL;
	if (file_read(f->fd, s->sh_offset, buf, s->sh_size) < 0) {
		free(buf);
		return NULL;
	}
	buf[s->sh_size] = '\0';
	*len = s->sh_size;
	return buf;
}

static void find_section_runtime(const struct elf_file *f, struct sb_elf_syms *out)
{
	size_t len;
	char *names = read_strtab(f, f->eh.e_shstrndx, &len);

	if (!names)
		return;
	for (size_t i = 0; i < f->nsh; i++) {
		if (f->sh[i].sh_name < len && strcmp(names + f->sh[i].sh_name, ".PyRuntime") == 0 &&
		    f->sh[i].sh_addr) {
			out->runtime = f->sh[i].sh_addr;
			out->runtime_from_section = true;
			break;
		}
	}
	free(names);
}

/* A dynamically linked python whose runtime lives in libpython names it in
 * .dynstr (DT_NEEDED). */
static void find_needs_libpython(const struct elf_file *f, struct sb_elf_syms *out)
{
	for (size_t i = 0; i < f->nsh && !out->needs_libpython; i++) {
		size_t len = 0;
		char *strtab;

		if (f->sh[i].sh_type != SHT_DYNSYM)
			continue;
		strtab = read_strtab(f, f->sh[i].sh_link, &len);
		if (!strtab)
			continue;
		for (size_t at = 0; at < len; at += strlen(strtab + at) + 1)
			if (strncmp(strtab + at, "libpython", 9) == 0)
				out->needs_libpython = true;
		free(strtab);
	}
}

static void match_sym(const Elf64_Sym *sym, const char *strtab, size_t len, struct sb_elf_syms *out)
{
	const char *name;

	if (sym->st_name >= len || sym->st_shndx == SHN_UNDEF || sym->st_value == 0 ||
	    ELF64_ST_TYPE(sym->st_info) != STT_OBJECT)
		return;
	name = strtab + sym->st_name;
	if (!out->runtime && strcmp(name, "_PyRuntime") == 0)
		out->runtime = sym->st_value;
	else if (!out->py_version && strcmp(name, "Py_Version") == 0)
		out->py_version = sym->st_value;
	else if (!out->code_type && strcmp(name, "PyCode_Type") == 0)
		out->code_type = sym->st_value;
}

static bool syms_complete(const struct sb_elf_syms *s)
{
	return s->runtime && s->py_version && s->code_type;
}

static int scan_symtab(const struct elf_file *f, uint32_t type, struct sb_elf_syms *out)
{
	for (size_t i = 0; i < f->nsh && !syms_complete(out); i++) {
		const Elf64_Shdr *s = &f->sh[i];
		Elf64_Sym batch[SB_ELF_SYM_BATCH];
		size_t nsyms, len = 0;
		char *strtab;

		if (s->sh_type != type || s->sh_entsize != sizeof(Elf64_Sym))
			continue;
		nsyms = s->sh_size / sizeof(Elf64_Sym);
		if (nsyms > SB_ELF_MAX_SYMS)
			nsyms = SB_ELF_MAX_SYMS;
		strtab = read_strtab(f, s->sh_link, &len);
		if (!strtab)
			continue;
		for (size_t at = 0; at < nsyms && !syms_complete(out); at += SB_ELF_SYM_BATCH) {
			size_t k = nsyms - at < SB_ELF_SYM_BATCH ? nsyms - at : SB_ELF_SYM_BATCH;
			if (file_read(f->fd, s->sh_offset + at * sizeof(Elf64_Sym), batch, k * sizeof(Elf64_Sym)) < 0)
				break;
			for (size_t j = 0; j < k; j++)
				match_sym(&batch[j], strtab, len, out);
		}
		free(strtab);
	}
	return 0;
}

static int parse(int fd, struct sb_elf_syms *out)
{
	struct elf_file f = { .fd = fd };
	int rc;

	memset(out, 0, sizeof(*out));
	rc = read_ehdr(&f);
	if (rc < 0)
		goto out;
	out->type = f.eh.e_type;
	rc = read_phdrs(&f, out);
	if (rc < 0)
		goto out;
	rc = read_shdrs(&f);
	if (rc < 0)
		goto out;
	scan_symtab(&f, SHT_DYNSYM, out);
	scan_symtab(&f, SHT_SYMTAB, out);
	/* strip keeps section headers: .PyRuntime is the symbol-free fallback. */
	if (!out->runtime)
		find_section_runtime(&f, out);
	if (!out->runtime)
		find_needs_libpython(&f, out);
	rc = out->runtime ? 0 : -ENOENT;
out:
	free(f.sh);
	return rc;
}

/* ---- cache: ELF facts per file identity; the bias is per process ---- */

struct elf_cache_entry {
	bool used;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int rc;
	struct sb_elf_syms syms;
};

static pthread_mutex_t elf_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct elf_cache_entry elf_cache[SB_ELF_CACHE];
static unsigned elf_cache_next;

static bool same_file(const struct elf_cache_entry *e, const struct stat *st)
{
	return e->used && e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* A cache hit must also carry the build-id the file has now: a rebuilt
 * library copied over the old one in place keeps its inode. */
static bool build_id_matches(int fd, const struct sb_elf_syms *cached)
{
	struct elf_file f = { .fd = fd };
	struct sb_elf_syms now;

	memset(&now, 0, sizeof(now));
	if (read_ehdr(&f) < 0 || read_phdrs(&f, &now) < 0)
		return false;
	return now.build_id_len == cached->build_id_len &&
	       memcmp(now.build_id, cached->build_id, now.build_id_len) == 0;
}

int sb_elf_python_syms(int fd, struct sb_elf_syms *out)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	pthread_mutex_lock(&elf_cache_lock);
	for (unsigned i = 0; i < SB_ELF_CACHE; i++) {
		if (same_file(&elf_cache[i], &st) && build_id_matches(fd, &elf_cache[i].syms)) {
			*out = elf_cache[i].syms;
			rc = elf_cache[i].rc;
			pthread_mutex_unlock(&elf_cache_lock);
			return rc;
		}
	}
	pthread_mutex_unlock(&elf_cache_lock);

	rc = parse(fd, out);
	if (rc == -ENOMEM)
		return rc;

	pthread_mutex_lock(&elf_cache_lock);
	struct elf_cache_entry *e = &elf_cache[elf_cache_next++ % SB_ELF_CACHE];
	e->used = true;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = st.st_size;
	e->mtime = st.st_mtim;
	e->rc = rc;
	e->syms = *out;
	pthread_mutex_unlock(&elf_cache_lock);
	return rc;
}

uint64_t sb_elf_runtime_addr(const struct sb_elf_syms *s, uint64_t map_start, uint64_t link_addr)
{
	if (s->type == ET_EXEC)
		return link_addr;
	return link_addr - s->load_vaddr + map_start;
}
