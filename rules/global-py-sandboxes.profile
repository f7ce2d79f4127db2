# Site-wide py-sandboxes rules.
#
# Every .py-sandboxes written from the learning template includes this file
# ("include \"/etc/py-sandboxes/global-py-sandboxes.profile\""; install with
# ./configure --sysconfdir=/etc for that path).  Rules here apply to every
# program of every user that keeps the include; a missing file is ignored.
#
# A good start for machines on a private network: never reach the intranet,
# the cloud metadata service or local services, whatever a program learned.
#
# net=DENY|*|10.0.0.0/8|*|OUT
# net=DENY|*|172.16.0.0/12|*|OUT
# net=DENY|*|192.168.0.0/16|*|OUT
# net=DENY|*|169.254.0.0/16|*|OUT
# net=DENY|*|fc00::/7|*|OUT
# net=DENY|*|fe80::/10|*|OUT
