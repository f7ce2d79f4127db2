"""ctypes.pythonapi: PyRun_SimpleString and the C API behind the agent's back
(row 19 note)."""
import ctypes
from rtlib import CTX, done, try_

code = (f"import posix; posix.system({CTX['marker_prog'] + ' ' + CTX['marker']!r}); "
        f"print(open({CTX['secret']!r}).read())").encode()
try_("PyRun_SimpleString", ctypes.pythonapi.PyRun_SimpleString, code)
done()
