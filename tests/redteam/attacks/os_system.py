"""os.system, os.popen, subprocess, os.exec* without process-exec (row 18)."""
import os
import subprocess
from rtlib import CTX, done, try_

m, mp = CTX["marker"], CTX["marker_prog"]
try_("os.system", os.system, f"{mp} {m}")
try_("os.popen", lambda: os.popen(f"{mp} {m}").read())
try_("subprocess.run", lambda: subprocess.run([mp, m], capture_output=True).stdout)
try_("check_output sh", subprocess.check_output, f"echo RT-CHILD-RAN; : > {m}", shell=True)
try_("getoutput", subprocess.getoutput, f"{mp} {m}")
done()
