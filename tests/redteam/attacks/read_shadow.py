"""Read system secrets outside the python runtime's grants (row 2)."""
from rtlib import done, read, try_

for p in ("/etc/shadow", "/etc/gshadow", "/root/.bash_history", "/etc/ssh/ssh_host_ed25519_key"):
    try_(p, read, p)
done()
