"""sendmsg(SCM_RIGHTS) naming descriptors the program does not hold, among
them the number the caller opened the secret on: the supervisor performs
sendmsg, so it must duplicate from the program, never its own table."""
from rtlib import done, native

native().rt_scm_probe(96)
done()
