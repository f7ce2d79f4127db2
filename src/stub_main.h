/* The exec stub inside bwrap or firejail (doc/os-layers.md "Our filter
 * innermost"):
 *
 *   python-sb --_sb-stub FD EXE -- ARGV...
 *
 * runs after the wrapper's namespaces, mounts and own filters, receives the
 * supervisor's BPF program on the socket FD, installs it with NEW_LISTENER,
 * hands the listener over on FD (sb_oslayer_send_listener_ex) and execs the
 * interpreter, whose execve the supervisor answers.
 */
#ifndef SB_STUB_MAIN_H
#define SB_STUB_MAIN_H

#include <stdbool.h>
#include <stdint.h>

struct sb_filter;

/* main.c, first thing when argv[1] is "--_sb-stub".  Returns only on
 * failure, with the exit status (255 before the exec, 127 when the exec
 * itself failed), after one line on stderr. */
int sb_stub_main(int argc, char **argv);

/* The supervisor's half (spawn.c): send the filter the stub must install,
 * and the signals it resets to their default action before the exec (those
 * the spawn ignored for the wrapper's sake: a terminal's Ctrl-C must reach
 * the program, not end the wrapper around it).  Bit n-1 is signal n. */
int sb_stub_send_filter(int sock, const struct sb_filter *f, uint64_t sig_dfl);

/* spawn.c's installer, shared with the stub: no_new_privs, then the filter
 * with NEW_LISTENER and WAIT_KILLABLE_RECV (retried without it before
 * 5.19).  Returns the listener or -errno; *killable says which.  System
 * calls only (safe between fork and execve). */
int sb_spawn_install_filter(const struct sb_filter *f, bool *killable);

#endif
