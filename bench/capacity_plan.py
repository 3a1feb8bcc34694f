#!/usr/bin/python3
"""capacity_plan.py [--inputs FILE] [--check DOC]

The capacity plan's calculation (docs/capacity-plan.md): from the measured
per-request figures and the stated assumptions in bench/capacity_inputs.json,
how many nginx nodes, pods and Redis instances serve 10x, 100x and 1000x
today's measured peak, and what breaks first on the way to each step.

Prints the plan's tables (Markdown). With --check DOC: exits 1 unless DOC
holds exactly these tables between the markers
<!-- capacity-plan:begin --> and <!-- capacity-plan:end --> (ctest
capacity_plan_doc: the document cannot drift from the calculation).
Python 3 standard library only.
"""

import argparse
import json
import math
import os
import sys

STEPS = (1, 10, 100, 1000)
BEGIN = "<!-- capacity-plan:begin -->"
END = "<!-- capacity-plan:end -->"


def load_inputs(path):
    """The inputs file: {"measured": {...}, "assumed": {...}}, each name with
    its value, unit and where it comes from ("how" for a measurement, "why"
    for an assumption)."""
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    values = {}
    for section, note in (("measured", "how"), ("assumed", "why")):
        for name, entry in raw[section].items():
            if name in values:
                raise SystemExit(f"{path}: {name} is both measured and assumed")
            for field in ("value", "unit", note):
                if field not in entry:
                    raise SystemExit(f"{path}: {section}.{name} has no {field}")
            values[name] = float(entry["value"])
    return raw, values


def per_s(v):
    """A figure with three significant digits below 1,000, whole above."""
    if v <= 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(v))))
    return f"{round(v, digits):,.{digits}f}"


def size(b):
    """Bytes in binary units, three significant figures."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if b < 1024 or unit == "PiB":
            return f"{per_s(b)} {unit}"
        b /= 1024
    return f"{b} PiB"  # unreachable


def seconds(s):
    return f"{per_s(s * 1000)} ms" if s < 1 else f"{per_s(s)} s"


class Plan:
    """The fleet and its limits at `m` times today's measured peak."""

    def __init__(self, v, m):
        self.v, self.m = v, m
        # Traffic: today's measured peak (settles and balance reads at 32
        # connections on the bench machine) times m, and the assumed mix.
        self.settles = m * v["peak_settles_per_s"]
        self.reads = m * v["peak_reads_per_s"]
        self.history = self.reads * v["history_pages_per_read"]
        self.replays = self.settles * v["replays_per_settle"]
        answered = self.settles + self.reads + self.history + self.replays
        share = v["refusal_share"]
        self.refusals = answered * share / (1 - share)
        self.requests = answered + self.refusals
        self.kinds = {
            "settle": self.settles, "balance": self.reads, "history": self.history,
            "replay": self.replays, "refusal": self.refusals,
        }
        util = v["utilisation"]
        # nginx: CPU per request type, cores of every node at `util`.
        self.nginx_core_s = sum(n * v[f"nginx_us_{k}"] for k, n in self.kinds.items()) / 1e6
        self.nodes = max(int(v["min_nodes"]), math.ceil(self.nginx_core_s / (v["node_cores"] * util)))
        self.workers = self.nodes * v["workers_per_node"]
        # Pods: every limit one pod has, the largest decides.
        pg_core_s = (self.settles * v["pg_us_settle"] + self.reads * v["pg_us_balance"]
                     + self.history * v["pg_us_history"]) / 1e6
        self.syncs = self.settles * v["wal_syncs_per_settle"]
        self.wal_bytes = self.settles * v["wal_bytes_per_settle"]
        daily = self.settles * 86400 * v["average_to_peak"]
        self.disk_per_day = daily * (v["ledger_bytes_per_settle"] + v["kept_30d_bytes_per_settle"])
        # Disk a pod must hold at the horizon: the books for `horizon_days`,
        # idempotency records and events for the 30 days they are kept.
        disk_needed = daily * (v["ledger_bytes_per_settle"] * v["horizon_days"]
                               + v["kept_30d_bytes_per_settle"] * 30)
        pod_limits = {
            "CPU": pg_core_s / (v["pod_cores"] * util),
            "WAL syncs": self.syncs / (v["fdatasync_per_s"] * util),
            "disk": disk_needed / (v["pod_disk_bytes"] * v["disk_fill"]),
        }
        self.pod_need = pod_limits
        self.pods = max(1, math.ceil(max(pod_limits.values())))
        # Every worker of every node keeps its pool and listener on every pod:
        # each pod sees every worker, each worker holds every pod's sockets
        # (nginx connections, out of worker_connections).
        self.conns_per_pod = self.workers * v["pg_connections_per_worker"]
        self.conns_per_worker = self.pods * v["pg_connections_per_worker"]
        # Redis: commands per request type; a settle's record kept `redis_ttl_s`.
        self.redis_ops = sum(n * v[f"redis_ops_{k}"] for k, n in self.kinds.items())
        self.redis_bytes = self.settles * v["average_to_peak"] * v["redis_ttl_s"] * v["redis_bytes_per_record"]
        redis_limits = {
            "ops/s": self.redis_ops / (v["redis_ops_per_s"] * util),
            "memory": self.redis_bytes / (v["redis_memory_bytes"] * util),
        }
        self.redis_need = redis_limits
        self.redis = max(1, math.ceil(max(redis_limits.values())))
        # The catalogue: keys grow with the traffic; each node's master reads
        # them all at every reload, all nodes at once from one server.
        self.keys = v["catalogue_keys_today"] * m
        self.reload_s = self.keys * v["catalogue_master_us_per_key"] / 1e6
        self.catalogue_server_s = self.nodes * self.keys * v["catalogue_query_us_per_key"] / 1e6
        # One club's books live in one pod: the largest club must fit in one,
        # its load (CPU, WAL syncs) and its books (disk).
        share = v["largest_club_share"]
        self.largest_club_load = max(pod_limits["CPU"], pod_limits["WAL syncs"]) * share
        self.largest_club_books = pod_limits["disk"] * share


# Limits that adding nginx nodes, pods or Redis instances does not lift:
# (name, crossed at plan p?, what it takes). Each grows with the load.
def hard_limits(v):
    return (
        ("connections per pod > `pod_max_connections`",
         lambda p: p.conns_per_pod > v["pod_max_connections"],
         "every worker keeps a pool on every pod: a pooler (pgbouncer, transaction mode) in front of each "
         "pod, or smaller pools"),
        ("a worker's connections to every pod > `worker_pod_connections_max`",
         lambda p: p.conns_per_worker > v["worker_pod_connections_max"],
         "each worker opens a pool on every pod: pools opened on demand, or nodes that serve a group of pods "
         "(not built)"),
        ("more than one Redis",
         lambda p: p.redis > 1,
         "the modules speak to one Redis master (`mr_redis`, `mr_redis_sentinel`): a shorter "
         "`mr_idempotency_ttl` (the database keeps every record 30 days) or Redis split by pod, not built"),
        ("the largest club's settles and reads outgrow one pod (CPU or WAL syncs)",
         lambda p: p.largest_club_load > 1,
         "a club lives in one pod: a bigger primary for that pod (nothing splits a club)"),
        ("the largest club's books for `horizon_days` outgrow one pod's disk",
         lambda p: p.largest_club_books > 1,
         "a bigger disk, or old ledger rows archived off the pod (not built)"),
        ("catalogue load per reload > `reload_budget_s`",
         lambda p: p.reload_s > v["reload_budget_s"],
         "each node's master reads every key at every reload: fewer keys, or a load that reads changes only"),
    )


def crossing(v, crossed):
    """The smallest load (times today's peak, three significant figures)
    at which `crossed` holds, or None below 100,000x. Every limit grows
    with the load, so a bisection finds it."""
    lo, hi = 0.001, 100000.0
    if crossed(Plan(v, lo)):
        return lo
    if not crossed(Plan(v, hi)):
        return None
    while hi / lo > 1.0001:
        mid = math.sqrt(lo * hi)
        if crossed(Plan(v, mid)):
            hi = mid
        else:
            lo = mid
    return hi


def number(x):
    """An input as written in the file."""
    return f"{x:,.0f}" if x == int(x) else f"{x:,}"


def render(raw, v):
    plans = [Plan(v, m) for m in STEPS]
    lines = ["| measured input | value | unit | how |", "| --- | --- | --- | --- |"]
    for name, e in raw["measured"].items():
        lines.append(f"| `{name}` | {number(float(e['value']))} | {e['unit']} | {e['how']} |")
    lines += ["", "| assumed input | value | unit | why |", "| --- | --- | --- | --- |"]
    for name, e in raw["assumed"].items():
        lines.append(f"| `{name}` | {number(float(e['value']))} | {e['unit']} | {e['why']} |")
    lines.append("")
    lines.append("| load | settles/s | reads/s (balance + history) | requests/s | nginx nodes (cores busy) "
                 "| pods: needed (CPU / WAL syncs / disk) | Redis: needed (ops / memory) "
                 "| connections per pod / per worker | disk growth per day (all pods) | WAL per s (all pods) "
                 "| catalogue per reload: each master, the catalogue's server |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for p in plans:
        pods = " / ".join(f"{p.pod_need[k]:,.1f}" for k in ("CPU", "WAL syncs", "disk"))
        redis = " / ".join(f"{p.redis_need[k]:,.1f}" for k in ("ops/s", "memory"))
        lines.append(
            f"| {p.m}x | {per_s(p.settles)} | {per_s(p.reads + p.history)} | {per_s(p.requests)} "
            f"| {p.nodes} ({per_s(p.nginx_core_s)}) | {p.pods:,} ({pods}) | {p.redis:,} ({redis}) "
            f"| {p.conns_per_pod:,.0f} / {p.conns_per_worker:,.0f} | {size(p.disk_per_day)} | {size(p.wal_bytes)} "
            f"| {seconds(p.reload_s)}, {seconds(p.catalogue_server_s)} ({p.keys:,.0f} keys) |")
    lines += ["", "| limit more units do not lift | crossed at | what it takes |", "| --- | --- | --- |"]
    crossed_at = []
    for name, crossed, remedy in hard_limits(v):
        at = crossing(v, crossed)
        crossed_at.append((at, name))
        lines.append(f"| {name} | {'beyond 100,000x' if at is None else per_s(at) + 'x'} | {remedy} |")
    lines += ["", "| step | breaks first on the way | then, in order |", "| --- | --- | --- |"]
    for prev, cur in zip((0,) + STEPS, STEPS):
        hits = sorted((at, name) for at, name in crossed_at if at is not None and prev < at <= cur)
        if hits:
            first = f"{hits[0][1]} (at {per_s(hits[0][0])}x)"
            rest = "; ".join(f"{n} (at {per_s(a)}x)" for a, n in hits[1:]) or "-"
        else:
            first, rest = "nothing that more units do not lift", "-"
        lines.append(f"| {'up to 1x' if prev == 0 else f'{prev}x → {cur}x'} | {first} | {rest} |")
    return "\n".join(lines) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("--inputs", default=os.path.join(here, "capacity_inputs.json"))
    ap.add_argument("--check", metavar="DOC")
    args = ap.parse_args()
    table = render(*load_inputs(args.inputs))
    if not args.check:
        sys.stdout.write(table)
        return 0
    with open(args.check, encoding="utf-8") as f:
        doc = f.read()
    if doc.count(BEGIN) != 1 or doc.count(END) != 1 or doc.index(BEGIN) > doc.index(END):
        print(f"{args.check}: wants one {BEGIN} ... {END} block", file=sys.stderr)
        return 1
    shown = doc[doc.index(BEGIN) + len(BEGIN):doc.index(END)].strip("\n") + "\n"
    if shown != table:
        print(f"{args.check}: the tables differ from bench/capacity_plan.py's output; run\n"
              f"  bench/capacity_plan.py\nand paste its output between the markers. Expected:\n{table}",
              file=sys.stderr)
        return 1
    print(f"{args.check}: the tables match the calculation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
