"""Write outside expose-rw: into the read-only tree, next to it, over a
read-only file (row 3)."""
import os
from rtlib import CTX, done, try_


def write(p, mode="w"):
    with open(p, mode) as f:
        f.write("RT-WRITTEN\n")
    return "written"


d = CTX["data"]
try_("create ro", write, os.path.join(d, "RT-new.txt"))
try_("overwrite ro", write, CTX["public"])
try_("append ro", write, CTX["public"], "a")
try_("create in secret dir", write, os.path.join(CTX["secret_dir"], "RT-new"))
try_("overwrite secret", write, CTX["secret"])
try_("mkdir ro", os.mkdir, os.path.join(d, "RT-dir"))
try_("os.open O_CREAT", os.open, os.path.join(d, "RT-new2"), os.O_WRONLY | os.O_CREAT, 0o644)
try_("creat in root", write, os.path.join(CTX["root"], "RT-top"))
o = CTX["out"]
for name, target in (("w1", "../secret/key"), ("w2", "../data/public.txt"), ("w3", "../secret/RT-dangling"),
                     ("w4", "../data/RT-dangling"), ("w5", CTX["secret_dir"] + "/RT-abs")):
    try_("symlink " + name, os.symlink, target, f"{o}/{name}")
    try_("write through " + name, write, f"{o}/{name}")
    try_("O_CREAT through " + name, os.open, f"{o}/{name}", os.O_WRONLY | os.O_CREAT, 0o644)
    try_("append through " + name, write, f"{o}/{name}", "a")
done()
