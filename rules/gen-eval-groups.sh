#!/bin/sh
# Generate src/eval_groups.h from rules/eval-syntax-groups.in: one
#   G("group", "Node1", "Node2", ...)
# row per group, for an X-macro the includer defines.
# Usage: gen-eval-groups.sh rules/eval-syntax-groups.in > src/eval_groups.h
set -eu

in=${1:?usage: gen-eval-groups.sh eval-syntax-groups.in}

awk -v src="$in" '
BEGIN {
	print "/* Generated from rules/eval-syntax-groups.in by rules/gen-eval-groups.sh: do not edit. */"
	print "#define SB_EVAL_GROUP_NODES_MAX 8"
	print "#define SB_EVAL_GROUPS(G) \\"
}
/^[ \t]*(#|$)/ { next }
{
	if ($1 !~ /^[a-z]+$/ || NF < 2 || NF > 9) {
		printf("%s:%d: want a lower-case group name and 1 to 8 node names\n", src, NR) > "/dev/stderr"
		bad = 1
		exit 1
	}
	line = "\tG(\"" $1 "\""
	for (i = 2; i <= NF; i++) {
		if ($i !~ /^[A-Za-z]+$/) {
			printf("%s:%d: bad node name %s\n", src, NR, $i) > "/dev/stderr"
			bad = 1
			exit 1
		}
		line = line ", \"" $i "\""
	}
	print line ") \\"
	n++
}
END {
	if (bad)
		exit 1
	if (!n) {
		printf("%s: no group\n", src) > "/dev/stderr"
		exit 1
	}
	print ""
}' "$in"
