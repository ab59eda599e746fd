// SPDX-License-Identifier: GPL-2.0
package org.kernelstats;

import java.lang.ref.Cleaner;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Reads one pinned telemetry map generically, as {@code kstats read} does:
 * the key and value layouts come from BTF (the object's, else the map's
 * own) and are resolved once, at {@link #open}.  Each {@link #read} is one
 * batch lookup; every entry becomes one row of {@link #columnCount} longs,
 * the key columns first, in the kernel's order (not sorted).
 *
 * <p>Thread-safe: calls on one reader run one at a time.  After
 * {@link #close}, reads and {@link #enumName} throw
 * {@link IllegalStateException} (the column layout stays readable); closing
 * twice is harmless.  The native library is {@code libkstats_jni.so}, from
 * {@code java.library.path} or the path in the system property
 * {@code kstats.jni.library}.
 */
public final class KernelTelemetryReader implements AutoCloseable {
    static {
        String path = System.getProperty("kstats.jni.library");
        if (path != null) {
            System.load(path);
        } else {
            System.loadLibrary("kstats_jni");
        }
    }

    private static final Cleaner CLEANER = Cleaner.create();
    private static final int KIND_CHAR = 2, KIND_ENUM = 3;

    /** The native handle; its lock serializes every native call on it. */
    private static final class Handle implements Runnable {
        private long ptr;

        Handle(long ptr) {
            this.ptr = ptr;
        }

        long get() {
            if (ptr == 0) {
                throw new IllegalStateException("the KernelTelemetryReader is closed");
            }
            return ptr;
        }

        @Override
        public synchronized void run() {
            if (ptr != 0) {
                nativeClose(ptr);
                ptr = 0;
            }
        }
    }

    /** A field of kstats read's output: one column, or a char array as one string. */
    public static final class Field {
        public final String name;
        public final int column, length;
        public final boolean isString, inKey;

        Field(String name, int column, int length, boolean isString, boolean inKey) {
            this.name = name;
            this.column = column;
            this.length = length;
            this.isString = isString;
            this.inKey = inKey;
        }

        Field renamed(String newName) {
            return new Field(newName, column, length, isString, inKey);
        }
    }

    private final Handle handle;
    private final Cleaner.Cleanable cleanable;
    private final String[] columns;
    private final int[] layout;
    private final int keyColumns, maxRows;
    private final String note;
    private final Field[] fields;

    private KernelTelemetryReader(Handle handle, long ptr) {
        this.handle = handle;
        cleanable = CLEANER.register(this, handle);
        columns = nativeColumns(ptr);
        layout = nativeLayout(ptr);
        keyColumns = layout[0];
        maxRows = layout[1];
        note = nativeNote(ptr);
        fields = buildFields();
    }

    /**
     * Opens the map pinned at pinPath, with the types of mapName in the
     * .bpf object at objectPath; objectPath and mapName null: the map's own BTF.
     */
    public static KernelTelemetryReader open(String objectPath, String mapName, String pinPath)
            throws KernelTelemetryException {
        Objects.requireNonNull(pinPath, "pinPath");
        if (objectPath != null && mapName == null) {
            throw new IllegalArgumentException("an object path needs a map name");
        }
        long ptr = nativeOpen(objectPath, mapName, pinPath);
        Handle handle = new Handle(ptr);
        try {
            return new KernelTelemetryReader(handle, ptr);
        } catch (RuntimeException | Error e) {
            handle.run();
            throw e;
        }
    }

    /** Column names from BTF: "key", "buckets[3]", "a.b[1].c". */
    public String[] columnNames() {
        return columns.clone();
    }

    public int columnCount() {
        return columns.length;
    }

    /** The first keyColumnCount() columns of a row are its key. */
    public int keyColumnCount() {
        return keyColumns;
    }

    /** The most rows a read can return: a buffer of maxRows() * columnCount() fits any. */
    public int maxRows() {
        return maxRows;
    }

    /** Why the map's own BTF was used instead of the object's, or "". */
    public String note() {
        return note;
    }

    /** kstats read's fields: char arrays joined into strings, clashing names qualified. */
    public Field[] fields() {
        return fields.clone();
    }

    /**
     * Reads every entry into rows (row-major) with one batch lookup and
     * returns how many rows it holds.  rows must hold maxRows() rows.
     */
    public int read(long[] rows) throws KernelTelemetryException {
        if (rows.length / columns.length < maxRows) {
            throw new IllegalArgumentException("rows holds " + rows.length + " longs; it needs "
                    + maxRows + " * " + columns.length);
        }
        synchronized (handle) {
            return nativeRead(handle.get(), rows);
        }
    }

    /**
     * The kernel's id of the map read.  Each read first looks whether the
     * pin still names that map; after an unload and load it reads the new
     * map (whose counts started from zero at its load) and this id changes.
     */
    public long mapId() {
        synchronized (handle) {
            return nativeMapId(handle.get());
        }
    }

    /** Reads every entry into a new array of exactly the rows read. */
    public long[] read() throws KernelTelemetryException {
        synchronized (handle) {
            return nativeReadNew(handle.get());
        }
    }

    /** The enumerator name of value in an enum column, or null. */
    public String enumName(int column, long value) {
        synchronized (handle) {
            long ptr = handle.get();
            boolean isEnum = column >= 0 && column < columns.length && kind(column) == KIND_ENUM;
            return isEnum ? nativeEnumName(ptr, column, value) : null;
        }
    }

    /** A field of row as kstats read shows it: enum name, text or decimal. */
    public String text(long[] rows, int row, Field f) {
        int base = row * columns.length + f.column;
        if (f.isString) {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < f.length && rows[base + i] != 0; i++) {
                int ch = (int) (rows[base + i] & 0xff);
                s.append(ch >= 0x20 && ch < 0x7f && ch != '\\' ? Character.toString(ch)
                        : String.format("\\x%02x", ch));
            }
            return s.toString();
        }
        String e = enumName(f.column, rows[base]);
        if (e != null) {
            return e;
        }
        return isUnsigned64(f.column) ? Long.toUnsignedString(rows[base]) : Long.toString(rows[base]);
    }

    /** Whether column holds a u64: its long is to be read unsigned. */
    public boolean isUnsigned64(int column) {
        int flags = layout[2 + 2 * column];
        return (flags >> 8 & 0xff) == 8 && (flags & 1 << 16) == 0;
    }

    @Override
    public void close() {
        cleanable.clean();
    }

    private int kind(int column) {
        return layout[2 + 2 * column] & 0xff;
    }

    private int offset(int column) {
        return layout[3 + 2 * column];
    }

    /* "name[0]", "name[1]", ... of consecutive chars: one string field "name". */
    private int charRun(int c, int end, List<Field> out) {
        String first = columns[c];
        int br = first.lastIndexOf('[');
        if (br < 0 || !first.substring(br).equals("[0]") || kind(c) != KIND_CHAR) {
            return 0;
        }
        String base = first.substring(0, br);
        int n = 0;
        while (c + n < end && kind(c + n) == KIND_CHAR
                && columns[c + n].equals(base + "[" + n + "]") && offset(c + n) == offset(c) + n) {
            n++;
        }
        out.add(new Field(base, c, n, true, c < keyColumns));
        return n;
    }

    private Field[] buildFields() {
        List<Field> out = new ArrayList<>();
        for (int c = 0; c < columns.length;) {
            int run = charRun(c, c < keyColumns ? keyColumns : columns.length, out);
            if (run == 0) {
                out.add(new Field(columns[c], c, 1, false, c < keyColumns));
                run = 1;
            }
            c += run;
        }
        Field[] f = out.toArray(new Field[0]);
        for (int i = 0; i < f.length; i++) {
            for (int j = 0; f[i].inKey && j < f.length; j++) {
                if (!f[j].inKey && f[i].name.equals(f[j].name)) {
                    f[j] = f[j].renamed("value." + f[j].name);
                    f[i] = f[i].renamed("key." + f[i].name);
                    break;
                }
            }
        }
        return f;
    }

    private static native long nativeOpen(String objectPath, String mapName, String pinPath)
            throws KernelTelemetryException;
    private static native void nativeClose(long ptr);
    private static native String[] nativeColumns(long ptr);
    private static native int[] nativeLayout(long ptr);
    private static native String nativeNote(long ptr);
    private static native String nativeEnumName(long ptr, int column, long value);
    private static native long nativeMapId(long ptr);
    private static native int nativeRead(long ptr, long[] rows) throws KernelTelemetryException;
    private static native long[] nativeReadNew(long ptr) throws KernelTelemetryException;
}
