#!/usr/bin/env bash
# Benchmarks `simstore dedup` beside the dataset-dedup tools corpus builders use, on one
# Parquet corpus of scripts/gen_dedup_corpus_natural.py; each tool with its documented defaults.
#
#   scripts/bench_dedup_peers.sh CORPUS_DIR [TOOL...]
#
# CORPUS_DIR: the generator's OUTDIR (its parquet/ shards are the input of every tool).
# TOOLS (default all but simstore-verify05, simstore with --verify 0.5): simstore datatrove textdedup-minhash textdedup-simhash rensa.
# Env: SIMSTORE (default /work/main/target/release/simstore), VENV (/tmp/dedup-bench: made
# with python3 -m venv and pip install datatrove text-dedup rensa pyarrow datasketch (+ datatrove's needs) when
# missing; these are never dependencies of simstore), OUT (/tmp/dedup-bench-runs/NAME),
# TIMEOUT (seconds a tool may run, default 1800).
# For each tool: the load average before it (/proc/loadavg), `/usr/bin/time -v` (wall, user
# + sys CPU seconds, peak RSS of the largest process), scripts/proc_tree_usage.py (CPU seconds
# and summed peak RSS of the whole process tree, which datatrove's pool workers need), then scripts/score_kept.py against the
# corpus's `cluster` column. One TSV row per run is appended to $OUT/../results.tsv.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CORPUS=$(cd "$1" && pwd); shift
TOOLS=${*:-simstore datatrove textdedup-minhash textdedup-simhash rensa}
SIMSTORE=${SIMSTORE:-/work/main/target/release/simstore}
VENV=${VENV:-/tmp/dedup-bench}
NAME=$(basename "$CORPUS")
OUT=${OUT:-/tmp/dedup-bench-runs/$NAME}
TIMEOUT=${TIMEOUT:-1800}
RESULTS=$(dirname "$OUT")/results.tsv
PY=$VENV/bin/python

if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
    # datatrove's minhash needs tokenizers, xxhash and, for English words, spaCy: parts of its
    # "processing" extra, installed alone (the extra also pulls trafilatura, fasttext, ...)
    "$VENV/bin/pip" install datatrove text-dedup rensa pyarrow datasketch tokenizers spacy 'xxhash<4' nltk regex
fi
mkdir -p "$OUT"
[ -f "$RESULTS" ] || printf 'corpus\ttool\trecords\tload_before\twall_s\tcpu_s\tpeak_rss_kib\ttree_cpu_s\ttree_peak_rss_kib\texit\tkept\tcopies_missed\tclusters_lost\ttrue_clusters\n' > "$RESULTS"
RECORDS=$($PY -c "import pyarrow.parquet as pq,glob,sys; print(sum(pq.ParquetFile(f).metadata.num_rows for f in glob.glob(sys.argv[1]+'/parquet/*.parquet')))" "$CORPUS")

for tool in $TOOLS; do
    W=$OUT/$tool
    rm -rf "$W"; mkdir -p "$W"
    case $tool in
    simstore)
        cmd=("$SIMSTORE" dedup "$CORPUS/parquet" --text-field content --id-field url --output "$W/kept/")
        kept=$W/kept ;;
    simstore-verify05)  # not a default: --verify alone is k = 3 with sketches >= 0.5 (no 12-bit span scan)
        cmd=("$SIMSTORE" dedup "$CORPUS/parquet" --text-field content --id-field url --verify 0.5 --output "$W/kept/")
        kept=$W/kept ;;
    datatrove)
        cmd=("$PY" "$HERE/bench_peer_datatrove.py" "$CORPUS/parquet" "$W" --workers 2)
        kept=$W/output ;;
    textdedup-minhash|textdedup-simhash)
        cmd=(env -C "$W" "$PY" -m "text_dedup.${tool#textdedup-}" --path parquet --data_files "$CORPUS/parquet/*.parquet"
             --split train --cache_dir "$W/cache" --output "$W/output" --column content)
        kept=$W/output ;;
    rensa)
        cmd=("$PY" "$HERE/bench_peer_rensa.py" "$CORPUS/parquet" "$W/kept.parquet")
        kept=$W/kept.parquet ;;
    *) echo "unknown tool $tool" >&2; continue ;;
    esac
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "== $tool on $NAME ($RECORDS records), load $load: ${cmd[*]}" | tee -a "$OUT/commands.log"
    timeout "$TIMEOUT" "$PY" "$HERE/proc_tree_usage.py" "$W/tree.json" /usr/bin/time -v -o "$W/time.txt" "${cmd[@]}" \
        > "$W/stdout.log" 2> "$W/stderr.log"
    rc=$?
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$W/time.txt" 2>/dev/null)
    cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$W/time.txt" 2>/dev/null)
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$W/time.txt" 2>/dev/null)
    tree_cpu=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['cpu_s_tree'])" "$W/tree.json" 2>/dev/null)
    tree_rss=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['peak_rss_tree_kib'])" "$W/tree.json" 2>/dev/null)
    score=""
    if [ "$rc" = 0 ] && [ -e "$kept" ]; then
        score=$("$PY" "$HERE/score_kept.py" "$CORPUS/parquet" "$kept" --name "$tool")
        echo "$score" | tee -a "$OUT/commands.log"
    else
        echo "$tool exit $rc (124 = timeout after ${TIMEOUT}s); see $W/stderr.log" | tee -a "$OUT/commands.log"
    fi
    field() { echo "$score" | "$PY" -c "import json,sys; s=sys.stdin.read().strip(); print(json.loads(s)['$1'] if s else '')"; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$NAME" "$tool" "$RECORDS" "$load" "$wall" "$cpu" "$rss" \
        "$tree_cpu" "$tree_rss" "$rc" \
        "$(field kept)" "$(field copies_missed)" "$(field clusters_lost)" "$(field true_clusters)" | tee -a "$RESULTS"
done
