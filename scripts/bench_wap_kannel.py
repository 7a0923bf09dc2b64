#!/usr/bin/env python3
"""The measurements of scripts/bench-wap-kannel.sh: one CSV row per fakewap run (from its
log and a pcap of the gateway's port 9201), one per `wtlsperf client` run on a secure
port, and a Markdown table of medians over runs.

  bench_wap_kannel.py header run|wtls
  bench_wap_kannel.py run --gateway G --threads T --run R --sessions N --wall-s S --rc C --pcap F --log F
  bench_wap_kannel.py wtls --port P --run R --pages N --wall-s S --log F
  bench_wap_kannel.py table --runs runs.csv --wtls wtls.csv
  bench_wap_kannel.py meta --started UTC --binary B --commit C --options O

A session's latency is read off the capture: from the client socket's WSP Connect
(a WTP Invoke) to the first WTP Result toward that socket that carries a WSP Reply (the
answer to its Get). fakewap runs one session at a time per socket, so the pairing per
client port is exact; a session whose Reply never came is counted as unanswered.
"""
import argparse
import csv
import datetime
import json
import os
import re
import statistics
import struct
import sys

RUN_COLUMNS = [
    "gateway", "threads", "run", "sessions", "completed", "wall_s", "sessions_per_s",
    "p50_ms", "p95_ms", "p99_ms", "max_ms", "unanswered", "not_reply", "not_200", "panics",
    "fakewap_worst_s", "fakewap_rc",
]
WTLS_COLUMNS = ["port", "run", "pages", "ok", "wall_s", "pages_per_s", "get_p50_ms",
                "get_p95_ms", "get_p99_ms", "handshake_p50_ms"]
WTP_INVOKE, WTP_RESULT, WTP_SEGMENTED_RESULT = 1, 2, 6
WSP_CONNECT, WSP_REPLY = 0x01, 0x04


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(q / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def udp_packets(path):
    """(time s, src port, dst port, payload) of each UDP/IPv4 datagram of a pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    link_len = {1: 14, 113: 16, 0: 4}.get(linktype)
    if link_len is None:
        raise SystemExit(f"{path}: link type {linktype} not handled")
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        ip = frame[link_len:]
        if len(ip) < 28 or ip[0] >> 4 != 4 or ip[9] != 17:
            continue
        ihl = (ip[0] & 0x0F) * 4
        sport, dport = struct.unpack(">HH", ip[ihl:ihl + 4])
        t = sec + frac / (1e9 if nano else 1e6)
        yield t, sport, dport, ip[ihl + 8:]


def wsp_type(payload, header_len):
    """The WSP PDU type after a WTP header without TPIs; None when TPIs are present."""
    if len(payload) <= header_len or payload[0] & 0x80:
        return None
    return payload[header_len]


def session_latencies(path, gateway_port=9201):
    """Latencies (ms) of the captured sessions, and how many never got their Reply."""
    open_at = {}
    latencies = []
    for t, sport, dport, payload in udp_packets(path):
        if not payload:
            continue
        pdu = (payload[0] >> 3) & 0x0F
        if dport == gateway_port and pdu == WTP_INVOKE and wsp_type(payload, 4) == WSP_CONNECT:
            open_at.setdefault(sport, t)
        elif sport == gateway_port and pdu in (WTP_RESULT, WTP_SEGMENTED_RESULT):
            start = open_at.get(dport)
            if start is not None and pdu == WTP_RESULT and wsp_type(payload, 3) == WSP_REPLY:
                latencies.append((t - start) * 1e3)
                del open_at[dport]
    return latencies, len(open_at)


def fakewap_log(path):
    text = open(path, errors="replace").read()
    total = re.search(r"made total (\d+) transactions", text)
    worst = re.search(r"best, worst and average transaction: ([\d.]+) s, ([\d.]+) s", text)
    return {
        "completed": int(total.group(1)) if total else 0,
        "not_reply": len(re.findall(r"is not Reply", text)),
        # A Reply whose status is not 200 (e.g. 503 from a gateway that refuses work).
        "not_200": len(re.findall(r"received reply with status \d+", text)),
        "panics": len(re.findall(r"PANIC", text)),
        "fakewap_worst_s": worst.group(2) if worst else "",
    }


def row_run(a):
    lat, unanswered = session_latencies(a.pcap)
    log = fakewap_log(a.log)
    wall = float(a.wall_s)
    row = {
        "gateway": a.gateway, "threads": a.threads, "run": a.run, "sessions": a.sessions,
        "completed": log["completed"], "wall_s": f"{wall:.3f}",
        "sessions_per_s": f"{log['completed'] / wall:.1f}" if wall > 0 else "",
        "unanswered": unanswered, "not_reply": log["not_reply"], "not_200": log["not_200"],
        "panics": log["panics"],
        "fakewap_worst_s": log["fakewap_worst_s"], "fakewap_rc": a.rc,
    }
    for name, q in (("p50_ms", 50), ("p95_ms", 95), ("p99_ms", 99), ("max_ms", 100)):
        row[name] = f"{percentile(lat, q):.2f}" if lat else ""
    csv.DictWriter(sys.stdout, RUN_COLUMNS, lineterminator="\n").writerow(row)


def row_wtls(a):
    text = open(a.log, errors="replace").read()
    gets = [float(x) for x in re.findall(r"WSP GET \S+: status 200,.* in ([\d.]+) ms", text)]
    hs = [float(x) for x in re.findall(r"^handshake \d+ .*: ([\d.]+) ms,", text, re.M)]
    wall = float(a.wall_s)
    row = {"port": a.port, "run": a.run, "pages": a.pages, "ok": len(gets),
           "wall_s": f"{wall:.3f}", "pages_per_s": f"{len(gets) / wall:.1f}" if wall else ""}
    for name, q in (("get_p50_ms", 50), ("get_p95_ms", 95), ("get_p99_ms", 99)):
        row[name] = f"{percentile(gets, q):.2f}" if gets else ""
    row["handshake_p50_ms"] = f"{percentile(hs, 50):.2f}" if hs else ""
    csv.DictWriter(sys.stdout, WTLS_COLUMNS, lineterminator="\n").writerow(row)


def row_origin(a):
    times = [float(x) * 1e3 for x in open(a.times).read().split()]
    row = {"port": "origin", "run": a.run, "pages": len(times), "ok": len(times),
           "wall_s": f"{sum(times) / 1e3:.3f}", "pages_per_s": "", "handshake_p50_ms": ""}
    for name, q in (("get_p50_ms", 50), ("get_p95_ms", 95), ("get_p99_ms", 99)):
        row[name] = f"{percentile(times, q):.2f}" if times else ""
    csv.DictWriter(sys.stdout, WTLS_COLUMNS, lineterminator="\n").writerow(row)


def median_of(rows, key):
    values = [float(r[key]) for r in rows if r[key] != ""]
    return statistics.median(values) if values else float("nan")


def table(a):
    rows = list(csv.DictReader(open(a.runs)))
    out = ["| threads | gateway | runs | sessions/s | p50 ms | p95 ms | p99 ms | max ms "
           "| not Reply | not 200 | unanswered | fakewap worst s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    threads = sorted({int(r["threads"]) for r in rows})
    for t in threads:
        for g in ("ours", "kannel"):
            rs = [r for r in rows if int(r["threads"]) == t and r["gateway"] == g]
            if not rs:
                continue
            errors = [int(r["not_reply"]) for r in rs]
            unanswered = [int(r["unanswered"]) for r in rs]
            not_200 = [int(r["not_200"]) for r in rs]
            out.append(
                f"| {t} | {g} | {len(rs)} | {median_of(rs, 'sessions_per_s'):.0f} "
                f"| {median_of(rs, 'p50_ms'):.2f} | {median_of(rs, 'p95_ms'):.2f} "
                f"| {median_of(rs, 'p99_ms'):.2f} | {max(float(r['max_ms'] or 'nan') for r in rs):.1f} "
                f"| {'/'.join(map(str, errors))} | {'/'.join(map(str, not_200))} "
                f"| {'/'.join(map(str, unanswered))} "
                f"| {max(float(r['fakewap_worst_s'] or 'nan') for r in rs):.1f} |")
        ours = [r for r in rows if int(r["threads"]) == t and r["gateway"] == "ours"]
        kannel = [r for r in rows if int(r["threads"]) == t and r["gateway"] == "kannel"]
        if ours and kannel and median_of(kannel, "sessions_per_s") > 0:
            ratio = median_of(ours, "sessions_per_s") / median_of(kannel, "sessions_per_s")
            out.append(f"| {t} | ours / kannel | | {ratio:.1f}x | | | "
                       f"{median_of(ours, 'p99_ms') / median_of(kannel, 'p99_ms'):.2f}x | | | | | |")
    if a.wtls:
        wrows = list(csv.DictReader(open(a.wtls)))
        out += ["", "| port | runs | pages ok | pages/s (handshake + GET) | GET p50 ms "
                "| GET p95 ms | GET p99 ms | handshake p50 ms |", "|---|---|---|---|---|---|---|---|"]
        for port in sorted({r["port"] for r in wrows}):
            rs = [r for r in wrows if r["port"] == port]
            ok = ", ".join(f"{r['ok']} of {r['pages']}" for r in rs)
            out.append(f"| {port} | {len(rs)} | {ok} | {median_of(rs, 'pages_per_s'):.1f} "
                       f"| {median_of(rs, 'get_p50_ms'):.2f} | {median_of(rs, 'get_p95_ms'):.2f} "
                       f"| {median_of(rs, 'get_p99_ms'):.2f} | {median_of(rs, 'handshake_p50_ms'):.2f} |")
    print("\n".join(out))


def machine():
    """CPU model and logical CPUs, as `wtlsperf evaluate` names the machine."""
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model} ({os.cpu_count()} cores)"


def meta(a):
    """meta.json: when, at which commit, with which binary and options the run was made
    (`wtlsperf evaluate --wap-bench` cites it), the end time being now."""
    finished = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    json.dump({"started_utc": a.started, "finished_utc": finished, "commit": a.commit,
               "binary": a.binary, "options": a.options, "machine": machine()},
              sys.stdout, indent=2)
    print()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("header")
    h.add_argument("kind", choices=["run", "wtls"])
    r = sub.add_parser("run")
    for name in ("gateway", "threads", "run", "sessions", "wall-s", "rc", "pcap", "log"):
        r.add_argument("--" + name, required=True)
    w = sub.add_parser("wtls")
    for name in ("port", "run", "pages", "wall-s", "log"):
        w.add_argument("--" + name, required=True)
    o = sub.add_parser("origin")
    for name in ("run", "times"):
        o.add_argument("--" + name, required=True)
    t = sub.add_parser("table")
    t.add_argument("--runs", required=True)
    t.add_argument("--wtls")
    m = sub.add_parser("meta")
    for name in ("started", "binary", "commit", "options"):
        m.add_argument("--" + name, required=True)
    a = p.parse_args()
    if a.cmd == "header":
        cols = RUN_COLUMNS if a.kind == "run" else WTLS_COLUMNS
        csv.writer(sys.stdout, lineterminator="\n").writerow(cols)
    elif a.cmd == "run":
        row_run(a)
    elif a.cmd == "wtls":
        row_wtls(a)
    elif a.cmd == "origin":
        row_origin(a)
    elif a.cmd == "meta":
        meta(a)
    else:
        table(a)


if __name__ == "__main__":
    main()
