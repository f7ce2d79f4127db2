# SB_WARNINGS / SB_SANITIZERS / SB_FUZZ: compiler switches.
AC_DEFUN([SB_WARNINGS], [
AC_ARG_ENABLE([werror], [AS_HELP_STRING([--enable-werror], [treat warnings as errors (CI does)])],
  [], [enable_werror=no])
WARN_CFLAGS="-Wall -Wextra -Wformat=2 -Wshadow -Wpointer-arith -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter -Wno-missing-field-initializers -Wvla -Wimplicit-fallthrough -fno-strict-aliasing"
AS_IF([test "x$enable_werror" = xyes], [WARN_CFLAGS="$WARN_CFLAGS -Werror"])
AC_SUBST([WARN_CFLAGS])
])
AC_DEFUN([SB_SANITIZERS], [
AC_ARG_ENABLE([sanitizers], [AS_HELP_STRING([--enable-sanitizers], [build with ASan and UBSan])],
  [], [enable_sanitizers=no])
SAN_CFLAGS=
AS_IF([test "x$enable_sanitizers" = xyes], [SAN_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"])
AC_SUBST([SAN_CFLAGS])
AM_CONDITIONAL([SANITIZERS], [test "x$enable_sanitizers" = xyes])
])
AC_DEFUN([SB_FUZZ], [
AC_ARG_ENABLE([fuzz], [AS_HELP_STRING([--enable-fuzz], [build libFuzzer targets (needs clang)])],
  [], [enable_fuzz=no])
AM_CONDITIONAL([FUZZ], [test "x$enable_fuzz" = xyes])
])
# SB_HARDENING: what Debian's dpkg-buildflags "hardening=+all" gives a
# package, for every build: a supervisor that reads hostile memory should not
# have a writable GOT (full RELRO: -z now also resolves every symbol at start
# instead of on each thread's first call), an executable stack or unguarded
# stack buffers.  Each flag is kept only if this compiler and linker accept it
# without a warning.
AC_DEFUN([SB_HARDEN_TRY], [
  sb_save_CFLAGS=$CFLAGS sb_save_LDFLAGS=$LDFLAGS
  CFLAGS="$CFLAGS -Werror $1" LDFLAGS="$LDFLAGS -Werror $2"
  AC_MSG_CHECKING([whether the toolchain accepts $1 $2])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <string.h>]], [[char b[8]; strcpy(b, "x"); return b[0];]])],
    [AC_MSG_RESULT([yes]); HARDEN_CFLAGS="$HARDEN_CFLAGS $1"; HARDEN_LDFLAGS="$HARDEN_LDFLAGS $2"],
    [AC_MSG_RESULT([no])])
  CFLAGS=$sb_save_CFLAGS LDFLAGS=$sb_save_LDFLAGS
])
AC_DEFUN([SB_HARDENING], [
AC_ARG_ENABLE([hardening], [AS_HELP_STRING([--disable-hardening], [build without the stack protector, fortify and full RELRO])],
  [], [enable_hardening=yes])
HARDEN_CFLAGS= HARDEN_LDFLAGS=
AS_IF([test "x$enable_hardening" = xyes], [
  SB_HARDEN_TRY([-fstack-protector-strong], [])
  SB_HARDEN_TRY([-fstack-clash-protection], [])
  SB_HARDEN_TRY([-fcf-protection], [])
  dnl Fortify needs optimisation (a warning otherwise) and is already on in
  dnl some compilers' defaults (a redefinition warning): the probe tells.
  dnl ASan checks the same calls better and does not mix with it.
  AS_IF([test "x$enable_sanitizers" != xyes],
    [SB_HARDEN_TRY([-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2], [])])
  SB_HARDEN_TRY([], [-Wl,-z,relro -Wl,-z,now])
  SB_HARDEN_TRY([], [-Wl,-z,noexecstack])
])
AC_SUBST([HARDEN_CFLAGS])
AC_SUBST([HARDEN_LDFLAGS])
AC_SUBST([enable_hardening])
])
