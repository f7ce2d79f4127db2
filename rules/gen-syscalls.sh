#!/bin/sh
# Generate src/syscall_table.h from rules/syscalls.in (see that file for the
# format).  Usage: gen-syscalls.sh rules/syscalls.in > src/syscall_table.h
#
# Each row becomes
#   X(name, nr, action, a, b, val, handler, kind)
# name     the kernel's name ("open"), or "" for a numeric range
# nr       the x86_64 number: __NR_name from <sys/syscall.h> (the compiler
#          resolves it, an unknown name does not compile), the fixed number
#          of NAME=NR (checked against the header when it has the name), or
#          the range start
# action   SB_FA_* (src/sup_priv.h)
# a, b     argument indexes (notify-unless-fd, notify-if-set, errno-if);
#          for a range, a is its last number
# val      errno (SB_FA_ERRNO*), comparison value (errno-if, in b's place the
#          errno), or the python-api category (SB_FA_API)
# handler  sb_notif_handler or NULL
# kind     enum sb_event_kind or -1
set -eu

in=${1:?usage: gen-syscalls.sh syscalls.in}

awk -v src="$in" '
function fail(msg) {
	printf("%s:%d: %s\n", src, NR, msg) > "/dev/stderr"
	bad = 1
	exit 1
}
function category(c,	u) {
	u = toupper(c)
	gsub(/-/, "_", u)
	if (u !~ /^(PROCESS_EXEC|PROCESS_CONTROL|PRIVILEGES|THREADS)$/)
		fail("unknown python-api category " c)
	return "SB_API_" u
}
function kindof(k) {
	if (k == "-") return "-1"
	if (k !~ /^(path|unix|net|exec|proc)$/) fail("unknown kind " k)
	return "SB_EV_" toupper(k)
}
BEGIN {
	print "/* Generated from rules/syscalls.in by rules/gen-syscalls.sh: do not edit. */"
	print "#ifndef SB_SYSCALL_TABLE_H"
	print "#define SB_SYSCALL_TABLE_H"
	print ""
	print "#include <sys/syscall.h>"
	print ""
	print "/* The numbers are x86_64 ones, and so is the BPF program of src/filter.c. */"
	print "#if !defined(__x86_64__) || defined(__ILP32__)"
	print "#error \"python-sb is built for x86_64 only (src/filter.c)\""
	print "#endif"
	print ""
	nh = 0
	nrows = 0
}
/^[ \t]*(#|$)/ { next }
{
	if (NF < 4) fail("expected NAME ACTION HANDLER KIND")
	name = $1; act = $2; h = $3; kind = kindof($4)
	nr = -1; a = 0; b = 0; val = 0
	if (name ~ /^range:[0-9]+-[0-9]+$/) {
		split(substr(name, 7), r, "-")
		nr = r[1] + 0; a = r[2] + 0; name = ""
		if (a < nr) fail("empty range")
	} else if (name ~ /^[a-z0-9_]+=[0-9]+$/) {
		split(name, r, "=")
		name = r[1]; nr = r[2] + 0
		# A newer header must agree with the number written here.
		printf("#if defined(__NR_%s) && __NR_%s != %d\n", name, name, nr)
		printf("#error \"%s:%d: %s is not %d in <sys/syscall.h>\"\n", src, NR, name, nr)
		print "#endif"
	} else if (name ~ /^[a-z0-9_]+$/) {
		nr = "__NR_" name
	} else {
		fail("bad syscall name " name)
	}
	if (act == "notify") {
		fa = "SB_FA_NOTIFY"
	} else if (act ~ /^notify-unless-fd:[0-5]:[0-5]$/) {
		split(act, p, ":"); fa = "SB_FA_NOTIFY_UNLESS_FD"; a = p[2]; b = p[3]
	} else if (act ~ /^notify-if-set:[0-5]$/) {
		split(act, p, ":"); fa = "SB_FA_NOTIFY_IF_SET"; a = p[2]
	} else if (act ~ /^api:[a-z-]+$/) {
		fa = "SB_FA_API"; val = category(substr(act, 5))
	} else if (act == "clone") {
		fa = "SB_FA_CLONE"
	} else if (act ~ /^errno:E[A-Z0-9]+$/) {
		fa = "SB_FA_ERRNO"; val = substr(act, 7)
	} else if (act ~ /^errno-if:[0-5]=(0x[0-9a-fA-F]+|[0-9]+):E[A-Z0-9]+$/) {
		split(act, p, ":"); split(p[2], q, "=")
		fa = "SB_FA_ERRNO_IF"; a = q[1]; b = q[2]; val = p[3]
	} else if (act ~ /^errno-if-ne:[0-5]=(0x[0-9a-fA-F]+|[0-9]+):[0-5]!=[0-9]+:E[A-Z0-9]+$/) {
		# (u32)argA == VAL and argB != V: the three small numbers share the
		# field a of the row (A | B << 8 | V << 16), VAL goes in b.
		split(act, p, ":"); split(p[2], q, "="); split(p[3], w, "!=")
		if (w[2] + 0 > 32767) fail("errno-if-ne: comparison value too large")
		fa = "SB_FA_ERRNO_IF_NE"; a = q[1] + w[1] * 256 + w[2] * 65536; b = q[2]; val = p[4]
	} else {
		fail("unknown action " act)
	}
	if (h != "-" && h !~ /^sb_handle_[a-z0-9_]+$/) fail("bad handler " h)
	inkernel = fa == "SB_FA_ERRNO" || fa == "SB_FA_ERRNO_IF" || fa == "SB_FA_ERRNO_IF_NE"
	if (inkernel && h != "-")
		fail("a call refused in-kernel has no handler")
	if (!inkernel && h == "-")
		fail("a notified call needs a handler")
	if (h != "-" && !(h in seen)) { seen[h] = 1; handlers[nh++] = h }
	rowv[nrows++] = sprintf("\tX(\"%s\", %s, %s, %d, %s, %s, %s, %s) \\", name, nr, fa, a, b, val,
				h == "-" ? "NULL" : h, kind)
	rows++
}
END {
	if (bad) exit 1
	print ""
	print "#define SB_SYSCALLS(X) \\"
	for (i = 0; i < nrows; i++)
		print rowv[i]
	print "\t/* end */"
	print ""
	print "#define SB_SYSCALL_ROWS " rows
	print ""
	print "/* Every handler named above (declared here so a missing one fails the link). */"
	line = "sb_notif_handler"
	for (i = 0; i < nh; i++)
		line = line (i ? "," : "") "\n\t" handlers[i]
	print line ";"
	print ""
	print "#endif"
}
' "$in"
