"""Rows of scripts/fleet-sizing-check.sh.

  python3 fleet_sizing_check.py BEFORE AFTER RATE SECONDS
      one JSON line per node for the load offered between two statistics snapshots:
      jobs, job rate, utilisation, measured mean wait, the Pollaczek-Khinchin wait from
      the node's own service moments, and their ratio.
  python3 fleet_sizing_check.py --table ROWS [CSV]
      the table of those lines (and a CSV copy).
"""

import csv
import json
import sys

COLUMNS = ["offered_hs_per_s", "node", "jobs", "job_share", "jobs_per_s", "utilisation",
           "mean_service_us", "measured_wait_us", "pk_wait_us", "pk_over_measured"]


def delta(before, after):
    """Jobs, and the sums of wait, service and service squared, between two samples."""
    def sums(x):
        n = x["jobs"]
        return n, x["mean_wait_us"] * n, x["mean_service_us"] * n, x["service_m2_us2"] * n
    b, a = sums(before), sums(after)
    return [y - x for x, y in zip(b, a)]


def rows(before_path, after_path, rate, seconds):
    before, after = json.load(open(before_path)), json.load(open(after_path))
    deltas = [delta(b, a) for b, a in zip(before, after)]
    total = sum(d[0] for d in deltas) or 1
    out = []
    for i, (n, wait, service, m2) in enumerate(deltas):
        if n <= 0:
            continue
        lam = n / seconds / 1e6  # jobs per microsecond
        es, es2 = service / n, m2 / n
        rho = lam * es
        pk = lam * es2 / (2 * (1 - rho)) if rho < 1 else None
        measured = wait / n
        out.append({
            "offered_hs_per_s": rate, "node": i, "jobs": int(n), "job_share": n / total,
            "jobs_per_s": n / seconds, "utilisation": rho, "mean_service_us": es,
            "measured_wait_us": measured, "pk_wait_us": pk,
            "pk_over_measured": pk / measured if pk is not None and measured > 0 else None,
        })
    return out


def table(path, csv_path):
    lines = [json.loads(l) for l in open(path) if l.strip()]
    print(" ".join(f"{c:>17}" for c in COLUMNS))
    for r in lines:
        cells = []
        for c in COLUMNS:
            v = r[c]
            cells.append("-" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v)))
        print(" ".join(f"{x:>17}" for x in cells))
    if csv_path:
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, COLUMNS)
            w.writeheader()
            w.writerows(lines)


def main(argv):
    if argv[1] == "--table":
        table(argv[2], argv[3] if len(argv) > 3 else None)
        return
    for r in rows(argv[1], argv[2], float(argv[3]), float(argv[4])):
        print(json.dumps(r))


if __name__ == "__main__":
    main(sys.argv)
