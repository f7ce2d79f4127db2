"""ptrace (POKEDATA) or process_vm_writev into a sibling process (issue)."""
from rtlib import CTX, b, done, native

lib = native()
lib.rt_poke_sibling(b(CTX["marker"]), 1 if "vm" in CTX["args"] else 0)
done()
