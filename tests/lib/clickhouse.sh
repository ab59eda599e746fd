# Sourced by the tests and benches that run Debian's ClickHouse (issue 49):
# a cluster "kernelstats" of two clickhouse-server on 127.0.0.1, their own
# free ports and directories, configured from dist/clickhouse/ (the cluster,
# the users with these passwords, the schema).
#   ch_cluster DIR      starts both, applies schema.sql; 1 with CH_ERR set
#   q N SQL             runs SQL on server N as the default user
#   stop_server N, start_server N, ch_stop_all (at exit)
#   HTTP1 TCP1 HTTP2 TCP2, PW (kernelstats_ingest's password)
PIDS=()
PW=ingest-$$-secret
WPW=writer-$$-secret

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# server N: config under $CH/chN from dist/clickhouse/ (the cluster's
# hosts and ports, the users' password hashes filled in).
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
for n in 1 2; do
	eval "HTTP$n=$(free_port) TCP$n=$(free_port) INTER$n=$(free_port)"
done
server_config() {
	local d=$CH/ch$1 http=$2 tcp=$3 inter=$4
	mkdir -p "$d/config.d" "$d/users.d"
	cat >"$d/config.xml" <<EOF
<yandex>
    <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/server.err.log</errorlog><console>0</console></logger>
    <http_port>$http</http_port>
    <tcp_port>$tcp</tcp_port>
    <interserver_http_port>$inter</interserver_http_port>
    <listen_host>127.0.0.1</listen_host>
    <path>$d/data/</path>
    <tmp_path>$d/tmp/</tmp_path>
    <user_files_path>$d/user_files/</user_files_path>
    <format_schema_path>$d/format_schemas/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>268435456</mark_cache_size>
    <max_concurrent_queries>20</max_concurrent_queries>
    <timezone>UTC</timezone>
</yandex>
EOF
	cp /etc/clickhouse-server/users.xml "$d/users.xml"
	sed "0,/ch1.example.org/s//127.0.0.1/; 0,/ch2.example.org/s//127.0.0.1/;
	     0,/<port>9000</s//<port>$TCP1</; 0,/<port>9000</s//<port>$TCP2</;
	     s/WRITER_PASSWORD/$WPW/" \
		dist/clickhouse/remote_servers.xml >"$d/config.d/kernelstats-cluster.xml"
	sed "s/INGEST_PASSWORD_SHA256/$(sha "$PW")/; s/WRITER_PASSWORD_SHA256/$(sha "$WPW")/" \
		dist/clickhouse/users.xml >"$d/users.d/kernelstats.xml"
}
start_server() {	# start_server N: until it answers, at most 60 s
	local n=$1 port i
	port=$(eval echo "\$HTTP$n")
	clickhouse-server --config-file="$CH/ch$n/config.xml" >"$CH/ch$n/stdout" 2>&1 &
	eval "SPID$n=$!"
	PIDS+=($!)
	for i in $(seq 600); do
		curl -sf "http://127.0.0.1:$port/ping" >/dev/null && return 0
		sleep 0.1
	done
	CH_ERR="clickhouse-server $n did not answer on 127.0.0.1:$port in 60 s: $(tail -1 "$CH/ch$n/server.err.log")"
	return 1
}
stop_server() {
	local pid
	pid=$(eval echo "\$SPID$1")
	kill -9 "$pid" && wait "$pid" 2>/dev/null
}
q() {	# q N SQL: as the default user on server N
	clickhouse-client --port "$(eval echo "\$TCP$1")" --multiquery -q "$2"
}

ch_stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
}
ch_cluster() {
	local n
	CH=$1
	server_config 1 "$HTTP1" "$TCP1" "$INTER1"
	server_config 2 "$HTTP2" "$TCP2" "$INTER2"
	start_server 1 && start_server 2 || return 1
	for n in 1 2; do
		clickhouse-client --port "$(eval echo "\$TCP$n")" --multiquery \
			<dist/clickhouse/schema.sql && continue
		CH_ERR="dist/clickhouse/schema.sql on server $n failed"
		return 1
	done
}
