"""The same attacks from a grandchild: python -> python -> reads the secret,
connects to the canary, starts the marker program, lists the hidden dir
(issue: "from a grandchild")."""
import json
import subprocess
import sys
from rtlib import CTX, done, try_

CODE = r'''
import json, os, socket, subprocess, sys
ctx = json.loads(sys.argv[1])
def t(name, fn):
    try:
        print(name, "OK", repr(fn())[:500], flush=True)
    except Exception as e:
        print(name, "EXC", type(e).__name__, e, flush=True)
t("read", lambda: open(ctx["secret"]).read())
t("list", lambda: os.listdir(ctx["secret_dir"]))
t("connect", lambda: socket.create_connection(("127.0.0.1", ctx["tcp"]), timeout=2).sendall(b"RT-GRANDCHILD"))
t("exec", lambda: subprocess.run([ctx["marker_prog"], ctx["marker"]]).returncode)
t("env", lambda: dict(os.environ))
'''
py = CTX["python"]
mid = f"import subprocess, sys; sys.exit(subprocess.run([{py!r}, '-c', sys.argv[1], sys.argv[2]]).returncode)"
try_("grandchild", lambda: subprocess.run([py, "-c", mid, CODE, json.dumps(CTX)]).returncode)
done()
