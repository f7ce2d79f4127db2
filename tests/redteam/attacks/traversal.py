"""Spellings of the secret's path that start inside an exposure (row 4)."""
import os
from rtlib import CTX, done, read, try_

r, d, o = CTX["root"], CTX["data"], CTX["out"]
os.chdir(r)
for p in (f"{d}/../secret/key", "secret/key", "./secret/key", "data/../secret/key", "/proc/self/cwd/secret/key",
          f"{d}/sub/../../secret/key", f"/{r}//secret///key", f"{o}/../secret/key", f"{d}/./../secret/./key",
          f"{d}/link/../key", f"/proc/self/root{r}/secret/key", f"/proc/thread-self/cwd/secret/key",
          f"/proc/{os.getpid()}/cwd/secret/key", "/../" * 20 + r.lstrip("/") + "/secret/key"):
    try_(p, read, p)
os.chdir(d)
for p in ("../secret/key", "sub/../../secret/key", "link"):
    try_("from data: " + p, read, p)
done()
