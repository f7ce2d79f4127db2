#!/bin/sh
# The python-sb demo: learn a policy for contrib/demo/app.py, enforce it, and
# show that the --evil attempts are refused.  Usage: run-demo.sh [PYTHON_SB]
# Everything happens in a scratch directory on loopback only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
sb=${1:-python-sb}
py=${SB_DEMO_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3)

work=$(mktemp -d "${TMPDIR:-/tmp}/py-sandboxes-demo-XXXXXX")
pids=
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT INT TERM

# The program lives in app/; HOME is elsewhere, as on a real machine.
mkdir -p "$work/app"
cp "$here/app.py" "$work/app/"
cp -r "$here/data" "$work/app/"
mkdir -p "$work/home/.ssh" "$work/home/.aws" "$work/site"
echo "-----BEGIN FAKE DEMO KEY-----" > "$work/home/.ssh/id_rsa"
printf '[default]\naws_secret_access_key = fake-demo-secret\n' > "$work/home/.aws/credentials"
echo "hello from the allowed site" > "$work/site/index.html"

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
web=$(free_port)
exfil=$(free_port)
"$py" -m http.server --bind 127.0.0.1 --directory "$work/site" "$web" >/dev/null 2>&1 &
pids="$pids $!"
# The "attacker": records anything that reaches it.
"$py" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept()
    open(sys.argv[2], "ab").write(c.recv(4096) or b"(connected)")
    c.close()
' "$exfil" "$work/stolen" &
pids="$pids $!"
sleep 0.5

cd "$work/app"
export HOME="$work/home" DEMO_API_KEY=demo-key AWS_SECRET_ACCESS_KEY=fake-aws-secret
url="http://127.0.0.1:$web/"

echo "== 1. learn: no .py-sandboxes yet, so python-sb watches the program and writes one"
"$sb" --python="$py" app.py --url "$url"
echo
echo "== the learned whitelist (.py-sandboxes, comments left out)"
grep -v '^#' .py-sandboxes | grep -v '^[[:space:]]*$' || true
echo
echo "== 2. enforce: the same run, now held to the whitelist"
"$sb" --python="$py" app.py --url "$url"
echo
echo "== 3. enforce with --evil: the attempts a manipulated model would make"
status=0
"$sb" --python="$py" app.py --url "$url" --evil --exfil-port "$exfil" || status=$?
echo
if [ -s "$work/stolen" ]; then
	echo "DEMO FAILED: the attacker received: $(cat "$work/stolen")"
	exit 1
fi
echo "The attacker's listener on 127.0.0.1:$exfil received nothing (program status $status)."
