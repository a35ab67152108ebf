#!/usr/bin/env python3
"""What tools/benchmark records about the machine and what else ran (docs/performance.md).

    machine_info.py FILE before SEED EVENTS    # machine, toolchain, load, CPU counters
    machine_info.py FILE after TIMES_BEFORE TIMES_AFTER   # load again; CPU others used meanwhile

TIMES_BEFORE and TIMES_AFTER are bash `times` output at both ends: the CPU time of the run's own
processes is the difference of their last lines (children). What the others used is the
machine's busy time (/proc/stat) minus that; the commands named are the long-running ones seen
at both ends (short-lived compiler processes only show in the total).
"""
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time

OURS = ("gov-bench", "gov-peer-verdi", "node", "python3", "benchmark", "npm")


def run(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_ticks():
    """CPU ticks used so far by every process: {pid: [command, ticks]}."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[pid] = [comm, int(fields[11]) + int(fields[12])]
    return out


def busy_seconds():
    """CPU time the whole machine spent busy so far (/proc/stat: all but idle and iowait)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def children_seconds(times_file):
    """The children's user + system seconds of a bash `times` output (its last line)."""
    with open(times_file) as f:
        last = f.read().strip().splitlines()[-1]
    return sum(int(m) * 60 + float(sec) for m, sec in re.findall(r"(\d+)m([\d.]+)s", last))


def allocator():
    """The allocator gov-bench runs with (cmake/GovAllocator.cmake): jemalloc when it links it."""
    bench = os.path.join(os.environ.get("GOV_BUILD_DIR", "build"), "bin", "gov-bench")
    linked = run("ldd", bench)
    if not linked:
        return "?"
    return "jemalloc" if "jemalloc" in linked else "the C library's malloc"


def first(path, prefix, sep):
    with open(path) as f:
        for line in f:
            if line.startswith(prefix):
                return line.split(sep, 1)[1].strip().strip('"')
    return "?"


def main():
    path, when = sys.argv[1], sys.argv[2]
    info = {}
    if os.path.exists(path):
        with open(path) as f:
            info = json.load(f)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    if when == "before":
        compiler = run("c++", "--version").splitlines()
        info.update({
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": first("/proc/cpuinfo", "model name", ":"),
            "memory": f"{int(first('/proc/meminfo', 'MemTotal', ':').split()[0]) / 1024 / 1024:.0f} GiB",
            "os": first("/etc/os-release", "PRETTY_NAME", "="), "kernel": platform.release(),
            "compiler": compiler[0] if compiler else "?",
            "llvm": run("/usr/lib/llvm-19/bin/llvm-config", "--version"), "node": run("node", "--version"),
            "allocator": allocator(),
            "seed": sys.argv[3], "events": f"{int(sys.argv[4]):,}", "load_before": load,
            "ticks": cpu_ticks(), "busy_start": busy_seconds(), "started": time.time()})
    else:
        before, hz = info.pop("ticks", {}), os.sysconf("SC_CLK_TCK")
        used = {}
        for pid, (comm, ticks) in cpu_ticks().items():
            delta = ticks - before.get(pid, [comm, 0])[1]
            if delta > 0 and comm not in OURS:
                used[comm] = used.get(comm, 0) + delta / hz
        elapsed = time.time() - info.pop("started", time.time())
        busy = busy_seconds() - info.pop("busy_start", busy_seconds())
        ours = children_seconds(sys.argv[4]) - children_seconds(sys.argv[3]) if len(sys.argv) > 4 else 0.0
        others = max(0.0, busy - ours)
        top = sorted(used.items(), key=lambda kv: -kv[1])[:6]
        info["load_after"] = load
        info["elapsed_minutes"] = round(elapsed / 60, 1)
        info["others_cpu_minutes"] = round(others / 60, 1)
        info["busy"] = (f"during the {elapsed / 60:.0f} minutes of the run the machine had "
                        f"{os.cpu_count() * elapsed / 60:.0f} CPU-minutes; the benchmarks used {ours / 60:.0f}, "
                        f"other processes {others / 60:.0f}" +
                        (" (long-running among them: " + ", ".join(f"{c} {s / 60:.1f} min" for c, s in top) + ")"
                         if top else ""))
    with open(path, "w") as f:
        json.dump(info, f, indent=2)


if __name__ == "__main__":
    main()
