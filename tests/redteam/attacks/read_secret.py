"""Read a file no rule exposes, by its absolute path (reference §8.2 row 1)."""
from rtlib import CTX, done, read, try_
import pathlib

try_("open", read, CTX["secret"])
try_("pathlib", pathlib.Path(CTX["secret"]).read_text)
try_("bytes", read, CTX["secret"], mode="rb")
done()
