# deny-intranet: keep a program away from the machine's neighbours.
#
# Include it from a rule file (include "/usr/local/share/py-sandboxes/rules/base/deny-intranet.profile",
# or copy it next to your .py-sandboxes and write include "deny-intranet.profile").
# DENY lines are checked before every ALLOW, so these win over a broad
# net=ALLOW|tcp|*|443|OUT: private networks, carrier-grade NAT, link-local
# addresses (cloud metadata services live at 169.254.169.254) and loopback.
# Remove the loopback lines if the program must reach a local service.
net=DENY|*|10.0.0.0/8|*|OUT
net=DENY|*|172.16.0.0/12|*|OUT
net=DENY|*|192.168.0.0/16|*|OUT
net=DENY|*|100.64.0.0/10|*|OUT
net=DENY|*|169.254.0.0/16|*|OUT
net=DENY|*|127.0.0.0/8|*|OUT
net=DENY|*|fc00::/7|*|OUT
net=DENY|*|fe80::/10|*|OUT
net=DENY|*|::1/128|*|OUT
