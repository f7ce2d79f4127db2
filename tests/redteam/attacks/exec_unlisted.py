"""With process-exec granted and exec= naming /usr/bin/true only: start
other programs (exec= extension), scripts written into the writable tree,
shells, the interpreter through another name."""
import os
import shutil
import subprocess
from rtlib import CTX, done, try_

m, mp, o = CTX["marker"], CTX["marker_prog"], CTX["out"]
try_("true (allowed)", subprocess.run, ["/usr/bin/true"])
try_("rt_marker", lambda: subprocess.run([mp, m]).returncode)
with open(f"{o}/s.sh", "w") as f:
    f.write(f"#!/bin/sh\necho RT-CHILD-RAN script\n: > {m}\n")
os.chmod(f"{o}/s.sh", 0o755)
try_("script in out", lambda: subprocess.run([f"{o}/s.sh"]).returncode)
try_("sh script", lambda: subprocess.run(["/bin/sh", f"{o}/s.sh"]).returncode)
try_("copy to out", lambda: (shutil.copy(mp, f"{o}/m"), os.chmod(f"{o}/m", 0o755), subprocess.run([f"{o}/m", m]).returncode))
try_("symlink as true", lambda: (os.symlink(mp, f"{o}/true"), subprocess.run([f"{o}/true", m]).returncode))
try_("ld.so", lambda: subprocess.run(["/lib64/ld-linux-x86-64.so.2", mp, m]).returncode)
try_("env", lambda: subprocess.run(["/usr/bin/env", mp, m]).returncode)
done()
