"""The WAP ports' part of scripts/soak.sh, and the reflection measurement.

  python3 soak_wap.py hostile HOST BASE_PORT RATE SECONDS
      hostile datagrams toward the four WAP ports (BASE_PORT to BASE_PORT+3) at RATE per
      second for SECONDS, from forged-looking loopback sources (127.3.x.y): random bytes,
      WTP PDUs cut short, absurd TIDs (0x7FFF, TIDnew set), absurd SAR counts (a
      segmented invoke at PSN 255, a first packet that never ends, groups that never
      close), unknown PDU types and classes, Acks and Aborts of nothing, and
      connectionless WSP PDUs with lengths that run past the datagram. Prints JSON: how
      many it sent.
  python3 soak_wap.py decks DIR
      writes deck2k.wml and deck20k.wml (WML of about 2 and 20 KB of text) into DIR.
  python3 soak_wap.py reflect HOST:PORT URL COUNT [--rate R] [--sources A.B.C]
      COUNT connectionless WSP Gets of URL (no headers), spread over eight sources
      A.B.C.2 to A.B.C.9 (default 127.0.0.x) that never talked to the gateway, at R per
      second (default 200), then 2 s for the last answers; counts the bytes that came back
      to those sockets. Prints JSON: bytes sent, bytes received, their ratio.

Every loop is bounded by its count or its end time.
"""

import json
import os
import random
import select
import socket
import sys
import time

from soak_hostile import forged_sockets, send_paced


def uintvar(n):
    """WAP-230 §8.1.2's variable-length unsigned integer."""
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def wsp_get(tid, url):
    """A connectionless WSP Get (WAP-230 §8.2.3.1): TID, PDU type 0x40, URI."""
    uri = url.encode()
    return bytes([tid & 0xFF, 0x40]) + uintvar(len(uri)) + uri


def wtp(pdu_type, tid, rest=b"", gtr_ttr=0, rid=0, con=0):
    """A WTP PDU header (WAP-224 §8): CON, type, GTR/TTR, RID, then the TID."""
    first = (con << 7) | ((pdu_type & 0x0F) << 3) | ((gtr_ttr & 3) << 1) | (rid & 1)
    return bytes([first, (tid >> 8) & 0xFF, tid & 0xFF]) + rest


def hostile(rng):
    """One hostile datagram and the port offset it goes to."""
    kind = rng.randrange(10)
    tid = rng.choice([0, 1, 0x7FFF, 0xFFFF, rng.randrange(0x10000)])
    port = rng.randrange(4)
    if kind == 0:
        return os.urandom(rng.randrange(1, 300)), port
    if kind == 1:  # an Invoke cut short inside its header
        return wtp(1, tid, b"\x12")[: rng.randrange(1, 4)], port
    if kind == 2:  # an Invoke with TIDnew, class 2, a first packet that never ends
        return wtp(1, tid, bytes([0x22]) + os.urandom(rng.randrange(0, 1300)), gtr_ttr=0), 1
    if kind == 3:  # a segmented invoke at an absurd PSN, of a transaction never opened
        return wtp(5, tid, bytes([255]) + os.urandom(rng.randrange(0, 1300)), gtr_ttr=2), 1
    if kind == 4:  # groups that never close: PSNs 1..N without an end
        return wtp(5, tid, bytes([rng.randrange(1, 256)]) + os.urandom(100)), 1
    if kind == 5:  # unknown PDU types, class 3, version 3
        return wtp(rng.choice([0, 8, 15]), tid, bytes([0xC3]) + os.urandom(20)), port
    if kind == 6:  # Acks (with TIDok) and Aborts of transactions that do not exist
        return rng.choice([wtp(3, tid, b"", gtr_ttr=2), wtp(4, tid, bytes([1, 0xFF]))]), 1
    if kind == 7:  # concatenated PDUs whose lengths run past the datagram
        return bytes([0x00, 0x7F]) + wtp(1, tid, b"\x12\x01"), 1
    if kind == 8:  # a connectionless Get whose URI length runs past the datagram
        return bytes([tid & 0xFF, 0x40]) + uintvar(60000) + b"http://", 0
    return b"", port


def run_hostile(host, base, rate, seconds):
    rng = random.Random(37)

    def make(r):
        datagram, offset = hostile(r)
        return datagram, (host, base + offset)

    sent = send_paced(forged_sockets("127.3"), rate, seconds, make, rng)
    print(json.dumps({"sent": sent}))


def drain(socks, wait):
    """Bytes arriving on `socks` until nothing came for `wait` seconds."""
    got = 0
    while True:
        ready, _, _ = select.select(socks, [], [], wait)
        if not ready:
            return got
        for s in ready:
            try:
                got += len(s.recv(65536))
            except OSError:
                pass


def run_reflect(target, url, count, rate, prefix):
    host, port = target.rsplit(":", 1)
    socks = []
    for i in range(2, 10):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind((f"{prefix}.{i}", 0))
        socks.append(s)
    sent = received = 0
    next_at = time.monotonic()
    for n in range(count):
        sent += socks[n % 8].sendto(wsp_get(n, url), (host, int(port)))
        next_at += 1.0 / rate
        # Read what has come while pacing, so that no receive buffer overflows.
        received += drain(socks, max(0.0, next_at - time.monotonic()) or 0.0)
    received += drain(socks, 2.0)
    print(json.dumps({
        "gets": count,
        "bytes_sent": sent,
        "bytes_received": received,
        "factor": round(received / sent, 3) if sent else None,
    }))


def decks(directory):
    line = "The cup final goes to extra time; rain in the north. "
    for name, size in (("deck2k.wml", 2000), ("deck20k.wml", 20000)):
        text = (line * (size // len(line) + 1))[:size]
        with open(os.path.join(directory, name), "w") as f:
            f.write(
                '<?xml version="1.0"?>\n<!DOCTYPE wml PUBLIC "-//WAPFORUM//DTD WML 1.1//EN" '
                '"http://www.wapforum.org/DTD/wml_1.1.xml">\n'
                f'<wml><card id="c" title="News"><p>{text}</p></card></wml>\n'
            )


def main(argv):
    if len(argv) >= 3 and argv[1] == "decks":
        decks(argv[2])
        return 0
    if len(argv) >= 6 and argv[1] == "hostile":
        run_hostile(argv[2], int(argv[3]), float(argv[4]), float(argv[5]))
        return 0
    if len(argv) >= 5 and argv[1] == "reflect":
        args = argv[5:]
        rate = float(args[args.index("--rate") + 1]) if "--rate" in args else 200.0
        prefix = args[args.index("--sources") + 1] if "--sources" in args else "127.0.0"
        run_reflect(argv[2], argv[3], min(int(argv[4]), 100000), rate, prefix)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
