#!/usr/bin/env bash
# test_selinux: the SELinux module for Debian's refpolicy (sepolicy/refpolicy,
# sepolicy/README.md).  On any host, this one without SELinux included: the
# module is built as the package builds it and installed into a throwaway
# copy of Debian's policy store, every neverallow checked against the whole
# policy (expand-check=1); sesearch and seinfo check the rules on the result
# and that it says what the AOSP policy (sepolicy/) says.  Then the guest
# that enforces it (tests/selinux/run.sh; SELINUX_GUEST=0 skips it).
set -u
cd "$(dirname "$0")/../.." || exit 1
T=selinux

say() { echo "$1: $T: $2"; }
for tool in semodule sesearch seinfo selabel_lookup checkpolicy m4; do
	command -v "$tool" >/dev/null || { say SKIP "$tool not installed (make deps)"; exit 0; }
done
[ -f /usr/share/selinux/devel/Makefile ] ||
	{ say SKIP "no selinux-policy-dev (make deps)"; exit 0; }
[ -d /var/lib/selinux/default ] && [ -d /etc/selinux/default ] ||
	{ say SKIP "no Debian policy store: selinux-policy-default not installed (make deps)"; exit 0; }
tmp=$(mktemp -d /tmp/kstats-test-$$-selinux-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The paths as the package installs them (debian/rules: PREFIX=/usr).
mk() { make -s --no-print-directory PREFIX=/usr BUILD="$tmp/b" "$@"; }
textfile=$(mk --eval='p: ; @echo $(TEXTFILE_DIR)' p)

# A copy of the store; semodule -p uses its semanage.conf.
root=$tmp/root
mkdir -p "$root/etc" "$root/var/lib"
cp -a /etc/selinux "$root/etc/" && cp -a /var/lib/selinux "$root/var/lib/" || exit 1
sed -i 's/^expand-check=.*/expand-check=1/' "$root/etc/selinux/semanage.conf"
grep -q '^expand-check=1' "$root/etc/selinux/semanage.conf" ||
	echo 'expand-check=1' >>"$root/etc/selinux/semanage.conf"
P=$root/etc/selinux/default/policy/policy.33
FC=$root/etc/selinux/default/contexts/files/file_contexts

# install SRC_DIR: builds the module from SRC_DIR, installs it and the CIL.
install_module() {
	rm -rf "$tmp/b/selinux"
	mk SELINUX_SRC="$1" selinux >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; return 1; }
	semodule -p "$root" -s default -n -i "$tmp/b/selinux/kernelstats.pp" "$1/kernelstats_bpffs.cil" 2>&1
}

t0=$(date +%s)
if out=$(install_module sepolicy/refpolicy); then
	say PASS "the module and its genfscon CIL install into a copy of Debian's store, neverallows checked against the whole policy ($(($(date +%s) - t0))s)"
else
	say FAIL "the module does not install: $(grep -v '^libsemanage.add_user' <<<"$out" | head -8 | tr '\n' ' ')"
	exit 0
fi

check() {	# what, then a command that must succeed
	local what=$1
	shift
	if out=$("$@" 2>&1); then
		say PASS "$what"
	else
		say FAIL "$what: $(head -6 <<<"$out" | tr '\n' ' ' | cut -c1-600)"
	fi
}
# rule 'sesearch args' 'perms': one allow (or type_transition) rule has them all.
rule() {	# sesearch args...
	local r
	r=$(sesearch "$@" "$P") || return 1
	echo "$r"
	[ -n "$r" ]
}
no_rule() {
	local r
	r=$(sesearch "$@" "$P") || return 1
	echo "$r"
	[ -z "$r" ]
}
# Every source of the rules sesearch finds is one of the named ones.
only() {	# "allowed sources" sesearch args...
	local ok=" $1 " bad
	shift
	bad=$(sesearch "$@" "$P" | awk '{print $2}' | sort -u | while read -r s; do
		[[ $ok == *" $s "* ]] || echo "$s"
	done)
	[ -z "$bad" ] || { echo "also: $bad"; return 1; }
}
label() {	# path type
	local got
	got=$(selabel_lookup -b file -f "$FC" -k "$1") || return 1
	echo "$1: $got"
	[[ $got == *":object_r:$2:s0" ]]
}

# --- labels ---
check "genfscon bpf /kernelstats labels the pin directory and every pin kstats_bpf_t" \
	sh -c "seinfo '$P' -x --genfscon bpf | grep -E 'genfscon bpf /kernelstats +system_u:object_r:kstats_bpf_t:s0'"
for pt in /usr/sbin/kstats-loader:kstats_loader_exec_t /usr/bin/kstats:kstats_exec_t \
	/usr/lib/kernelstats/bpf/compaction.bpf:kstats_obj_t /var/lib/kernelstats/atoms/a.pb:kstats_var_lib_t \
	"$textfile/kernelstats.prom:kstats_textfile_t" "$textfile:kstats_textfile_dir_t" \
	/run/kernelstats/loader-status.json:kstats_runtime_t \
	/run/kernelstats-watch/1:kstats_watch_runtime_t /etc/kernelstats/ship.password:etc_t; do
	check "file contexts: ${pt%%:*} is ${pt##*:}" label "${pt%%:*}" "${pt##*:}"
done

# --- domains and their entry ---
check "init_t runs kstats-loader in kstats_loader_t" \
	rule -T -s init_t -t kstats_loader_exec_t -c process -D kstats_loader_t
check "init_t (the pull, textfile and shutdown units) runs kstats in kstats_t" \
	rule -T -s init_t -t kstats_exec_t -c process -D kstats_t
check "the daily cron job runs kstats in kstats_t" \
	rule -T -s system_cronjob_t -t kstats_exec_t -c process -D kstats_t
check "the prober (/proc/self/exe --probe-server) stays in kstats_loader_t" \
	rule -A -s kstats_loader_t -t kstats_loader_exec_t -c file -p execute,execute_no_trans
check "nothing else enters kstats_loader_t" \
	only "init_t initrc_t kstats_loader_t" -A -t kstats_loader_t -c process -p transition
check "no kernelstats domain is permissive" sh -c "seinfo '$P' --permissive -x && ! seinfo '$P' --permissive -x | grep kstats"

# --- the loader ---
check "kstats_loader_t: creates maps, loads and runs programs" \
	rule -A -s kstats_loader_t -t kstats_loader_t -c bpf -p map_create,map_read,map_write,prog_load,prog_run
check "kstats_loader_t: CAP_BPF, CAP_PERFMON, CAP_CHOWN" sh -c \
	"sesearch -A -s kstats_loader_t -t kstats_loader_t -c capability2 -p bpf,perfmon '$P' | grep . &&
	 sesearch -A -s kstats_loader_t -t kstats_loader_t -c capability -p chown '$P' | grep ."
check "kstats_loader_t: creates /sys/fs/bpf/kernelstats, pins, sets owners and modes" sh -c \
	"sesearch -A -s kstats_loader_t -t bpf_t -c dir -p add_name,write '$P' | grep . &&
	 sesearch -A -s kstats_loader_t -t kstats_bpf_t -c dir -p create,add_name,setattr '$P' | grep . &&
	 sesearch -A -s kstats_loader_t -t kstats_bpf_t -c file -p create,setattr,read,write,unlink '$P' | grep ."
check "kstats_loader_t: reads the objects, never writes them" sh -c \
	"sesearch -A -s kstats_loader_t -t kstats_obj_t -c file -p read '$P' | grep . &&
	 ! sesearch -A -s kstats_loader_t -t kstats_obj_t -c file -p write '$P' | grep ."
check "kstats_loader_t reads nothing other domains write (state, atoms, textfile)" sh -c \
	"! sesearch -A -s kstats_loader_t -t kstats_var_lib_t -c file -p read '$P' | grep . &&
	 ! sesearch -A -s kstats_loader_t -t kstats_textfile_t -c file -p read '$P' | grep ."

# --- the readers ---
check "kstats_t: reads the loader's maps (bpf map_read against kstats_loader_t)" \
	rule -A -s kstats_t -t kstats_loader_t -c bpf -p map_read
check "kstats_t: opens the pins read-only" \
	rule -A -s kstats_t -t kstats_bpf_t -c file -p read,getattr
check "kstats_t: writes its state and atoms, and the textfile export" sh -c \
	"sesearch -A -s kstats_t -t kstats_var_lib_t -c file -p create,write,rename '$P' | grep . &&
	 sesearch -A -s kstats_t -t kstats_textfile_t -c file -p create,write,rename '$P' | grep ."
check "node_exporter's other textfiles are not kstats_t's: not labelled, not writable" sh -c \
	"! selabel_lookup -b file -f '$FC' -k '$textfile/other.prom' | grep -q kstats_textfile &&
	 ! sesearch -A -s kstats_t -t kstats_textfile_dir_t -c file '$P' | grep . &&
	 sesearch -T -s kstats_t -t kstats_textfile_dir_t -c file '$P' | grep -q kstats_textfile_t"
check "kstats_t: never writes the maps, runs or loads programs, creates maps" \
	no_rule -A -s kstats_t -c bpf -p map_write,map_create,prog_load,prog_run
check "kstats_t: never writes a pin or the pin directory" sh -c \
	"! sesearch -A -s kstats_t -t kstats_bpf_t -c file -p write,create,unlink,setattr '$P' | grep . &&
	 ! sesearch -A -s kstats_t -t kstats_bpf_t -c dir -p write,add_name,remove_name '$P' | grep ."
check "kstats_t: no capability that bypasses file modes or finds maps by id" \
	no_rule -A -s kstats_t -c capability -p dac_override,dac_read_search,fowner,sys_admin
check "kstats_t: writes nothing of the loader's (status, objects)" sh -c \
	"! sesearch -A -s kstats_t -t kstats_runtime_t -c file -p write,create,unlink '$P' | grep . &&
	 ! sesearch -A -s kstats_t -t kstats_obj_t -c file -p write,create,unlink '$P' | grep ."

# --- kstats ship (doc/fleet-atoms.md): the network, and no more ---
# The rules sesearch finds that hold with the booleans as the policy ships
# them: unconditional ones, and those whose boolean is in its default state.
seinfo -b -x "$P" | awk '$1 == "bool" {sub(/;/, "", $3); print $2, $3}' >"$tmp/bools"
active() {	# sesearch args...
	sesearch "$@" "$P" | awk 'NR == FNR {on[$1] = $2; next}
		!/\[ / {print; next}
		match($0, /\[ [a-z0-9_]+ \]:(True|False)$/) {
			split(substr($0, RSTART + 2), c, " ")
			if ((on[c[1]] == "true") == (c[2] == "]:True")) print
			next
		}
		{print}' "$tmp/bools" -
}
# Every target of the active rules sesearch finds is one of the named ones.
active_targets_only() {	# "allowed targets" sesearch args...
	local ok=" $1 " bad
	shift
	bad=$(active "$@" | awk '{split($3, tc, ":"); print tc[1]}' | sort -u | while read -r t; do
		[[ $ok == *" $t "* ]] || echo "$t"
	done)
	[ -z "$bad" ] || { echo "also: $bad"; active "$@" | head -5; return 1; }
}
check "portcon: tcp 8123 (ClickHouse's HTTP interface) is kstats_clickhouse_port_t" \
	sh -c "seinfo '$P' --portcon=8123 | grep -E 'portcon tcp 8123 +system_u:object_r:kstats_clickhouse_port_t:s0'"
check "kstats_t (kstats ship): connects to 8123 (kstats_clickhouse_port_t) and http_port_t (80, 443, 8443)" sh -c \
	"sesearch -A -s kstats_t -t kstats_t -c tcp_socket -p create,connect,write,read '$P' | grep . &&
	 sesearch -A -s kstats_t -t kstats_clickhouse_port_t -c tcp_socket -p name_connect '$P' | grep . &&
	 sesearch -A -s kstats_t -t http_port_t -c tcp_socket -p name_connect '$P' | grep ."
resolves_and_verifies() {
	active -A -s kstats_t -t dns_port_t -c tcp_socket -p name_connect | grep . &&
	active -A -s kstats_t -t kstats_t -c udp_socket -p create,connect,write | grep . &&
	active -A -s kstats_t -t net_conf_t -c file -p read | grep . &&
	active -A -s kstats_t -t cert_t -c file -p read,open | grep .
}
check "kstats_t: resolves the server's name (dns_port_t, net_conf_t) and reads the CA certificates (cert_t)" \
	resolves_and_verifies
check "kstats_t: reads ship.conf's password file (etc_t), writes its shipped record (kstats_var_lib_t)" sh -c \
	"sesearch -A -s kstats_t -t etc_t -c file -p read,open '$P' | grep . &&
	 sesearch -A -s kstats_t -t kstats_var_lib_t -c file -p create,write,rename '$P' | grep ."
check "kstats_t connects to no other port (booleans as shipped: not unreserved_port_t, not port_t)" \
	active_targets_only "kstats_clickhouse_port_t http_port_t dns_port_t" -A -s kstats_t -c tcp_socket -p name_connect
no_active() {	# sesearch args...: no active rule
	local r
	r=$(active "$@")
	echo "$r"
	[ -z "$r" ]
}
proxy_by_boolean() {
	sesearch -A -s kstats_t -t http_cache_port_t -c tcp_socket -p name_connect "$P" |
		grep -F '[ kstats_ship_http_proxy ]:True' &&
	grep -x 'kstats_ship_http_proxy false' "$tmp/bools" &&
	no_active -A -s kstats_t -t http_cache_port_t -c tcp_socket -p name_connect
}
check "kstats_t binds, listens and accepts on no port (booleans as shipped)" \
	no_active -A -s kstats_t -c tcp_socket,udp_socket -p name_bind,node_bind,listen,accept
check "kstats_t connects to an HTTP proxy (http_cache_port_t: 8080, 3128) only with kstats_ship_http_proxy, off by default" \
	proxy_by_boolean
loader_no_network() {
	active_targets_only dns_port_t -A -s kstats_loader_t -c tcp_socket -p name_connect &&
	no_active -A -s kstats_loader_t -c tcp_socket,udp_socket -p name_bind,node_bind,listen,accept
}
check "kstats_loader_t connects to no port but DNS (nsswitch, Debian's), binds and listens on none" \
	loader_no_network

# --- the neverallows, as queries on the whole policy ---
sessions=$(seinfo -a systemd_user_session_type -x "$P" | awk 'NR > 1 {print $1}' | tr '\n' ' ')
check "only kstats_loader_t, init_t, systemd user sessions and unconfined domains load programs" \
	only "kstats_loader_t init_t unconfined_domain_type $sessions" -A -c bpf -p prog_load
check "only kstats_loader_t (and unconfined domains) write its maps or run its programs" \
	only "kstats_loader_t unconfined_domain_type" -A -t kstats_loader_t -c bpf -p map_write,prog_run
check "only kstats_loader_t (and unconfined domains) pin, unpin or re-own in /sys/fs/bpf/kernelstats" \
	only "kstats_loader_t filesystem_unconfined_type" -A -t kstats_bpf_t -c file,dir \
	-p create,write,append,setattr,unlink,rename,add_name,remove_name,rmdir
check "a confined login user (user_t) has no access to the pins or the maps" sh -c \
	"! sesearch -A -s user_t -t kstats_bpf_t -c file,dir -p read,search,open,write,add_name '$P' | grep . &&
	 ! sesearch -A -s user_t -t kstats_loader_t -c bpf '$P' | grep ."

# A rule that breaks a neverallow is refused at install, naming it.
violation() {	# what rule
	rm -rf "$tmp/mod" && cp -r sepolicy/refpolicy "$tmp/mod"
	printf '\n%s\n' "$2" >>"$tmp/mod/kernelstats.te"
	if out=$(install_module "$tmp/mod"); then
		say FAIL "neverallow: $1: '$2' installed"
	elif grep -q 'neverallow check failed' <<<"$out"; then
		say PASS "neverallow: $1: refused at install ($(grep -m1 '(neverallow' <<<"$out" | tr -s ' '))"
	else
		say FAIL "neverallow: $1: '$2' failed, but not on a neverallow: $(head -4 <<<"$out" | tr '\n' ' ')"
	fi
}
violation "the reader writes a map" 'allow kstats_t kstats_loader_t:bpf map_write;'
violation "the reader loads a program" 'allow kstats_t self:bpf prog_load;'

# --- the same policy as sepolicy/ (AOSP) ---
# Each policy's unconditional allow rules from a kernelstats domain as
# "domain target class perm" lines, AOSP's names mapped to refpolicy's, on
# the classes and types both policies have: bpf, capabilities, and the
# files and directories of the kernelstats types.  Only file permissions
# that change something or read are compared (not open, getattr, ioctl,
# lock, map, watch: each base policy's macros grant those differently).
aosp_map='s/\<fs_bpf_kernelstats\>/kstats_bpf_t/g; s/\<kstats_bpf_file\>/kstats_obj_t/g;
	s/\<kstats_loader_exec\>/kstats_loader_exec_t/g; s/\<kstats_loader\>/kstats_loader_t/g;
	s/\<kstats_exec\>/kstats_exec_t/g; s/\<kstats_data_file\>/kstats_var_lib_t/g;
	s/\<kstats_runtime_file\>/kstats_runtime_t/g; s/\<kstats\>/kstats_t/g; s/\<fs_bpf\>/bpf_t/g'
rules_of() {	# policy domain
	sesearch -A -s "$2" "$1" | grep -v '\[ ' | tr -d '{};' | sed -E "$aosp_map" | awk -v d="$2" '
		{ split($3, tc, ":"); t = tc[1]; c = tc[2]
		  if (t == "self") t = $2
		  for (i = 4; i <= NF; i++) print t, c, $i }' |
	awk -v d="$(sed -E "$aosp_map" <<<"$2")" '
		$2 ~ /^(bpf|capability|capability2)$/ ||
		($1 ~ /^(bpf_t|kstats_(bpf|obj|var_lib|runtime|loader_exec)_t|kstats_exec_t)$/ && $2 ~ /^(file|dir)$/ &&
		 $3 ~ /^(read|write|append|create|setattr|unlink|rename|link|add_name|remove_name|rmdir|reparent|search|execute|execute_no_trans|entrypoint|relabelto)$/) {
			print d, $1, $2, $3 }' | sort -u
}
# What the two say differently, on purpose (sepolicy/README.md):
# Debian's kernel asks CAP_SYS_ADMIN for perf_event_open (kprobe variants,
# perf_event_paranoid=3); its units give the readers CAP_BPF, which the
# kernel checks on every bpf() call; refpolicy's search and read patterns
# include search of the directory, and the unload removes the directory.
known='kstats_loader_t kstats_loader_t capability sys_admin
kstats_t kstats_t capability2 bpf'
if ! tests/sepolicy/build.sh "$tmp/aosp" >"$tmp/aosp.log" 2>&1; then
	say FAIL "the AOSP policy does not compile: $(tail -2 "$tmp/aosp.log" | tr '\n' ' ')"
else
	for d in kstats_loader:kstats_loader_t kstats:kstats_t; do
		rules_of "$tmp/aosp/policy.bin" "${d%%:*}" >"$tmp/a"
		rules_of "$P" "${d##*:}" >"$tmp/d"
		diff=$( { comm -23 "$tmp/a" "$tmp/d" | sed 's/^/AOSP only: /'
			  comm -13 "$tmp/a" "$tmp/d" | grep -vxF "$known" | sed 's/^/Debian only: /'; } |
			awk '{k = $1 " " $2 " " $3 " " $4 ":" $5; p[k] = p[k] " " $6} END {for (k in p) print k p[k] ";"}')
		if [ -z "$diff" ]; then
			say PASS "${d##*:} has the permissions of AOSP's ${d%%:*} ($(wc -l <"$tmp/d") bpf, capability and file permissions compared)"
		else
			say FAIL "${d##*:} and AOSP's ${d%%:*} differ: $(tr '\n' ' ' <<<"$diff" | cut -c1-900)"
		fi
	done
fi

if [ "${SELINUX_GUEST:-1}" = 0 ]; then
	say SKIP "the enforcing guest: SELINUX_GUEST=0"
else
	tests/selinux/run.sh
fi
