/* The channel to the in-interpreter agent (python/pysandboxes, SPEC §6).
 *
 * The supervisor makes the interpreter load a bootstrap `sitecustomize` from a
 * private directory put first on PYTHONPATH; the bootstrap imports the
 * `pysandboxes` package, reads the compiled rules (JSON, doc/agent-protocol.md)
 * from an inherited socket and sends back, one JSON object per record, what it
 * learned and what it refused.  The socket is SOCK_SEQPACKET: every message is
 * one record, so a message is never cut in two and never mixed with another.
 *
 * Nothing the agent says is trusted for enforcement: a hostile program owns
 * that socket.  Messages become events for the log and the learner only; each
 * record is bounded (SB_AGENT_MSG_MAX) and parsed defensively.
 *
 * Life cycle (main.c):
 *   sb_agent_loadable()  do the CPython options (-I, -E, -S) let the bootstrap load?
 *   sb_agent_prepare()   before spawning: socketpair, child environment
 *   sb_agent_start()     after spawning: rules to the agent, reader thread
 *   sb_agent_refusal()   from the supervisor's workers (optional): explain a refusal
 *   sb_agent_finish()    after the program exited: drain and join
 *   sb_agent_free()
 * Library style: 0 or -errno, never prints.
 */
#ifndef SB_AGENT_H
#define SB_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"
#include "policy.h"
#include "supervisor.h"

struct sb_agent;

/* Largest message accepted from the agent; longer records are dropped whole. */
#define SB_AGENT_MSG_MAX (64 * 1024)

/* Environment variables the agent reads (and removes from os.environ). */
#define SB_AGENT_ENV_FD "PYSANDBOXES_AGENT_FD"
#define SB_AGENT_ENV_PKGDIR "PYSANDBOXES_AGENT_PKGDIR"

/* False when the CPython options forwarded to the interpreter keep it from
 * loading the bootstrap: -I and -E ignore PYTHONPATH, -S skips `site` (and so
 * sitecustomize).  Options are separate argv tokens as struct sb_cli holds
 * them; combined flags ("-IS") and the argument of -W/-X are understood.
 * main.c then runs without the agent and warns once: the supervisor still
 * enforces everything it decides. */
bool sb_agent_loadable(const char *const *py_opts, size_t n);

/* Prepare the channel for a run of `p` in `mode`.
 *
 * With py-sandbox=false there is no agent: returns 0 with *out NULL and
 * *child_fd -1, the environment untouched.  Otherwise creates the socket pair
 * and edits *envp_inout, a malloc'ed NULL-terminated array of malloc'ed "K=V"
 * strings (as sb_policy_build_env() returns; still freed by sb_env_free()):
 * sets PYSANDBOXES_AGENT_FD and PYSANDBOXES_AGENT_PKGDIR and puts the
 * bootstrap directory first on PYTHONPATH (keeping a PYTHONPATH the policy
 * passed).  The bootstrap and the package are looked up at run time: the
 * installed copies (SB_DATADIR "/bootstrap", SB_PYTHONDIR) when python-sb runs
 * from its installed bindir, else the source tree (SB_SRCDIR "/python"), with
 * the other as fallback; -ENOENT when neither exists.  The program may read
 * those two directories (bootstrap, package): they are added to p as
 * read-only implicit grants, so prepare runs before p is shared with the
 * supervisor's workers.
 *
 * *child_fd is the agent's end of the pair and belongs to the caller from
 * now on.  It is created close-on-exec: the spawn code keeps that descriptor
 * number open across the interpreter's execve (clears FD_CLOEXEC in the
 * child); the caller closes it when the run is over (holding it meanwhile
 * is harmless: sb_agent_finish() does not wait for end-of-file). */
int sb_agent_prepare(struct sb_policy *p, enum sb_mode mode, char ***envp_inout,
		     struct sb_agent **out, int *child_fd);

/* Whether the interpreter, run with these options and this environment,
 * would write bytecode to __pycache__ (no -B, -X pycache_prefix,
 * PYTHONDONTWRITEBYTECODE or PYTHONPYCACHEPREFIX): the condition of
 * sb_agent_bytecode(). */
bool sb_agent_writes_bytecode(const char *const *py_opts, size_t n, char *const *envp);

/* Where the bootstrap and the package are (see sb_agent_prepare()):
 * canonical paths in static storage, or -ENOENT. */
int sb_agent_paths(const char **boot, const char **pkg);

/* Bytecode of the agent for the interpreter `python` (absolute path).  The
 * sandbox never lets the program write the agent's __pycache__ (read-only
 * grants), so an interpreter without it compiles the agent at every start
 * (30-40 ms).  When the modules every start loads lack a current .pyc of
 * this interpreter's cache tag, and their directories are the user's own
 * (not root's .pyc in a user's tree) and may be written, this
 * runs `python -I -S -m compileall -q` on the bootstrap and the package
 * once, before the program: outside the sandbox, with an empty environment
 * and no_new_privs; where Landlock is available, its writes are confined to
 * those two directories, and TCP, abstract sockets and signals outside it
 * are refused.  Nothing of the program runs there: only the interpreter and
 * its standard library (-I -S), which the program trusts anyway.  A run
 * that outlives 30 s is killed.  Call it only when
 * sb_agent_writes_bytecode().  Returns 1 when it compiled, 0 when there was
 * nothing to do (or it may not write), -errno when compiling failed: the
 * agent then compiles in memory, as before; the caller goes on either way. */
int sb_agent_bytecode(const char *python);

/* Start the reader thread, before or after the interpreter is spawned: it
 * builds the rules (sb_policy_agent_json() plus "mode"; p must not change
 * from sb_agent_prepare() on) and sends them (they wait in the socket), or
 * shuts the channel if they cannot be built, which stops the program.  Each message becomes a struct sb_event (SB_EV_IMPORT, SB_EV_ENV,
 * SB_EV_API, SB_EV_DNS) handed to fn on that thread; the caller serialises fn
 * with its other event sources.  A NULL agent is accepted (no-op). */
int sb_agent_start(struct sb_agent *a, sb_event_fn *fn, void *data);

/* Tell the agent why a call of thread `ev->tid` was refused, before the
 * refusal reaches the program, so that it can raise the matching Rule...Error
 * with `text` as message (doc/agent-protocol.md, "refusal").  Never blocks:
 * when the channel is full or not started the note is dropped (-EAGAIN), and
 * the program then sees the plain OSError.  Safe from any thread. */
int sb_agent_refusal(struct sb_agent *a, const struct sb_event *ev, const char *text);

/* After the program and all its processes exited: read what is still queued,
 * stop the reader thread and join it.  Idempotent; NULL accepted. */
void sb_agent_finish(struct sb_agent *a);

/* Close the descriptors and free; calls sb_agent_finish() first if needed. */
void sb_agent_free(struct sb_agent *a);

/* Turn one agent message (JSON text, `len` bytes, not necessarily
 * NUL-terminated) into events handed to fn (a "dns" message with several
 * addresses gives one event per address).  Returns the number of events
 * (at least one), -EINVAL for a malformed or unknown message or one with
 * nothing to report (the reader ignores it), or
 * -ENOMEM.  Exposed for the unit tests. */
int sb_agent_parse_message(const char *msg, size_t len, sb_event_fn *fn, void *data);

#endif
