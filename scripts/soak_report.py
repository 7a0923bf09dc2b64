"""The soak's report (scripts/soak.sh).

  python3 soak_report.py live DIR
      the newest sample of every gateway under DIR (node*.stats.jsonl).
  python3 soak_report.py verdict DIR... [--max-loss X]
      per gateway: samples, RSS and occupancy at the start, in the middle third (max)
      and in the last third (mean), and whether either grew without bound (the rule is
      in soak.sh); the legitimate handshakes (load-*.json, flood-*.json) started and
      failed. A WAP gateway's directory (its samples have `ports`) counts its WSP Gets
      (load-wap.json) instead, must have stopped cleanly (a shutdown sample), and its
      reflection.json must show at most 2x. Exits 1 when a rule fails.
"""

import glob
import json
import os
import sys

MIB = 1 << 20


def samples(path):
    """A gateway's samples while it served (the one it writes as it stops is left out:
    its memory is no longer the serving process's)."""
    out = []
    with open(path) as f:
        for line in f:
            try:
                x = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
            if not x.get("shutdown", False):
                out.append(x)
    return out


def live_wap(directory, path, x):
    ports = " ".join(
        f"{p['port']}:req={p['service']['requests']},tx={p['service']['transactions']},"
        f"sess={p['service']['sessions']},sar={p['service']['reassemblies']}"
        for p in x["ports"]
    )
    r = x["reflection"]
    print(
        f"{os.path.basename(directory):>6} {os.path.basename(path).split('.')[0]:>5}"
        f" t={x['t_s']:6.0f}s rss={x['rss_bytes'] / MIB:6.1f}MiB"
        f" occupancy={x['occupancy']:.4f} {ports} refused_pages={r['refused_pages']}"
        f" withheld={r['withheld']} proofs={r['proofs']}",
        flush=True,
    )


def live(directory):
    for path in sorted(glob.glob(os.path.join(directory, "node*.stats.jsonl"))):
        s = samples(path)
        if not s:
            continue
        x = s[-1]
        if "ports" in x:
            live_wap(directory, path, x)
            continue
        done = sum(x["handshakes_completed"].values())
        print(
            f"{os.path.basename(directory):>6} {os.path.basename(path).split('.')[0]:>5}"
            f" t={x['t_s']:6.0f}s rss={x['rss_bytes'] / MIB:6.1f}MiB"
            f" occupancy={x['occupancy']:.4f} peers={x['peers']} half_open={x['half_open']}"
            f" handshakes={done} dropped={x['dropped']} rate_limited={x['rate_limited']}"
            f" refused={x['refused']} evicted={x['evicted']}",
            flush=True,
        )


def thirds(values):
    n = len(values)
    return values[n // 3 : 2 * n // 3], values[2 * n // 3 :]


def grows(values, share, slack):
    """The soak's rule: the last third's mean above the middle third's max by more
    than `share` of it plus `slack`."""
    middle, last = thirds(values)
    if not middle or not last:
        return None, None, False
    peak, mean = max(middle), sum(last) / len(last)
    return peak, mean, mean > peak * (1 + share) + slack


def legit(directory):
    started = failed = 0
    for path in glob.glob(os.path.join(directory, "load-*.json")):
        try:
            r = json.load(open(path))
        except (OSError, json.JSONDecodeError):
            continue
        started += r.get("started", 0)
        failed += r.get("failed", 0)
    for path in glob.glob(os.path.join(directory, "flood-*.json")):
        try:
            r = json.load(open(path))
        except (OSError, json.JSONDecodeError):
            continue
        started += r.get("legit_attempted", 0)
        failed += r.get("legit_attempted", 0) - r.get("legit_completed", 0)
    return started, failed


def wap_checks(directory, name):
    """A WAP gateway's own rules: it stopped cleanly, and the reflection stayed <= 2x."""
    path = os.path.join(directory, "reflection.json")
    if not os.path.exists(path):
        return []
    bad = []
    stats = os.path.join(directory, "node0.stats.jsonl")
    with open(stats) as f:
        if not any('"shutdown":true' in line for line in f):
            bad.append(f"{name}: the WAP gateway did not stop cleanly (no shutdown sample)")
    try:
        r = json.load(open(path))
        print(f"{name:>6} reflection: {r['bytes_received']} B back for {r['bytes_sent']} B"
              f" sent ({r['factor']}x)")
        if r["bytes_received"] > 2 * r["bytes_sent"]:
            bad.append(f"{name}: reflection {r['factor']}x (> 2x)")
    except (OSError, json.JSONDecodeError, KeyError) as e:
        bad.append(f"{name}: no reflection measurement ({e})")
    return bad


def verdict(directories, max_loss):
    bad = []
    print(
        f"{'target':>6} {'node':>5} {'samples':>7} {'rss0_MiB':>9} {'rss_mid_max':>11}"
        f" {'rss_last_mean':>13} {'occ_mid_max':>11} {'occ_last_mean':>13}"
    )
    for d in directories:
        name = os.path.basename(d)
        for path in sorted(glob.glob(os.path.join(d, "node*.stats.jsonl"))):
            node = os.path.basename(path).split(".")[0]
            s = samples(path)
            rss = [x["rss_bytes"] for x in s]
            occ = [x["occupancy"] for x in s]
            rp, rm, rbad = grows(rss, 0.10, 4 * MIB)
            op, om, obad = grows(occ, 0.10, 0.01)
            if rp is None:
                bad.append(f"{name} {node}: {len(s)} samples, too few for thirds")
                continue
            print(
                f"{name:>6} {node:>5} {len(s):>7} {rss[0] / MIB:>9.1f} {rp / MIB:>11.1f}"
                f" {rm / MIB:>13.1f} {op:>11.4f} {om:>13.4f}"
            )
            if rbad:
                bad.append(f"{name} {node}: RSS grows ({rp / MIB:.1f} -> {rm / MIB:.1f} MiB)")
            if obad:
                bad.append(f"{name} {node}: occupancy grows ({op:.4f} -> {om:.4f})")
        bad.extend(wap_checks(d, name))
        started, failed = legit(d)
        loss = failed / started if started else 1.0
        what = "WSP Gets" if os.path.exists(os.path.join(d, "load-wap.json")) else "handshakes"
        print(f"{name:>6} legitimate {what}: {started} started, {failed} failed ({loss:.4f})")
        if started == 0:
            bad.append(f"{name}: no legitimate handshake ran")
        elif loss > max_loss:
            bad.append(f"{name}: {loss:.4f} of legitimate handshakes failed (> {max_loss})")
    for b in bad:
        print("soak: FAILED " + b, file=sys.stderr)
    return 1 if bad else 0


def main(argv):
    if argv[1] == "live":
        live(argv[2])
        return 0
    args = argv[2:]
    max_loss = 0.01
    if "--max-loss" in args:
        i = args.index("--max-loss")
        max_loss = float(args[i + 1])
        del args[i : i + 2]
    return verdict(args, max_loss)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
