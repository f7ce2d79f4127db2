#include "config.h"

#include <errno.h>
#include <signal.h>

#include "thread.h"

int sb_thread_start(pthread_t *t, size_t stack, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (pthread_attr_init(&attr))
		return -ENOMEM;
	if (stack)
		pthread_attr_setstacksize(&attr, stack);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -rc;
}
