"""bind/listen on ports and addresses no IN rule allows; the harness tries
to connect to whatever the program got to listen on."""
import socket
import time
from rtlib import done, try_

got = []


def serve(addr):
    s = socket.socket()
    s.bind(addr)
    s.listen(4)
    got.append(s)
    host, port = s.getsockname()[:2]
    return f"{'127.0.0.1' if host == '0.0.0.0' else host}:{port}"


def unbound_listen():
    s = socket.socket()
    s.listen(4)
    got.append(s)
    return f"127.0.0.1:{s.getsockname()[1]}"


def abstract():
    s = socket.socket(socket.AF_UNIX)
    name = "rt-inbound-" + str(time.time())
    s.bind("\0" + name)
    s.listen(4)
    got.append(s)
    return "@" + name


addrs = [try_("bind 127.0.0.1", serve, ("127.0.0.1", 0)), try_("bind any", serve, ("0.0.0.0", 0)),
         try_("listen unbound", unbound_listen), try_("abstract", abstract)]
print("RT-LISTENING", *[a for a in addrs if a], flush=True)
time.sleep(1.5)
done()
