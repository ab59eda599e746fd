# The kstats.dump/1 schema (kstats(1), "JSON OUTPUT"), as jq -e checks:
# the output is true only when every rule holds.
def u64: type == "number" and . >= 0 and . == floor;
def ns: u64 and . > 0;
def num_or_null: . == null or type == "number";

.schema == "kstats.dump/1"
and (.time | (.realtime_ns | ns) and (.boottime_ns | ns)
	and (.iso8601 | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")))
and (.interval == null or (.interval | (.seconds | type == "number" and . > 0)
	and (.since_realtime_ns | ns) and (.since_boottime_ns | ns)))
and (.not_loaded | type == "array" and all(.[]; type == "string"))
and (.unreadable | type == "array" and all(.[]; type == "string"))
and (.metrics | type == "array")
and all(.metrics[];
	(.metric | type == "string") and (.object | type == "string")
	and (.map | type == "string") and (.unit == "us" or .unit == "bytes")
	and (.labels | type == "array" and all(.[]; test("^[a-zA-Z_][a-zA-Z0-9_]*$")))
	and (.labels as $names | .histograms | type == "array" and all(.[];
		(.labels | keys_unsorted) == $names
		and all(.labels[]; type == "string")
		and (.key | length) == ($names | length)
		and (.buckets | length == 32 and all(.[]; u64))
		and (.count | u64)
		and ((.count - (.buckets | add)) | fabs) <= 1e-12 * .count
		and (.p50 | num_or_null) and (.p99 | num_or_null)
		and (.p50_lower_bound | type == "boolean")
		and (.p99_lower_bound | type == "boolean")
		and (if .count == 0 then .p50 == null and .p99 == null
		     else .p50 <= .p99 end)
		and (.total_min | type == "number")
		and (.total_max == null or .total_max >= .total_min))))
