-- The fleet queries (doc/fleet-atoms.md).  Every one reads the atoms
-- deduplicated (FINAL), through the Distributed table.

-- merged: the fleet's histogram and its p50 and p99 per metric, key, kernel
-- and day, as kstats computes them: linear inside a bucket [2^k, 2^(k+1))
-- (bucket 0 is [0, 2)), and the open last bucket gives its lower bound.
-- (18.16: a lambda cannot capture an alias, so rank goes in as an array.)
SELECT day, metric, key, kernel, buckets, q, value FROM
(
    SELECT day, metric, key, kernel, buckets, q,
        arrayCumSum(buckets) AS cum, arraySum(buckets) * q AS rank,
        arrayFirstIndex((c, x, r) -> x > 0 AND c >= r, cum, buckets,
                        arrayResize(emptyArrayFloat64(), length(buckets), rank)) AS i,
        multiIf(i = 0, 0, i = 32, pow(2, 31),
                if(i = 1, 0, pow(2, i - 1)) +
                if(i = 1, 2, pow(2, i - 1)) * (rank - (cum[i] - buckets[i])) / buckets[i]) AS value
    FROM
    (
        SELECT day, metric, key, kernel, sumForEach(buckets) AS buckets
        FROM kernelstats.atoms FINAL
        WHERE day >= today() - 30
        GROUP BY day, metric, key, kernel
    )
    ARRAY JOIN [0.5, 0.99] AS q
)
ORDER BY metric, key, kernel, day, q
FORMAT JSONEachRow;

-- rollup: the same histograms from the daily rollup (rollup.sh), faster.
SELECT day, metric, key, kernel, sumForEachMerge(buckets) AS buckets
FROM kernelstats.daily
WHERE day >= today() - 30
GROUP BY day, metric, key, kernel
ORDER BY metric, key, kernel, day
FORMAT JSONEachRow;

-- page: rows for kstats report --rows - (one page of the whole fleet).
SELECT day, metric, key, sumForEach(buckets) AS buckets, max(reset) AS reset,
    sum(anomalies) AS anomalies
FROM kernelstats.atoms FINAL
WHERE day >= today() - 30
GROUP BY day, metric, key
FORMAT JSONEachRow;
