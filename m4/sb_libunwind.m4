# SB_LIBUNWIND: --with-libunwind=yes|no|check|DIR (strace's st_libunwind.m4 pattern).
# A missing library is an error only when the user said yes; AM_CONDITIONAL is always called.
AC_DEFUN([SB_LIBUNWIND], [
AC_ARG_WITH([libunwind],
  [AS_HELP_STRING([--with-libunwind=yes|no|check|DIR], [native stack frames with libunwind-ptrace (default: check)])],
  [], [with_libunwind=check])
with_libunwind_result=no
LIBUNWIND_CFLAGS=
LIBUNWIND_LIBS=
AS_CASE([$with_libunwind],
  [no], [],
  [yes|check], [
    PKG_CHECK_MODULES([LIBUNWIND], [libunwind-ptrace libunwind-generic],
      [with_libunwind_result=yes],
      [AS_IF([test "x$with_libunwind" = xyes], [AC_MSG_ERROR([libunwind-ptrace not found (apt-get install libunwind-dev)])])])],
  [
    saved_CPPFLAGS=$CPPFLAGS saved_LDFLAGS=$LDFLAGS
    CPPFLAGS="$CPPFLAGS -I$with_libunwind/include"
    LDFLAGS="$LDFLAGS -L$with_libunwind/lib"
    AC_CHECK_LIB([unwind-ptrace], [_UPT_create],
      [LIBUNWIND_CFLAGS="-I$with_libunwind/include"
       LIBUNWIND_LIBS="-L$with_libunwind/lib -lunwind-ptrace -lunwind-generic"
       with_libunwind_result=yes],
      [AC_MSG_ERROR([libunwind-ptrace not found in $with_libunwind])], [-lunwind-generic])
    CPPFLAGS=$saved_CPPFLAGS LDFLAGS=$saved_LDFLAGS
  ])
AS_IF([test "x$with_libunwind_result" = xyes], [AC_DEFINE([HAVE_LIBUNWIND], [1], [libunwind-ptrace is available])])
AC_SUBST([LIBUNWIND_CFLAGS])
AC_SUBST([LIBUNWIND_LIBS])
AM_CONDITIONAL([HAVE_LIBUNWIND], [test "x$with_libunwind_result" = xyes])
])
