/* tests/unit/filter_ref.c: the libseccomp builder src/filter.c replaced. */
#ifndef SB_FILTER_REF_H
#define SB_FILTER_REF_H

#include "sup_priv.h"

/* The row's number as libseccomp resolves its name (NAME=NR rows it does not
 * know: that number), -1 when it has none. */
int sb_ref_row_nr(const struct sb_syscall_row *row);

/* sb_filter_build() as it was: rows through libseccomp 2.5, exported with
 * SCMP_FLTATR_CTL_OPTIMIZE=2.  0 or -errno. */
int sb_ref_filter_build(const struct sb_policy *p, enum sb_mode mode, struct sb_filter *out);
int sb_ref_filter_build_rows(const struct sb_syscall_row *rows, size_t n, const struct sb_policy *p,
			     enum sb_mode mode, struct sb_filter *out);

#endif
