-- kernelstats atoms in ClickHouse (doc/fleet-atoms.md).  Run on every
-- server of the cluster named kernelstats (remote_servers.xml), e.g.
--   clickhouse-client --multiquery < schema.sql
-- Rows are what kstats ship and kstats atoms --format json-each-row write.
CREATE DATABASE IF NOT EXISTS kernelstats;

-- One row per host, metric, key and pull.  A resent row (a retried or
-- interrupted ship) has the same sorting key and collapses at merge time:
-- read with FINAL.  A row's day never changes, so its copies share a
-- partition.  Retention: ALTER TABLE ... DROP PARTITION 'YYYY-MM-DD'.
CREATE TABLE IF NOT EXISTS kernelstats.atoms_local
(
    day Date,
    host String,
    kernel String,
    metric String,
    atom_id UInt32,
    key String,
    boot_id String,
    pull_id UInt64,
    window_start UInt64,
    window_end UInt64,
    reset UInt8,
    anomalies UInt32,
    buckets Array(UInt64)
)
ENGINE = ReplacingMergeTree
PARTITION BY day
ORDER BY (metric, key, kernel, host, boot_id, pull_id);

-- Sharded by host: a host's retry lands on the shard holding its first copy.
CREATE TABLE IF NOT EXISTS kernelstats.atoms AS kernelstats.atoms_local
ENGINE = Distributed(kernelstats, kernelstats, atoms_local, cityHash64(host));

-- kstats ship's entry: the ingest user sees only this database, so it can
-- insert but reach no row (users.xml).  The local shard too is written
-- over the network, as kernelstats_writer (prefer_localhost_replica=0).
CREATE DATABASE IF NOT EXISTS kernelstats_ingest;
CREATE TABLE IF NOT EXISTS kernelstats_ingest.atoms AS kernelstats.atoms_local
ENGINE = Distributed(kernelstats, kernelstats, atoms_local, cityHash64(host));

-- The daily rollup: bucket sums per metric, key, kernel and day, from the
-- deduplicated rows (rollup.sql rebuilds the last days on each shard).
CREATE TABLE IF NOT EXISTS kernelstats.daily_local
(
    day Date,
    metric String,
    key String,
    kernel String,
    hosts AggregateFunction(uniq, String),
    buckets AggregateFunction(sumForEach, Array(UInt64))
)
ENGINE = AggregatingMergeTree
PARTITION BY day
ORDER BY (metric, key, kernel, day);

CREATE TABLE IF NOT EXISTS kernelstats.daily AS kernelstats.daily_local
ENGINE = Distributed(kernelstats, kernelstats, daily_local, rand());
