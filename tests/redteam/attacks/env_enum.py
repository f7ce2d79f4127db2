"""Enumerate the environment for a variable the policy does not pass (row 17)."""
import os
from rtlib import done, try_

try_("environ", lambda: dict(os.environ))
try_("getenv", os.getenv, "RT_HOST_SECRET")
try_("environb", lambda: dict(os.environb))
try_("confstr", lambda: os.confstr("CS_PATH"))
done()
