/* Short-lived helper processes of python-sb (the config finder, the agent's
 * bytecode compiler): a monotonic clock and a reaper with a deadline. */
#ifndef SB_CHILD_H
#define SB_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC in milliseconds: deadlines that a clock change cannot move. */
long long sb_now_ms(void);

/* Reap `pid` into *status; SIGKILL it first when `kill_now` or when it is
 * still running at `deadline` (sb_now_ms() time).  Returns 0, or
 * -ETIMEDOUT when it had to be killed. */
int sb_child_reap(pid_t pid, long long deadline, bool kill_now, int *status);

#endif
