"""Plots docs/benchmarks.png from the `simstore bench` figures recorded in docs/benchmarks.md.

Run: python3 docs/plot_benchmarks.py   (needs matplotlib)
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

# simstore bench --n N --queries 10000, 2026-11-23 (docs/benchmarks.md)
n = [1e6, 1e7, 1e8]
p50 = [24.3, 53.7, 63.1]  # µs
p99 = [37.9, 119.9, 138.8]  # µs
mem_p50 = [3.9, 23.5, None]  # in-memory sorted tables
brute_p50 = [1336.7, 36761.7, 674371.2]  # brute force Vec<u64>
import_s = [0.82, 11.80, 129.67]  # bulk load, durable

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
a.loglog(n, p50, "o-", label="simstore p50")
a.loglog(n, p99, "o--", label="simstore p99")
a.loglog(n[:2], mem_p50[:2], "s-", label="in-memory sorted tables p50")
a.loglog(n, brute_p50, "^-", label="brute force p50")
a.axhline(25, color="gray", lw=0.8, ls=":")
a.text(1.1e6, 27, "target p50 25 µs (10M)", fontsize=8, color="gray")
a.set_xlabel("stored fingerprints N")
a.set_ylabel("k = 3 query latency, µs (single thread, warm)")
a.set_title("Query latency against N")
a.legend(fontsize=8)
a.grid(True, which="both", lw=0.3)
b.loglog(n, import_s, "o-", color="C3", label="bulk import (sorted SSTs, durable)")
b.axhline(20, color="gray", lw=0.8, ls=":")
b.text(1.1e6, 22, "target 20 s at 10M", fontsize=8, color="gray")
b.set_xlabel("stored fingerprints N")
b.set_ylabel("seconds")
b.set_title("Import time against N")
b.legend(fontsize=8)
b.grid(True, which="both", lw=0.3)
fig.suptitle("simstore bench, 2 cores (Intel Xeon), 2026-11-23", fontsize=10)
fig.tight_layout()
fig.savefig("docs/benchmarks.png", dpi=110)
