"""SA_RESTART signal storm (a 1 ms interval timer) during emulated calls:
opens, refused opens, mkdir/rmdir, connects, FIFO opens that block in the
supervisor until a thread opens the other end.  Every answer must still be
right: nothing refused gets through, nothing allowed fails or runs twice."""
import os
import signal
import socket
import threading
import time
from rtlib import CTX, done

ticks = [0]


def tick(s, f):
    ticks[0] += 1


signal.signal(signal.SIGALRM, tick)
signal.siginterrupt(signal.SIGALRM, False)          # SA_RESTART
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
anomalies = []
o = CTX["out"]
for i in range(400):
    try:
        if open(CTX["public"]).read() != "public data\n":
            anomalies.append("public content")
    except OSError as e:
        anomalies.append(f"public open errno {e.errno}")
    try:
        print("secret", open(CTX["secret"]).read(), flush=True)
    except OSError:
        pass
    try:
        os.mkdir(f"{o}/d")
        os.rmdir(f"{o}/d")
    except OSError as e:
        anomalies.append(f"mkdir/rmdir errno {e.errno}")
    if i % 4 == 0:
        try:
            c = socket.create_connection(("127.0.0.1", CTX["allowed_tcp"]), 5)
            if not c.recv(16).startswith(b"RT-OK"):
                anomalies.append("server reply")
            c.close()
        except OSError as e:
            anomalies.append(f"connect errno {e.errno}")
fifo_done = 0
for i in range(10):
    f = f"{o}/fifo{i}"
    os.mkfifo(f)
    t = threading.Thread(target=lambda f=f: (time.sleep(0.03), os.close(os.open(f, os.O_WRONLY))))
    t.start()
    try:
        os.close(os.open(f, os.O_RDONLY))
        fifo_done += 1
    except OSError as e:
        anomalies.append(f"fifo errno {e.errno}")
    t.join()
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print("ticks", ticks[0], "fifos", fifo_done, flush=True)
for a in sorted(set(anomalies)):
    print("RT-ANOMALY", a, anomalies.count(a), flush=True)
done()
