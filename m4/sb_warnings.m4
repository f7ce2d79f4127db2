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
