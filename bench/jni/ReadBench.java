// SPDX-License-Identifier: GPL-2.0
/*
 * The Java half of bench/jni: reads the pinned map PIN through
 * KernelTelemetryReader, warmed (JIT) first, and prints the time of each
 * read in ms, into one caller's array and into a new array per read:
 *   into <ms>...
 *   new <ms>...
 * Usage: ReadBench PIN ENTRIES REPEAT
 */
import org.kernelstats.KernelTelemetryReader;

public final class ReadBench {
    public static void main(String[] args) throws Exception {
        String pin = args[0];
        int entries = Integer.parseInt(args[1]), repeat = Integer.parseInt(args[2]);
        try (KernelTelemetryReader r = KernelTelemetryReader.open(null, null, pin)) {
            long[] rows = new long[r.maxRows() * r.columnCount()];
            StringBuilder into = new StringBuilder("into"), fresh = new StringBuilder("new");
            for (int i = 0; i < 50; i++) {
                r.read(rows);
                r.read();
            }
            for (int i = 0; i < repeat; i++) {
                long t0 = System.nanoTime();
                int n = r.read(rows);
                long t1 = System.nanoTime();
                long[] all = r.read();
                long t2 = System.nanoTime();
                if (n != entries || all.length != entries * r.columnCount()) {
                    throw new IllegalStateException("read " + n + " rows of " + entries);
                }
                into.append(' ').append((t1 - t0) / 1e6);
                fresh.append(' ').append((t2 - t1) / 1e6);
            }
            System.out.println(into);
            System.out.println(fresh);
        }
    }
}
