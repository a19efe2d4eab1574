#!/usr/bin/env bash
# A local Redis Cluster for trying simstore on: 3 masters + 3 replicas on 127.0.0.1, ports
# PORT..PORT+5 (default 7000), data under DIR (default ./cluster), appendonly on.
#   scripts/local-cluster.sh start [PORT] [DIR]    then: --db redis://127.0.0.1:PORT/NAME
#   scripts/local-cluster.sh stop  [PORT]
# Needs redis-server and redis-cli (Debian: apt-get install redis-server).
set -euo pipefail
cmd=${1:-start}
port=${2:-7000}
dir=${3:-cluster}
ports=$(seq "$port" $((port + 5)))

if [ "$cmd" = stop ]; then
    for p in $ports; do redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
    exit 0
fi

for p in $ports; do
    mkdir -p "$dir/$p"
    redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
        --appendonly yes --appendfsync everysec --save '' --repl-diskless-sync-delay 0 \
        --dir "$dir/$p" --logfile log --daemonize yes
done
for p in $ports; do
    until redis-cli -p "$p" ping >/dev/null 2>&1; do sleep 0.1; done
done
addrs=$(for p in $ports; do printf '127.0.0.1:%s ' "$p"; done)
# shellcheck disable=SC2086
redis-cli --cluster create $addrs --cluster-replicas 1 --cluster-yes >/dev/null
until redis-cli -p "$port" cluster info | grep -q cluster_state:ok; do sleep 0.1; done
sleep 1
echo "cluster up: redis://127.0.0.1:$port (stop: $0 stop $port)"
