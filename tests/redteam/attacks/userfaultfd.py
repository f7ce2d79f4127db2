"""userfaultfd (syscall and /dev/userfaultfd): a tool to stretch race windows."""
from rtlib import done, native

native().rt_userfaultfd()
done()
