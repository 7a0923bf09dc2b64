"""The fleet's health checker: takes a dead gateway out of nginx's hash ring, and puts it
back when it answers again.

Why: nginx 1.22's stream module (Debian 12's) does not count a refused UDP datagram
(ICMP port unreachable) against the upstream, so `max_fails` never takes a crashed UDP
node out of the ring and its clients' datagrams keep going to it until it restarts
(docs/network.md). Active health checks are in the commercial nginx only; this is the
usual replacement: probe each node, mark a dead one `down` in the configuration and
reload nginx (SIGHUP: new sessions follow the new ring at once, existing ones finish).

Probe: an empty datagram from a connected socket to each node. A node whose port is
closed answers with ICMP port unreachable, which the next receive reports as refused;
a live gateway drops the empty datagram silently. Every change is logged with its Unix
time in ms (`down PORT` / `up PORT`) to stdout.

Usage: python3 fleet_health.py CONF NGINX_PID INTERVAL_S MAX_S PORT...
Runs at most MAX_S seconds, and stops when nginx is gone.
"""

import os
import re
import signal
import socket
import sys
import time


def probe(ports, wait_s=0.05):
    """The set of ports that refused a datagram."""
    socks = {}
    for p in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", p))
            s.send(b"")
        except ConnectionRefusedError:
            pass
        socks[p] = s
    time.sleep(wait_s)
    dead = set()
    for p, s in socks.items():
        try:
            s.recv(1)
        except ConnectionRefusedError:
            dead.add(p)
        except BlockingIOError:
            pass
        finally:
            s.close()
    return dead


def rewrite(conf, dead):
    """Marks the servers of `dead` ports `down` in nginx's configuration, the others not."""
    with open(conf) as f:
        text = f.read()

    def mark(m):
        port = int(m.group(1))
        return m.group(0).split(" down")[0].rstrip(";") + (" down;" if port in dead else ";")

    text = re.sub(r"server 127\.0\.0\.1:(\d+)[^;]*;", mark, text)
    tmp = conf + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, conf)


def main(argv):
    conf, nginx_pid = argv[1], int(argv[2])
    interval, max_s = float(argv[3]), float(argv[4])
    ports = [int(p) for p in argv[5:]]
    deadline = time.monotonic() + max_s
    down = set()
    while time.monotonic() < deadline:
        try:
            os.kill(nginx_pid, 0)
        except OSError:
            return
        dead = probe(ports)
        # A gateway that was just restarted is up once its port is bound again.
        if dead != down:
            for p in sorted(dead - down):
                print(f"{time.time() * 1000:.0f} down {p}", flush=True)
            for p in sorted(down - dead):
                print(f"{time.time() * 1000:.0f} up {p}", flush=True)
            down = dead
            rewrite(conf, down)
            os.kill(nginx_pid, signal.SIGHUP)
        time.sleep(interval)


if __name__ == "__main__":
    main(sys.argv)
