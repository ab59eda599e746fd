// SPDX-License-Identifier: GPL-2.0
/*
 * bench/jni: a Java KernelTelemetryReader read of an N-entry map (u32 key,
 * 32 x u64 value: compaction.bpf's histogram as a hash) against the C reader
 * on the same map, in one JVM, turn about, after a JIT warm-up: median and
 * minimum times, their ratios Java / C, and the median of the ratios of
 * each round (the C read next to it in time: the fairest on a loaded box).  The C side is bench_native.c (libreadbench.so).
 *
 * Usage: java -Dkstats.jni.library=SO -Dreadbench.library=SO ReadBench
 *        OBJ.bpf PIN_DIR [ENTRIES [REPEAT]]   (root)
 */
import java.io.File;
import java.util.Arrays;
import org.kernelstats.KernelTelemetryReader;

public final class ReadBench {
    static {
        System.load(System.getProperty("readbench.library"));
    }

    private static native String createMap(String obj, String pin, int entries);
    private static native long cOpen(String pin);
    private static native long cRead(long handle);
    private static native void cClose(long handle);

    private static double median(long[] ns) {
        long[] s = ns.clone();
        Arrays.sort(s);
        return s[s.length / 2] / 1e6;
    }

    private static double min(long[] ns) {
        return Arrays.stream(ns).min().getAsLong() / 1e6;
    }

    /* Median and min, their ratios to C's, and the median of the per-round ratios. */
    private static void print(String what, long[] ns, long[] c) {
        long[] paired = new long[ns.length];
        for (int i = 0; i < ns.length; i++) {
            paired[i] = ns[i] * 1_000_000 / Math.max(c[i], 1);
        }
        System.out.printf("%-36s %8.3f %8.3f %7.2fx %7.2fx %7.2fx%n", what, median(ns), min(ns),
                median(ns) / median(c), min(ns) / min(c), median(paired));
    }

    /* One read: 0 Java into rows, 1 Java into a new array, 2 C; its ns. */
    private static long timeOne(int what, KernelTelemetryReader r, long[] rows, long c, int entries)
            throws Exception {
        long t0 = System.nanoTime();
        int n = what == 0 ? r.read(rows) : what == 1 ? r.read().length / r.columnCount() : entries;
        long t1 = System.nanoTime();
        long cn = what == 2 ? cRead(c) : t1 - t0;
        if (n != entries || cn < 0) {
            throw new IllegalStateException("read " + n + " rows of " + entries);
        }
        return cn;
    }

    public static void main(String[] args) throws Exception {
        String obj = args[0];
        File dir = new File(args[1]);
        int entries = args.length > 2 ? Integer.parseInt(args[2]) : 10000;
        int repeat = args.length > 3 ? Integer.parseInt(args[3]) : 501;
        String pin = new File(dir, "map").getPath();
        if (!dir.mkdir()) {
            throw new IllegalStateException("cannot make " + dir);
        }
        try {
            String err = createMap(obj, pin, entries);
            if (err != null) {
                throw new IllegalStateException("a " + entries + "-entry map: " + err);
            }
            run(pin, entries, repeat);
        } finally {
            new File(pin).delete();
            dir.delete();
        }
    }

    private static void run(String pin, int entries, int repeat) throws Exception {
        long c = cOpen(pin);
        if (c == 0) {
            throw new IllegalStateException("C reader: cannot open " + pin);
        }
        long[] cNs = new long[repeat], intoNs = new long[repeat], newNs = new long[repeat];
        try (KernelTelemetryReader r = KernelTelemetryReader.open(null, null, pin)) {
            long[] rows = new long[r.maxRows() * r.columnCount()];
            long[][] ns = {intoNs, newNs, cNs};
            for (int i = -100; i < repeat; i++) {	// the first 100: warm-up
                for (int k = 0; k < 3; k++) {	// each goes first in turn
                    int what = (i + 300 + k) % 3;
                    long t = timeOne(what, r, rows, c, entries);
                    if (i >= 0) {
                        ns[what][i] = t;
                    }
                }
            }
        } finally {
            cClose(c);
        }
        System.out.printf("# %d-entry hash map, u32 key, 32 x u64 value; %d reads each, turn about"
                + " in one JVM; ms%n", entries, repeat);
        System.out.printf("%-36s %8s %8s %8s %8s %8s%n", "", "median", "min", "med/med", "min/min",
                "paired");
        print("C kstats_map_read", cNs, cNs);
        print("Java read(long[]) (caller's array)", intoNs, cNs);
        print("Java read() (new array each read)", newNs, cNs);
    }
}
