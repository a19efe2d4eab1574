#!/usr/bin/env python3
"""Runs a command and samples the CPU time and memory of its whole process tree.

    scripts/proc_tree_usage.py OUT.json CMD [ARG...]

`/usr/bin/time -v` counts only the children a process waits for; datatrove's pool workers
(multiprocess, spawn) escape it. Every 0.2 s this reads /proc/PID/stat and statm of every
descendant: the CPU seconds are the sum over processes of their last utime + stime (a
process's last < 0.2 s can be missed), the peak RSS the largest sum of the tree's resident
sets at one sample. Writes {"cpu_s_tree", "peak_rss_tree_kib", "processes", "exit"} to OUT.json
and exits with CMD's status. Part of scripts/bench_dedup_peers.sh.
"""
import json
import os
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def snapshot():
    """{pid: (ppid, cpu ticks, rss pages)} of every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/statm" % d) as f:
                rss = int(f.read().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        out[int(d)] = (int(fields[1]), int(fields[11]) + int(fields[12]), rss)
    return out


def main():
    out_path, cmd = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(cmd)
    cpu, peak, seen = {}, 0, set()
    while True:
        snap = snapshot()
        tree, frontier = {child.pid}, [child.pid]
        children = {}
        for pid, (ppid, _, _) in snap.items():
            children.setdefault(ppid, []).append(pid)
        while frontier:
            for c in children.get(frontier.pop(), []):
                if c not in tree:
                    tree.add(c)
                    frontier.append(c)
        rss = 0
        for pid in tree:
            if pid in snap:
                seen.add(pid)
                cpu[pid] = max(cpu.get(pid, 0), snap[pid][1])
                rss += snap[pid][2]
        peak = max(peak, rss)
        if child.poll() is not None:
            break
        time.sleep(0.2)
    with open(out_path, "w") as f:
        json.dump({"cpu_s_tree": round(sum(cpu.values()) / TICK, 1), "peak_rss_tree_kib": peak * PAGE_KIB,
                   "processes": len(seen), "exit": child.returncode}, f)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
