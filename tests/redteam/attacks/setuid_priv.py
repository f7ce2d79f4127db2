"""Change identity without the privileges category."""
import os
from rtlib import done, try_

before = (os.getresuid(), os.getresgid(), os.getgroups())
try_("setgroups", os.setgroups, [65534])
try_("setresgid", os.setresgid, 65534, 65534, 65534)
try_("setresuid", os.setresuid, 65534, 65534, 65534)
try_("setuid", os.setuid, 65534)
after = (os.getresuid(), os.getresgid(), os.getgroups())
if after != before:
    print("RT-UID-CHANGED", before, after, flush=True)
done()
