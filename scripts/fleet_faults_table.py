"""One row of scripts/fleet-faults.sh's table from a run's files.

Reads the load's outcome log (`wtlsperf load --outcomes`), nginx's access log of the run
(one line per balancer session: end time, client socket, upstream node, status, length)
and the instants of the fault, and prints one JSON object:

- lost: handshakes that failed, split into lost_on_node (in flight on the killed node
  at the kill, or sent there before the restart), lost_at_reload (in flight when the
  health checker reloaded nginx, or within RELOAD_MS after: a reload ends every UDP
  session of the old nginx worker, so a handshake's next datagram arrives from a new
  balancer port, a stranger to the node holding its state; and the reload that brings a
  node back moves its clients home) and lost_elsewhere (neither: must be 0);
  in_flight_on_node: every handshake in flight at the kill whose sessions went to the
  killed node; sent_to_dead: handshakes started between the kill and the restart that
  the balancer still sent there.
- detect_ms: from the kill to the health checker's marking the node down (and
  reloading nginx); empty for a Redis fault.
- reroute_ms: from the kill to the start of the last balancer session that still went
  to the dead node before its restart; empty for a Redis fault.
- resume_before / during / after: share of the handshakes that offered a stored session
  and were abbreviated, by start time: before the fault, between the fault and a
  second after the restart (the health checker puts the node back within its probe
  interval), and after.

Usage: python3 fleet_faults_table.py OUTCOMES ACCESS_LOG HEALTH_LOG FAULT_MS RESTART_MS
       BACK_MS DEAD_PORT|- (times in Unix ms).
"""

import csv
import json
import sys

# A reload is signalled at its logged time; the old nginx worker serves until the new one
# has started, which took about 0.1 s on the 2-core test machine (1 s allows for a loaded one): a handshake in
# flight within this window after the signal counts as in flight at the reload.
RELOAD_MS = 1000.0


def read_outcomes(path):
    with open(path, newline="") as f:
        return [
            {
                "start": float(r["start_unix_ms"]),
                "end": float(r["end_unix_ms"]),
                "client": r["client"],
                "offered": r["resume_offered"] == "true",
                "outcome": r["outcome"],
            }
            for r in csv.DictReader(f)
        ]


def read_sessions(path):
    """(start_ms, client, upstream) per balancer session."""
    sessions = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) < 5:
                    continue
                end_s, client, upstream, _status, length_s = parts[:5]
                try:
                    start = (float(end_s) - float(length_s)) * 1000.0
                except ValueError:
                    continue
                sessions.append((start, client, upstream))
    except FileNotFoundError:
        pass
    return sessions


def share(rows):
    offered = [r for r in rows if r["offered"]]
    if not offered:
        return None
    return sum(r["outcome"] == "abbreviated" for r in offered) / len(offered)


def main(argv):
    outcomes_path, access_path, health_path = argv[1], argv[2], argv[3]
    fault, restart, back = float(argv[4]), float(argv[5]), float(argv[6])
    dead = None if argv[7] == "-" else "127.0.0.1:" + argv[7]
    detect = None
    if dead:
        with open(health_path) as f:
            marks = [float(l.split()[0]) for l in f if l.split()[1:] == ["down", argv[7]]]
        later = [m for m in marks if m >= fault]
        detect = (min(later) - fault) if later else None
    rows = read_outcomes(outcomes_path)
    sessions = read_sessions(access_path)
    # Every upstream a client socket's sessions went to (a retransmission after a
    # refused datagram opens a new session, possibly to another node).
    upstreams = {}
    for _start, client, upstream in sessions:
        upstreams.setdefault(client, set()).update(u.strip(",") for u in upstream.split())
    reloads = []
    if health_path:
        with open(health_path) as f:
            reloads = [float(l.split()[0]) for l in f if len(l.split()) == 3]
    failed = [r for r in rows if r["outcome"] == "failed"]
    touched = lambda r: dead is not None and dead in upstreams.get(r["client"], ())
    on_node = [r for r in rows if r["start"] <= fault < r["end"] and touched(r)]
    sent_to_dead = [r for r in rows if fault < r["start"] < restart and touched(r)]
    exposed = lambda r: touched(r) and (r["start"] <= fault < r["end"] or fault < r["start"] < restart)
    lost_on_node = [r for r in failed if exposed(r)]
    at_reload = [
        r for r in failed
        if not exposed(r) and any(r["start"] <= t + RELOAD_MS and t < r["end"] for t in reloads)
    ]
    reroute = None
    if dead:
        late = [s for s, _c, u in sessions if dead in u and fault <= s < restart]
        reroute = (max(late) - fault) if late else 0.0
    windows = {
        "before": [r for r in rows if r["start"] < fault],
        "during": [r for r in rows if fault <= r["start"] < back],
        "after": [r for r in rows if r["start"] >= back],
    }
    result = {
        "started": len(rows),
        "completed": len(rows) - len(failed),
        "lost": len(failed),
        "lost_on_node": len(lost_on_node),
        "lost_at_reload": len(at_reload),
        "lost_elsewhere": len(failed) - len(lost_on_node) - len(at_reload),
        "in_flight_on_node": len(on_node) if dead else None,
        "sent_to_dead": len(sent_to_dead) if dead else None,
        "reloads": len(reloads),
        "detect_ms": detect,
        "reroute_ms": reroute,
        "restart_ms": restart - fault,
        "sessions_logged": len(sessions),
    }
    for name, window in windows.items():
        result["resume_" + name] = share(window)
        result["offered_" + name] = sum(r["offered"] for r in window)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
