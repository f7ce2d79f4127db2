"""Run python-sb inside the sandbox with a permissive rule file of the
program's own (row 37: widening through another configuration); with and
without --best-effort."""
import subprocess
from rtlib import CTX, done, try_

o = CTX["out"]
with open(f"{o}/wide.py-sandboxes", "w") as f:
    f.write(f"py-sandbox=false\nos-sandbox=none\nexpose-ro=/\nexpose-rw={CTX['root']}\n")
code = f"print(open({CTX['secret']!r}).read())"


def nested(extra):
    r = subprocess.run([CTX["python_sb"], f"--python={CTX['python']}", f"--pysandboxes-config={o}/wide.py-sandboxes",
                        *extra, "-c", code], capture_output=True, text=True, timeout=20)
    return r.returncode, r.stdout, r.stderr[-300:]


try_("nested", nested, [])
try_("nested best-effort", nested, ["--best-effort"])
done()
