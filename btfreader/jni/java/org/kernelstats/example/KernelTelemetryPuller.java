// SPDX-License-Identifier: GPL-2.0
package org.kernelstats.example;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.kernelstats.KernelTelemetryException;
import org.kernelstats.KernelTelemetryReader;

/**
 * The shape of the AOSP page's pullKernelTelemetry for one metric: each
 * pull reads the map once and returns, per key, how much each value column
 * (the histogram buckets) grew since the previous pull.  The first pull
 * returns everything counted so far.  When the pin names another map
 * (unload and load: the reader follows it, and its map id changes), the
 * pull returns everything the new map counted, from its load on.  kstats
 * pull remains the product.
 */
public final class KernelTelemetryPuller implements AutoCloseable {
    /** One key's growth: its label ("key=0", enum names) and per-column deltas. */
    public record Atom(String key, long[] deltas) {}

    private final KernelTelemetryReader reader;
    private final KernelTelemetryReader.Field[] fields;
    private final long[] rows;
    private final Map<String, long[]> previous = new HashMap<>();
    private long mapId = -1;

    public KernelTelemetryPuller(String objectPath, String mapName, String pinPath)
            throws KernelTelemetryException {
        reader = KernelTelemetryReader.open(objectPath, mapName, pinPath);
        fields = reader.fields();
        rows = new long[reader.maxRows() * reader.columnCount()];
    }

    public KernelTelemetryReader reader() {
        return reader;
    }

    /** The keys whose values grew since the last pull. */
    public List<Atom> pull() throws KernelTelemetryException {
        int n = reader.read(rows), ncols = reader.columnCount(), nkey = reader.keyColumnCount();
        List<Atom> atoms = new ArrayList<>();
        if (reader.mapId() != mapId) {
            previous.clear(); // another map: its counts began at its load
            mapId = reader.mapId();
        }
        for (int r = 0; r < n; r++) {
            String key = label(r);
            long[] now = new long[ncols - nkey];
            System.arraycopy(rows, r * ncols + nkey, now, 0, now.length);
            long[] before = previous.put(key, now);
            long[] delta = new long[now.length];
            boolean grew = false;
            for (int i = 0; i < now.length; i++) {
                long b = before == null || Long.compareUnsigned(now[i], before[i]) < 0 ? 0 : before[i];
                delta[i] = now[i] - b;
                grew |= delta[i] != 0;
            }
            if (grew) {
                atoms.add(new Atom(key, delta));
            }
        }
        return atoms;
    }

    private String label(int row) {
        StringBuilder s = new StringBuilder();
        for (KernelTelemetryReader.Field f : fields) {
            if (f.inKey) {
                s.append(s.length() > 0 ? "," : "").append(f.name).append('=')
                        .append(reader.text(rows, row, f));
            }
        }
        return s.toString();
    }

    @Override
    public void close() {
        reader.close();
    }

    /** Usage: KernelTelemetryPuller OBJ.bpf MAP PIN [PULLS [SECONDS]] */
    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: KernelTelemetryPuller OBJ.bpf MAP PIN [PULLS [SECONDS]]");
            System.exit(2);
        }
        int pulls = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        long pauseMs = args.length > 4 ? (long) (Double.parseDouble(args[4]) * 1000) : 1000;
        try (KernelTelemetryPuller p = new KernelTelemetryPuller(args[0], args[1], args[2])) {
            for (int i = 0; i < pulls; i++) {
                if (i > 0) {
                    Thread.sleep(pauseMs);
                }
                for (Atom a : p.pull()) {
                    System.out.println("pull " + i + " " + a.key() + " " + Arrays.toString(a.deltas()));
                }
            }
        } catch (KernelTelemetryException e) {
            System.err.println("KernelTelemetryPuller: " + e.getMessage());
            System.exit(e.cause().exitCode);
        }
    }
}
