# SB_UAPI_CHECKS: which seccomp/landlock UAPI constants the installed kernel headers have.
# src/compat.h supplies the values the headers lack, so a build on old headers still
# knows the ABI; the running kernel is probed at run time.
AC_DEFUN([SB_UAPI_CHECKS], [
AC_CHECK_HEADERS([linux/seccomp.h linux/landlock.h linux/openat2.h sys/pidfd.h], [], [],
  [#include <sys/types.h>])
AC_CHECK_DECLS([SECCOMP_ADDFD_FLAG_SEND, SECCOMP_IOCTL_NOTIF_ADDFD, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
                SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV,
                SECCOMP_USER_NOTIF_FLAG_CONTINUE], [], [],
  [#include <linux/seccomp.h>])
AC_CHECK_DECLS([LANDLOCK_ACCESS_FS_REFER, LANDLOCK_ACCESS_FS_TRUNCATE, LANDLOCK_ACCESS_FS_IOCTL_DEV,
                LANDLOCK_ACCESS_NET_BIND_TCP, LANDLOCK_ACCESS_NET_CONNECT_TCP,
                LANDLOCK_SCOPE_SIGNAL, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET], [], [],
  [#include <linux/landlock.h>])
AC_CHECK_DECLS([RESOLVE_IN_ROOT, RESOLVE_NO_MAGICLINKS], [], [], [#include <linux/openat2.h>])
AC_CHECK_FUNCS([pidfd_open pidfd_getfd close_range])
])
