#!/usr/bin/env bash
# A local Redis Cluster for trying simstore on: 3 masters + 3 replicas on 127.0.0.1, ports
# PORT..PORT+5 (default 7000; their cluster bus ports are PORT+10000..PORT+10005), data
# under DIR (default ./cluster), appendonly on.
#   scripts/local-cluster.sh start [PORT] [DIR]    then: --db redis://127.0.0.1:PORT/NAME
#   scripts/local-cluster.sh stop  [PORT]
# `start` refuses (exit 1, naming the port and what holds it) when any of those ports is
# taken, e.g. by a cluster already running there: stop it first or choose another PORT.
# Needs redis-server and redis-cli (Debian: apt-get install redis-server).
set -euo pipefail
cmd=${1:-start}
port=${2:-7000}
dir=${3:-cluster}

if ! [[ $port =~ ^[0-9]+$ ]] || [ "$port" -lt 1 ] || [ "$port" -gt 55530 ]; then
    echo "$0: PORT must be a number from 1 to 55530 (it uses PORT..PORT+5 and PORT+10000..PORT+10005), not '$port'" >&2
    exit 2
fi
ports=$(seq "$port" $((port + 5)))

if [ "$cmd" = stop ]; then
    for p in $ports; do timeout 10 redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true; done
    exit 0
fi
if [ "$cmd" != start ]; then
    echo "usage: $0 start [PORT] [DIR] | stop [PORT]" >&2
    exit 2
fi

# Whether something listens on port $1 (on loopback, where the nodes bind, or on any address).
in_use() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    command -v ss >/dev/null 2>&1 && [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
}

# What listens on port $1, in words, when `ss` can tell: " (redis-server, pid 1234)".
holder() {
    command -v ss >/dev/null 2>&1 || return 0
    ss -Hltnp "sport = :$1" 2>/dev/null \
        | sed -n 's/.*users:(("\([^"]*\)",pid=\([0-9]*\).*/ (\1, pid \2)/p' | head -n 1
}

busy=()
for p in $ports; do
    for q in "$p" $((p + 10000)); do
        if in_use "$q"; then busy+=("$q$(holder "$q")"); fi
    done
done
if [ ${#busy[@]} -gt 0 ]; then
    {
        echo "$0: cannot start a cluster on ports $port..$((port + 5)): in use already:"
        printf '  port %s\n' "${busy[@]}"
        echo "A cluster may already be running there (stop it: $0 stop $port), or choose another"
        echo "base port: $0 start PORT [DIR] (then --db redis://127.0.0.1:PORT/NAME)."
    } >&2
    exit 1
fi

for p in $ports; do
    mkdir -p "$dir/$p"
    redis-server --port "$p" --bind 127.0.0.1 --cluster-enabled yes \
        --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
        --appendonly yes --appendfsync everysec --save '' --repl-diskless-sync-delay 0 \
        --dir "$dir/$p" --logfile log --daemonize yes
done
for p in $ports; do
    tries=0
    until redis-cli -p "$p" ping >/dev/null 2>&1; do
        tries=$((tries + 1))
        if [ "$tries" -gt 100 ]; then
            echo "$0: the node on port $p did not start within 10 s; see $dir/$p/log" >&2
            exit 1
        fi
        sleep 0.1
    done
done
addrs=$(for p in $ports; do printf '127.0.0.1:%s ' "$p"; done)
# shellcheck disable=SC2086
redis-cli --cluster create $addrs --cluster-replicas 1 --cluster-yes >/dev/null
until redis-cli -p "$port" cluster info | grep -q cluster_state:ok; do sleep 0.1; done
sleep 1
echo "cluster up: redis://127.0.0.1:$port (stop: $0 stop $port)"
