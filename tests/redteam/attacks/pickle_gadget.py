"""A pickle gadget calling os.system / subprocess (row 20)."""
import pickle
from rtlib import CTX, done, try_

cmd = f"{CTX['marker_prog']} {CTX['marker']}".encode()
try_("posix.system", pickle.loads, b"cposix\nsystem\n(S'" + cmd + b"'\ntR.")
try_("os.system", pickle.loads, b"cos\nsystem\n(S'" + cmd + b"'\ntR.")
try_("subprocess", pickle.loads, b"csubprocess\ncheck_output\n((S'" + CTX["marker_prog"].encode() + b"'\nS'"
     + CTX["marker"].encode() + b"'\nltR.")
try_("Unpickler.load", lambda: __import__("io") and pickle.Unpickler(__import__("io").BytesIO(
    b"cposix\nsystem\n(S'" + cmd + b"'\ntR.")).load())
done()
