"""AF_PACKET capture of loopback traffic between two other processes (the
harness talks to itself with a canary in the payload)."""
from rtlib import done, native

native().rt_packet_sniff(1500)
done()
