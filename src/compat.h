/* UAPI fallbacks for headers older than the kernels we run on (configure
 * checks which constants the headers have; values are the kernel's ABI). */
#ifndef SB_COMPAT_H
#define SB_COMPAT_H

#include "config.h"

#include <linux/seccomp.h>
#include <sys/ioctl.h>

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
# define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SETFD
# define SECCOMP_ADDFD_FLAG_SETFD (1UL << 0)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
# define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
# define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
# define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_IOC_MAGIC
# define SECCOMP_IOC_MAGIC '!'
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
# define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW(SECCOMP_IOC_MAGIC, 4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
# define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#ifndef PIDFD_THREAD
# define PIDFD_THREAD 0x80	/* O_EXCL: pidfd of a thread (6.9) */
#endif

#endif
