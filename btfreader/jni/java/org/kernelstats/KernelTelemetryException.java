// SPDX-License-Identifier: GPL-2.0
package org.kernelstats;

import java.io.IOException;

/**
 * A pinned map that cannot be opened or read.  The message is the line
 * {@code kstats read} prints for the same failure (without its "kstats
 * read: " prefix); {@link #cause()} is the kind of failure and
 * {@link Cause#exitCode} the exit status {@code kstats read} gives it.
 */
public final class KernelTelemetryException extends IOException {
    private static final long serialVersionUID = 1L;

    /** What went wrong, as kstats(1) sorts failures. */
    public enum Cause {
        /** Nothing pinned at the path, or no bpffs: run kstats-loader. */
        NOT_LOADED(3),
        /** Needs CAP_BPF and group kstats. */
        PERMISSION_DENIED(5),
        /** The object defines no map of that name. */
        NO_SUCH_MAP(2),
        /** The path holds a program, a link, a directory or a file: no map. */
        NOT_A_MAP(2),
        /** The key/value layout does not fit the map (wrong object, no BTF). */
        LAYOUT_MISMATCH(1),
        /** The pin now holds another map, with other columns: open it again. */
        REPLACED(1),
        /** A map type or leaf type the reader does not decode. */
        UNSUPPORTED(1),
        /** Anything else: out of memory, a map changing too fast to read. */
        ERROR(1);

        /** The exit status of kstats read for this failure. */
        public final int exitCode;

        Cause(int exitCode) {
            this.exitCode = exitCode;
        }
    }

    // errno values of Linux, as libkstats returns them.
    private static final int EPERM = 1, ENOENT = 2, ESRCH = 3, EACCES = 13,
            ENODEV = 19, EINVAL = 22, ENODATA = 61, EOPNOTSUPP = 95, ESTALE = 116, EMEDIUMTYPE = 124;

    private final int errno;

    KernelTelemetryException(String message, int errno) {
        super(message);
        this.errno = errno;
    }

    /** The errno libkstats failed with (positive). */
    public int errno() {
        return errno;
    }

    public Cause cause() {
        switch (errno) {
            case ENOENT: case ENODEV: return Cause.NOT_LOADED;
            case EPERM: case EACCES: return Cause.PERMISSION_DENIED;
            case ESRCH: return Cause.NO_SUCH_MAP;
            case EMEDIUMTYPE: return Cause.NOT_A_MAP;
            case EINVAL: case ENODATA: return Cause.LAYOUT_MISMATCH;
            case EOPNOTSUPP: return Cause.UNSUPPORTED;
            case ESTALE: return Cause.REPLACED;
            default: return Cause.ERROR;
        }
    }
}
