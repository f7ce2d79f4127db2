"""file:// through an HTTP-style client (row 11)."""
import urllib.request
from rtlib import CTX, done, try_

try_("urlopen", lambda: urllib.request.urlopen("file://" + CTX["secret"]).read())
try_("urlopen dotdot", lambda: urllib.request.urlopen("file://" + CTX["data"] + "/../secret/key").read())
try_("urlretrieve", lambda: open(urllib.request.urlretrieve("file://" + CTX["secret"])[0]).read())
done()
