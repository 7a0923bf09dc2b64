"""Hostile datagrams for scripts/soak.sh: random bytes, WTLS record headers whose length
runs past the datagram, oversized junk and empty datagrams, from forged-looking loopback
sources (127.2.x.y, apart from the load's 127.0.0.x and the flood's sources), at RATE per
second for SECONDS. Prints how many it sent.

Usage: python3 soak_hostile.py HOST:PORT RATE SECONDS
"""

import os
import random
import socket
import sys
import time


def datagram(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return os.urandom(rng.randrange(1, 200))
    if kind == 1:
        # A handshake record (content type 22) claiming more bytes than follow.
        return bytes([0x16, 0x00, 0x00, 0xFF, 0xFF]) + os.urandom(rng.randrange(0, 40))
    if kind == 2:
        return os.urandom(1400)
    return b""


def forged_sockets(prefix):
    """Sixteen sockets on forged-looking loopback sources PREFIX.i.(2+i) (127.0.0.1 where
    such an address cannot be bound)."""
    socks = []
    for i in range(16):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.bind((f"{prefix}.{i}.{2 + i}", 0))
        except OSError:
            s.bind(("127.0.0.1", 0))
        socks.append(s)
    return socks


def send_paced(socks, rate, seconds, make, rng):
    """Sends make(rng) -> (datagram, (host, port)) from a random socket of `socks` at
    `rate` per second for `seconds`; returns how many were sent."""
    end = time.monotonic() + seconds
    sent = 0
    next_at = time.monotonic()
    while time.monotonic() < end:
        datagram, to = make(rng)
        try:
            rng.choice(socks).sendto(datagram, to)
            sent += 1
        except OSError:
            pass
        next_at += 1.0 / rate
        time.sleep(max(0.0, next_at - time.monotonic()))
    return sent


def main(argv):
    host, port = argv[1].rsplit(":", 1)
    rate, seconds = float(argv[2]), float(argv[3])
    rng = random.Random(7)
    socks = forged_sockets("127.2")
    sent = send_paced(socks, rate, seconds, lambda r: (datagram(r), (host, int(port))), rng)
    print(f"sent {sent}")


if __name__ == "__main__":
    main(sys.argv)
