"""Plots docs/benchmarks.png from the `simstore bench` figures recorded in docs/benchmarks.md.

Run: python3 docs/plot_benchmarks.py   (needs matplotlib)
"""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

# simstore bench --n N, 2026-11-25 afternoon (docs/benchmarks.md, "Performance II,
# continued"; a quiet 2-core AMD EPYC VM)
n = [1e6, 1e7, 1e8]
p50 = [26.0, 32.9, 52.8]  # µs
p99 = [118.1, 57.2, 94.1]  # µs
mem_p50 = [6.2, 16.6, None]  # in-memory sorted tables of the same layout
brute_p50 = [1647.1, 16510.0, 165582.9]  # brute force Vec<u64>
import_s = [1.05, 14.93, 211.70]  # bulk load, durable
cold_auto_p50 = [251.4, 570.8, 710.7]  # cold page cache, automatic probes (default)
cold_turn_p50 = [511.8, 940.5, 1456.8]  # cold page cache, probes in turn
# 2026-11-26 (docs/benchmarks.md, "Bulk import: the table keys in memory"; a noisier day:
# the final build against the 11-25 binary in alternating runs; 100M not rerun)
import_new_s = [0.94, 11.14]
import_base_same_runs_s = [1.68, 19.07]
# 2026-11-23, before this work (quiet machine)
p50_before = [24.3, 53.7, 63.1]
# 2026-11-27, format 5: tables in buckets, probes filtering in place, the refitted cost
# model's layouts (docs/benchmarks.md, "Tables in buckets"; a Sapphire Rapids VM in a fast
# phase; 1M not run)
n_buckets = [1e7, 1e8]
p50_buckets = [29.4, 56.3]
p99_buckets = [54.9, 86.1]
import_buckets_s = [9.55, 149.62]
# 2026-11-27, format 6, restart points per bucket, HyperClockCache, kept iterators per
# thread; the model's layouts (4 tables at 1M, 5 at 10M, 6 at 100M), the eighth session
# (docs/benchmarks.md, "Issue 19's rows measured again ...")
n_now = [1e6, 1e7, 1e8]
p50_now = [16.4, 24.2, 37.0]
p99_now = [27.5, 36.5, 65.0]
import_now_s = [0.60, 6.78, 167.33]
n_cold_now = [1e7]
cold_auto_now = [293.8]  # cold page cache, automatic probes, 10M, eighth session

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
a.loglog(n, p50, "o-", label="simstore p50")
a.loglog(n, p99, "o--", label="simstore p99")
a.loglog(n, p50_before, "x:", color="gray", label="p50 before (2026-11-23)")
a.loglog(n_buckets, p50_buckets, "*-", color="C9", label="p50, tables in buckets (11-27)")
a.loglog(n_buckets, p99_buckets, "*--", color="C9", label="p99, tables in buckets (11-27)")
a.loglog(n_now, p50_now, "P-", color="C8", label="p50, format 6 (11-27)")
a.loglog(n_now, p99_now, "P--", color="C8", label="p99, format 6 (11-27)")
a.loglog(n_cold_now, cold_auto_now, "D", color="C8", label="cold p50, automatic probes (11-27)")
a.loglog(n[:2], mem_p50[:2], "s-", label="in-memory sorted tables p50")
a.loglog(n, brute_p50, "^-", label="brute force p50")
a.loglog(n, cold_auto_p50, "D-", label="cold page cache p50 (automatic probes)")
a.loglog(n, cold_turn_p50, "d:", label="cold page cache p50 (probes in turn)")
a.axhline(20, color="gray", lw=0.8, ls=":")
a.text(1.1e6, 22, "target p50 20 µs (10M)", fontsize=8, color="gray")
a.set_xlabel("stored fingerprints N")
a.set_ylabel("k = 3 query latency, µs (single thread)")
a.set_title("Query latency against N")
a.legend(fontsize=8)
a.grid(True, which="both", lw=0.3)
b.loglog(n, import_s, "o-", color="C3", label="bulk import (sorted SSTs, durable), 11-25")
b.loglog(n[:2], import_new_s, "s-", color="C2", label="table keys in memory, 11-26")
b.loglog(n[:2], import_base_same_runs_s, "x:", color="gray", label="the 11-25 binary in the 11-26 runs")
b.loglog(n_buckets, import_buckets_s, "*-", color="C9", label="tables in buckets, 11-27")
b.loglog(n_now, import_now_s, "P-", color="C8", label="format 6, 11-27")
b.axhline(12, color="gray", lw=0.8, ls=":")
b.text(1.1e6, 13, "target 12 s at 10M", fontsize=8, color="gray")
b.set_xlabel("stored fingerprints N")
b.set_ylabel("seconds")
b.set_title("Import time against N")
b.legend(fontsize=8)
b.grid(True, which="both", lw=0.3)
fig.suptitle("simstore bench, 2 cores: AMD EPYC 2026-11-25 (quiet), 11-26 (import); Sapphire Rapids 11-27 (buckets; format 6)", fontsize=10)
fig.tight_layout()
fig.savefig("docs/benchmarks.png", dpi=110)
