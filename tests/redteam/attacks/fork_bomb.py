"""A bounded fork bomb under limit-nproc (row 34): 200 children at most,
each living 1.5 s; prints how many started."""
from rtlib import done, native

lib = native()
lib.rt_fork_bomb(200, 1500)
done()
