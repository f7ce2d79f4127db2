"""Temporary files when no rule exposes /tmp (row 3)."""
import tempfile
from rtlib import CTX, done, try_

pfx = CTX["tmp_prefix"]
try_("mkstemp", tempfile.mkstemp, prefix=pfx, dir="/tmp")
try_("named", lambda: tempfile.NamedTemporaryFile(prefix=pfx, dir="/tmp", delete=False).name)
try_("shm", tempfile.mkstemp, prefix=pfx, dir="/dev/shm")
try_("mkdtemp", tempfile.mkdtemp, prefix=pfx, dir="/tmp")
try_("TemporaryFile", lambda: tempfile.TemporaryFile(dir="/tmp").write(b"x"))
done()
