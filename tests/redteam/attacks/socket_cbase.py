"""The C base class _socket.socket and other twins instead of the patched
socket.socket (row 14)."""
import _socket
import socket
from rtlib import CTX, done, try_

p = CTX["tcp"]
try_("_socket.socket", lambda: _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM).connect(("127.0.0.1", p)))
try_("socket.__base__", lambda: socket.socket.__base__(socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", p)))
try_("mro", lambda: type(socket.socket()).__mro__[-2](socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", p)))
try_("create_connection", lambda: socket.create_connection(("127.0.0.1", p), 2))
done()
