"""personality(READ_IMPLIES_EXEC | ADDR_NO_RANDOMIZE): weaken what runs next."""
from rtlib import done, native

native().rt_personality()
done()
