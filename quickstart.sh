#!/bin/sh
# Set up python-sb on a fresh Debian/Ubuntu machine and run the demo:
# install the build dependencies, build, then learn a policy for
# contrib/demo/app.py, enforce it and show the --evil attempts refused.
set -eu
cd "$(dirname "$0")"

deps="build-essential autoconf automake libtool pkg-config libseccomp-dev libcjson-dev
libpcre2-dev libunwind-dev check python3 python3-dev"
missing=
for p in $deps; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "== installing:$missing"
	if [ "$(id -u)" -eq 0 ]; then sudo=; else sudo=sudo; fi
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi

echo "== building"
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure
make -j"$(nproc)"

echo "== demo"
exec ./contrib/demo/run-demo.sh "$PWD/python-sb"
