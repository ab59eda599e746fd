#!/bin/sh
# Rebuilds the daily rollup (schema.sql's daily_local) of the UTC days
# FROM..TO from the deduplicated rows, on one shard: run it on each, once a
# day after the hosts shipped, as a user that may drop partitions.  Late
# atoms of older days: widen the range.  Extra arguments go to
# clickhouse-client (--host, --port, --user, --password).
#   rollup.sh 2026-12-01 2026-12-07 [clickhouse-client options]
set -eu
from=$1 to=$2
shift 2
day=$from
while [ "$(date -u -d "$day" +%s)" -le "$(date -u -d "$to" +%s)" ]; do
	clickhouse-client "$@" -q "ALTER TABLE kernelstats.daily_local DROP PARTITION '$day'"
	clickhouse-client "$@" -q "INSERT INTO kernelstats.daily_local
		SELECT day, metric, key, kernel, uniqState(host), sumForEachState(buckets)
		FROM kernelstats.atoms_local FINAL WHERE day = '$day'
		GROUP BY day, metric, key, kernel"
	day=$(date -u -d "$day + 1 day" +%F)
done
