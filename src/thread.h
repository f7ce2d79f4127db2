/* Helper threads of python-sb (supervisor, learner, network emulation). */
#ifndef SB_THREAD_H
#define SB_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* Start fn(arg) with every signal blocked: the signals python-sb handles
 * (the CLI's forwarding, the workers' interruption) are never delivered to
 * a helper.  `stack` 0: the default size.  0 or -errno. */
int sb_thread_start(pthread_t *t, size_t stack, void *(*fn)(void *), void *arg);

#endif
