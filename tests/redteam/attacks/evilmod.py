# A module outside python-import=: importing it must not run it.
print("RT-EVILMOD-RAN", flush=True)
