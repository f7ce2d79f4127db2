/* Network family handlers of the supervisor (src/notif_net.c), reached through
 * the dispatch table generated from rules/syscalls.in.
 *
 * Each copies the address (and payload), judges it, performs the call itself
 * on a pidfd_getfd duplicate of the socket and answers with its result; none
 * answers CONTINUE (doc/network.md).  Refused connect/send: ECONNREFUSED;
 * refused bind/listen: EACCES.
 *
 * Events: SB_EV_NET (ev->addr the judged address, ev->proto, ev->dir) or
 * SB_EV_UNIX (ev->path canonical, ev->access SB_ACC_WRITE; "@name" for an
 * abstract name).  When no rule could lift a refusal (a raw socket, another
 * address family, an abstract name, a malformed address) ev->proto is 0,
 * ev->tip is empty and ev->name holds the reason in upstream's words, e.g.
 * "socket type 3 cannot be evaluated by a net= rule".
 */
#ifndef SB_NOTIF_NET_H
#define SB_NOTIF_NET_H

#include "notif.h"

sb_notif_handler sb_handle_connect, sb_handle_bind, sb_handle_listen, sb_handle_sendto, sb_handle_sendmsg, sb_handle_sendmmsg;

#endif
