"""A symlink inside an exposure that points out of it (row 5)."""
import os
import pathlib
from rtlib import CTX, done, read, try_

link = os.path.join(CTX["data"], "link")
try_("open link", read, link)
try_("realpath", lambda: read(os.path.realpath(link)))
try_("pathlib", pathlib.Path(link).read_text)
try_("O_NOFOLLOW", lambda: os.read(os.open(link, os.O_RDONLY | os.O_NOFOLLOW), 100))
try_("readlink", os.readlink, link)
done()
