"""A C extension module (built at test time from tests/redteam/rtext.c):
read the secret, connect to the canary, fork+exec (issue: "from a C
extension")."""
import sys
from rtlib import CTX, done, try_

sys.path.insert(0, CTX["ext_dir"])
import rtext  # noqa: E402

try_("ext read", rtext.read, CTX["secret"])
try_("ext connect", rtext.connect, "127.0.0.1", CTX["tcp"])
try_("ext spawn", rtext.spawn, CTX["marker_prog"], CTX["marker"])
done()
