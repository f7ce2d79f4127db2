"""Forge a UDP datagram to the canary: AF_PACKET, raw IP with a header, raw UDP."""
from rtlib import CTX, done, native

lib = native()
for how in range(3):
    lib.rt_raw_inject(CTX["udp"], b"RT-RAW-INJECT", how)
done()
