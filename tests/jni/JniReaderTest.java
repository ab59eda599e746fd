// SPDX-License-Identifier: GPL-2.0
/*
 * KernelTelemetryReader in a real JVM on real pinned maps (run by
 * tests/sh/test_jni.sh, which loads compaction.bpf into a private pin dir):
 * CompactionDuration after real compactions equals kstats read --json
 * field by field; two reads around more compactions grow by what tracefs
 * counted between them; the puller example's deltas; enums, char arrays,
 * u64 and name clashes as kstats read shows them; bad input gives the
 * CLI's message, cause and exit code; misuse and concurrent reads and
 * close; a reader and the puller across unload and load.  Prints PASS:/FAIL:/SKIP: lines, exits 1 on any FAIL.
 *
 * Usage: JniReaderTest kstats=PATH obj=PATH map=NAME pindir=DIR
 *        [trace=TRACEFS_INSTANCE] [nobtf=PIN] [perm=1]
 *        [layouts=reader_layouts.bpf layoutslib=libjnilayouts.so]
 *        [loader=kstats-loader objdir=DIR rundir=DIR disable=OBJ,OBJ]
 */
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.kernelstats.KernelTelemetryException;
import org.kernelstats.KernelTelemetryException.Cause;
import org.kernelstats.KernelTelemetryReader;
import org.kernelstats.example.KernelTelemetryPuller;

public final class JniReaderTest {
    private static final Pattern TRACE_END = Pattern.compile("\\s(\\d+)\\.(\\d{6}): mm_compaction_end:");
    private static int failures;
    private static Map<String, String> arg = new HashMap<>();
    private static String obj, map, pin, pinDir;

    public static void main(String[] args) throws Exception {
        for (String a : args) {
            int eq = a.indexOf('=');
            arg.put(a.substring(0, eq), a.substring(eq + 1));
        }
        obj = arg.get("obj");
        map = arg.get("map");
        pinDir = arg.get("pindir");
        pin = pinDir + "/map_compaction_" + map;
        if (arg.containsKey("perm")) {
            permissionDenied();
        } else {
            try (KernelTelemetryReader r = KernelTelemetryReader.open(obj, map, pin)) {
                columns(r);
                afterCompactions(r);
                aroundCompactions(r);
                concurrentReads(r);
            }
            puller();
            layouts();
            badInput();
            misuse();
            closeWhileReading();
            reload();
        }
        System.exit(failures == 0 ? 0 : 1);
    }

    private static void check(boolean ok, String what) {
        System.out.println((ok ? "PASS: jni: " : "FAIL: jni: ") + what);
        if (!ok) {
            failures++;
        }
    }

    private static void compact(int times) throws IOException {
        for (int i = 0; i < times; i++) {
            Files.writeString(Path.of("/proc/sys/vm/compact_memory"), "1");
        }
    }

    private static long total(long[] rows, KernelTelemetryReader r) {
        long sum = 0;
        for (int i = 0; i < rows.length; i++) {
            if (i % r.columnCount() >= r.keyColumnCount()) {
                sum += rows[i];
            }
        }
        return sum;
    }

    /* ---- kstats read, the CLI ---- */

    private record Cli(int status, String out, String err) {}

    private static Cli kstats(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(arg.get("kstats"), "read"));
        cmd.addAll(Arrays.asList(args));
        Process p = new ProcessBuilder(cmd).start();
        p.getOutputStream().close();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return new Cli(p.waitFor(), out, err.strip());
    }

    /* kstats read --json: an array of flat objects of numbers, bools and strings. */
    private static List<Map<String, String>> parseJson(String s) {
        List<Map<String, String>> rows = new ArrayList<>();
        int[] at = {0};
        expect(s, at, '[');
        while (peek(s, at) == '{') {
            Map<String, String> row = new LinkedHashMap<>();
            at[0]++;
            while (peek(s, at) == '"') {
                String name = jsonString(s, at);
                expect(s, at, ':');
                String value = peek(s, at) == '"' ? jsonString(s, at) : jsonNumber(s, at);
                row.put(name, value);
                if (peek(s, at) == ',') {
                    at[0]++;
                }
            }
            expect(s, at, '}');
            rows.add(row);
            if (peek(s, at) == ',') {
                at[0]++;
            }
        }
        expect(s, at, ']');
        return rows;
    }

    private static char peek(String s, int[] at) {
        while (at[0] < s.length() && Character.isWhitespace(s.charAt(at[0]))) {
            at[0]++;
        }
        return at[0] < s.length() ? s.charAt(at[0]) : 0;
    }

    private static void expect(String s, int[] at, char c) {
        if (peek(s, at) != c) {
            throw new IllegalArgumentException("kstats read --json: expected " + c + " at " + at[0]);
        }
        at[0]++;
    }

    /* A number as written, a bool as the 1 or 0 the reader returns for it. */
    private static String jsonNumber(String s, int[] at) {
        for (String[] b : new String[][] {{"true", "1"}, {"false", "0"}}) {
            if (s.startsWith(b[0], at[0])) {
                at[0] += b[0].length();
                return b[1];
            }
        }
        int start = at[0];
        while (at[0] < s.length() && "-0123456789".indexOf(s.charAt(at[0])) >= 0) {
            at[0]++;
        }
        return s.substring(start, at[0]);
    }

    private static String jsonString(String s, int[] at) {
        StringBuilder b = new StringBuilder();
        expect(s, at, '"');
        for (char c; (c = s.charAt(at[0]++)) != '"';) {
            if (c == '\\') {
                c = s.charAt(at[0]++);
                if (c == 'u') {
                    c = (char) Integer.parseInt(s.substring(at[0], at[0] + 4), 16);
                    at[0] += 4;
                } else {
                    c = switch (c) { case 'n' -> '\n'; case 't' -> '\t'; case 'r' -> '\r';
                                     case 'b' -> '\b'; case 'f' -> '\f'; default -> c; };
                }
            }
            b.append(c);
        }
        return b.toString();
    }

    /* Every field of every row, as kstats read --json has them; null if equal. */
    private static String diff(KernelTelemetryReader r, long[] rows, List<Map<String, String>> json) {
        KernelTelemetryReader.Field[] fields = r.fields();
        int n = rows.length / r.columnCount();
        if (n != json.size()) {
            return n + " rows, kstats read has " + json.size();
        }
        for (Map<String, String> want : json) {
            boolean found = false;
            for (int row = 0; row < n && !found; row++) {
                Map<String, String> got = new LinkedHashMap<>();
                for (KernelTelemetryReader.Field f : fields) {
                    got.put(f.name, r.text(rows, row, f));
                }
                found = got.equals(want);
            }
            if (!found) {
                return "no row equals kstats read's " + want;
            }
        }
        return null;
    }

    /*
     * Other suites compact too: compare a Java read with kstats read only
     * when a Java read on either side of it saw the same values.
     */
    private static long[] compareWithCli(KernelTelemetryReader r, String what) throws Exception {
        for (int attempt = 0; attempt < 20; attempt++) {
            long[] before = r.read();
            Cli cli = kstats("--obj", obj, "--map", map, "--pin", pin, "--json");
            long[] after = r.read();
            if (cli.status != 0) {
                check(false, what + ": kstats read failed: " + cli.err);
                return after;
            }
            if (Arrays.equals(before, after)) {
                String d = diff(r, after, parseJson(cli.out));
                check(d == null, what + ": every value equals kstats read --json"
                        + (d == null ? "" : ": " + d));
                return after;
            }
        }
        check(false, what + ": the map changed during each of 20 reads");
        return r.read();
    }

    /* ---- the cases ---- */

    private static void columns(KernelTelemetryReader r) throws Exception {
        String[] c = r.columnNames();
        boolean ok = c.length == 33 && c[0].equals("key") && r.keyColumnCount() == 1 && r.maxRows() == 1;
        for (int i = 0; ok && i < 32; i++) {
            ok = c[i + 1].equals("buckets[" + i + "]");
        }
        check(ok, "columns from BTF: key, buckets[0..31]; 1 key column, 1 row at most: "
                + c.length + " columns, " + r.keyColumnCount() + " key, " + r.maxRows() + " rows");
        check(r.note().isEmpty(), "layout from the object's BTF (no note): '" + r.note() + "'");
    }

    private static void afterCompactions(KernelTelemetryReader r) throws Exception {
        compact(3);
        long[] rows = compareWithCli(r, "after 3 compactions");
        check(rows.length == 33 && total(rows, r) >= 3,
                "CompactionDuration counted the compactions: total " + total(rows, r));
        long[] buf = new long[r.maxRows() * r.columnCount()];
        int n = r.read(buf);
        check(n == 1 && buf[0] == 0, "read into a caller's array: " + n + " row, key " + buf[0]);
    }

    /* Compaction ends tracefs saw in [from, to] (CLOCK_MONOTONIC ns). */
    private static long traceEnds(long from, long to) throws IOException {
        long n = 0;
        for (String line : Files.readAllLines(Path.of(arg.get("trace"), "trace"))) {
            Matcher m = TRACE_END.matcher(line);
            if (m.find()) {
                long ns = Long.parseLong(m.group(1)) * 1_000_000_000L + Long.parseLong(m.group(2)) * 1000;
                n += ns >= from && ns <= to ? 1 : 0;
            }
        }
        return n;
    }

    private static void aroundCompactions(KernelTelemetryReader r) throws Exception {
        long[] first = compareWithCli(r, "first of two reads");
        long t0 = System.nanoTime();
        long[] a = r.read();
        long t1 = System.nanoTime();
        compact(5);
        long t2 = System.nanoTime();
        long[] b = r.read();
        long t3 = System.nanoTime();
        long[] second = compareWithCli(r, "second of two reads");
        boolean monotonic = true;
        for (int i = 0; i < first.length; i++) {
            monotonic &= first[i] <= a[i] && a[i] <= b[i] && b[i] <= second[i];
        }
        long grew = total(b, r) - total(a, r);
        check(monotonic && grew >= 5, "5 compactions between reads: every bucket monotonic, total grew "
                + grew);
        if (arg.get("trace") == null) {
            System.out.println("SKIP: jni: growth against tracefs: no tracefs instance");
            return;
        }
        // An end whose increment straddles a read may fall either side of it.
        long least = traceEnds(t1, t2), most = traceEnds(t0, t3);
        check(least <= grew && grew <= most, "growth " + grew + " within the tracefs count of"
                + " mm_compaction_end between the reads [" + least + ", " + most + "]");
    }

    private static void puller() throws Exception {
        try (KernelTelemetryPuller p = new KernelTelemetryPuller(obj, map, pin)) {
            long before = total(p.reader().read(), p.reader());
            long sum = 0;
            for (KernelTelemetryPuller.Atom a : p.pull()) {
                sum += Arrays.stream(a.deltas()).sum();
            }
            long first = sum;
            compact(3);
            List<KernelTelemetryPuller.Atom> atoms = p.pull();
            long after = total(p.reader().read(), p.reader());
            long grew = 0;
            boolean nonNegative = true;
            for (KernelTelemetryPuller.Atom a : atoms) {
                grew += Arrays.stream(a.deltas()).sum();
                nonNegative &= Arrays.stream(a.deltas()).allMatch(d -> d >= 0);
            }
            sum += grew;
            check(first >= before && atoms.size() == 1 && atoms.get(0).key().equals("key=0")
                    && nonNegative && grew >= 3 && sum <= after,
                    "puller example: first pull " + first + " (read before: " + before + "), then key=0 grew "
                    + grew + " >= 3 after 3 compactions, all pulled " + sum + " <= read after " + after);
        }
    }

    /* kstats-loader with the test's directories; its output, or null on a failure. */
    private static String loader(String... extra) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(arg.get("loader"), "--obj-dir", arg.get("objdir"),
                "--pin-dir", pinDir, "--run-dir", arg.get("rundir"), "--disable", arg.get("disable")));
        cmd.addAll(Arrays.asList(extra));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor() == 0 ? out : null;
    }

    /*
     * Unload and load under a long-lived reader and puller: each reads the
     * new map, as a reader opened afresh does (they read the replaced map
     * and the puller saw no new compaction).
     */
    private static void reload() throws Exception {
        if (arg.get("loader") == null) {
            System.out.println("SKIP: jni: reload: no loader given");
            return;
        }
        try (KernelTelemetryReader r = KernelTelemetryReader.open(obj, map, pin);
             KernelTelemetryPuller p = new KernelTelemetryPuller(obj, map, pin)) {
            compact(3);
            long oldId = r.mapId(), oldTotal = total(r.read(), r);
            p.pull();
            if (loader("--unload") == null || loader() == null) {
                check(false, "reload: kstats-loader --unload, then a load");
                return;
            }
            compact(2);
            long pulled = 0;
            for (KernelTelemetryPuller.Atom a : p.pull()) {
                pulled += Arrays.stream(a.deltas()).sum();
            }
            long held = -1, fresh = -2, newId = -1;
            for (int i = 0; i < 3 && held != fresh; i++) { // other suites compact too
                held = total(r.read(), r);
                try (KernelTelemetryReader f = KernelTelemetryReader.open(obj, map, pin)) {
                    newId = f.mapId();
                    fresh = total(f.read(), f);
                }
            }
            check(r.mapId() == newId && newId != oldId && held == fresh,
                    "reload: a reader opened before unload and load reads the new map (id " + oldId
                    + " -> " + r.mapId() + ", a fresh reader's " + newId + "): " + held
                    + " counts, a fresh reader " + fresh + ", the old map had " + oldTotal);
            check(pulled >= 2 && pulled <= fresh, "reload: the puller's first pull after it returns "
                    + pulled + " counts of the new map (>= 2 compactions, <= its " + fresh + ")");
        }
    }

    private static native String pinLayouts(String obj, String dir);

    /* Maps of tests/bpf/reader_layouts.c, field by field against kstats read --json. */
    private static void layouts() throws Exception {
        String lobj = arg.get("layouts");
        if (lobj == null) {
            System.out.println("SKIP: jni: enums, strings, clashes: reader_layouts.bpf is not built");
            return;
        }
        System.load(arg.get("layoutslib"));
        String err = pinLayouts(lobj, pinDir);
        if (err != null) {
            check(false, "reader_layouts.bpf: cannot load and pin its maps: " + err);
            return;
        }
        String[][] want = {
            {"small_map", "a", "b", "s", "u"},
            {"flags_map", "key", "on", "tag", "last", "delta"},
            {"name_map", "key", "name", "len"},
            {"clash_map", "key.id", "value.id", "n"},
        };
        for (String[] w : want) {
            String p = pinDir + "/map_reader_layouts_" + w[0];
            try (KernelTelemetryReader r = KernelTelemetryReader.open(lobj, w[0], p)) {
                long[] rows = r.read();
                Cli cli = kstats("--obj", lobj, "--map", w[0], "--pin", p, "--json");
                List<String> names = new ArrayList<>();
                for (KernelTelemetryReader.Field f : r.fields()) {
                    names.add(f.name);
                }
                String d = cli.status == 0 ? diff(r, rows, parseJson(cli.out)) : cli.err;
                check(d == null && names.equals(Arrays.asList(w).subList(1, w.length)),
                        w[0] + ": fields " + names + ", every value equals kstats read --json"
                        + (d == null ? "" : ": " + d));
            }
        }
    }

    /* The exception's cause, message and exit code against kstats read's. */
    private static void expectError(String what, String o, String m, String p, Cause want) throws Exception {
        KernelTelemetryException got = null;
        try (KernelTelemetryReader r = KernelTelemetryReader.open(o, m, p)) {
            r.read();
        } catch (KernelTelemetryException e) {
            got = e;
        }
        Cli cli = o != null ? kstats("--obj", o, "--map", m, "--pin", p) : kstats("--pin", p);
        if (got == null) {
            check(false, what + ": no exception");
            return;
        }
        String line = "kstats read: " + got.getMessage() + (want == Cause.NOT_LOADED ? ", or pass --pin" : "");
        check(got.cause() == want && cli.status == want.exitCode && cli.err.equals(line),
                what + ": " + got.cause() + " (want " + want + "), exit " + cli.status + " (want "
                + want.exitCode + "), '" + got.getMessage() + "' is kstats read's '" + cli.err + "'");
    }

    private static void badInput() throws Exception {
        expectError("no pin", obj, map, pinDir + "/nope", Cause.NOT_LOADED);
        expectError("no pin dir", obj, map, pinDir + "-missing/x", Cause.NOT_LOADED);
        expectError("wrong map name", obj, "no_such_map", pin, Cause.NO_SUCH_MAP);
        expectError("a pinned program", obj, map, pinDir + "/prog_compaction_tp_btf_mm_compaction_end",
                Cause.NOT_A_MAP);
        expectError("a pinned link", obj, map, pinDir + "/link_compaction_on_compaction_end", Cause.NOT_A_MAP);
        expectError("the pin directory", obj, map, pinDir, Cause.NOT_A_MAP);
        expectError("a file off bpffs", obj, map, obj, Cause.NOT_A_MAP);
        expectError("task storage map", obj, "compaction_start_map",
                pinDir + "/map_compaction_compaction_start_map", Cause.UNSUPPORTED);
        String nobtf = arg.get("nobtf");
        if (nobtf == null) {
            System.out.println("SKIP: jni: layout mismatch: no BTF-less map (bpftool map create failed)");
            return;
        }
        expectError("object's layout on another map", obj, map, nobtf, Cause.LAYOUT_MISMATCH);
        expectError("a map without BTF and no object", null, null, nobtf, Cause.LAYOUT_MISMATCH);
    }

    private static void permissionDenied() throws Exception {
        expectError("not root", obj, map, pin, Cause.PERMISSION_DENIED);
    }

    private interface Call {
        void run() throws Exception;
    }

    private static void expectThrows(String what, Class<?> want, Call call) {
        Throwable got = null;
        try {
            call.run();
        } catch (Throwable t) {
            got = t;
        }
        check(want.isInstance(got), what + ": " + (got == null ? "nothing" : got.toString()));
    }

    private static void misuse() throws Exception {
        expectThrows("null pin path", NullPointerException.class,
                () -> KernelTelemetryReader.open(obj, map, null));
        expectThrows("object without a map name", IllegalArgumentException.class,
                () -> KernelTelemetryReader.open(obj, null, pin));
        KernelTelemetryReader r = KernelTelemetryReader.open(obj, map, pin);
        expectThrows("array too short", IllegalArgumentException.class, () -> r.read(new long[32]));
        expectThrows("null array", NullPointerException.class, () -> r.read(null));
        r.close();
        expectThrows("read after close", IllegalStateException.class, () -> r.read());
        expectThrows("read into an array after close", IllegalStateException.class,
                () -> r.read(new long[33]));
        expectThrows("enum name after close", IllegalStateException.class, () -> r.enumName(0, 0));
        r.close();
        check(r.columnCount() == 33, "second close is harmless; the layout stays readable");
        KernelTelemetryReader.open(null, null, pin).close();
        check(true, "open with the map's own BTF (no object)");
    }

    /* Reader threads, one compacting; each sees its totals never drop. */
    private static void concurrentReads(KernelTelemetryReader r) throws Exception {
        AtomicReference<String> bad = new AtomicReference<>();
        AtomicInteger reads = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(new Thread(() -> {
                long last = 0;
                long[] buf = new long[r.maxRows() * r.columnCount()];
                try {
                    for (int i = 0; i < 300; i++) {
                        long[] rows = i % 2 == 0 ? r.read() : buf;
                        int n = i % 2 == 0 ? rows.length / r.columnCount() : r.read(buf);
                        long now = total(Arrays.copyOf(rows, n * r.columnCount()), r);
                        if (n != 1 || now < last) {
                            bad.compareAndSet(null, n + " rows, total " + now + " after " + last);
                        }
                        last = now;
                        reads.incrementAndGet();
                    }
                } catch (Exception e) {
                    bad.compareAndSet(null, e.toString());
                }
            }));
        }
        threads.add(new Thread(() -> {
            try {
                compact(5);
            } catch (IOException e) {
                bad.compareAndSet(null, e.toString());
            }
        }));
        threads.forEach(Thread::start);
        for (Thread t : threads) {
            t.join();
        }
        check(bad.get() == null && reads.get() == 1200, "4 threads x 300 reads on one reader while"
                + " compacting: " + reads.get() + " reads, " + (bad.get() == null ? "all consistent" : bad.get()));
    }

    private static void closeWhileReading() throws Exception {
        KernelTelemetryReader r = KernelTelemetryReader.open(obj, map, pin);
        AtomicReference<String> bad = new AtomicReference<>();
        AtomicInteger stopped = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            threads.add(new Thread(() -> {
                try {
                    for (;;) {
                        r.read();
                    }
                } catch (IllegalStateException e) {
                    stopped.incrementAndGet();
                } catch (Exception e) {
                    bad.compareAndSet(null, e.toString());
                }
            }));
        }
        threads.forEach(Thread::start);
        Thread.sleep(50);
        r.close();
        for (Thread t : threads) {
            t.join(10_000);
        }
        check(bad.get() == null && stopped.get() == 4, "close while 4 threads read: "
                + stopped.get() + " stopped with IllegalStateException" + (bad.get() == null ? "" : ", " + bad.get()));
    }
}
