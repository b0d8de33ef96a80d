package io.github.pulsarbroadcast.broadcast.prometheus;

import io.github.pulsarbroadcast.broadcast.metrics.LatencyHistogram;
import org.apache.pulsar.common.util.SimpleTextOutputStream;

/**
 * Writes Prometheus text format (0.0.4) to the broker's metrics stream: one {@code # HELP} and {@code # TYPE} line
 * per family, then its samples. Label values are escaped as Prometheus requires (backslash, double quote, newline).
 *
 * <p>Threading: not thread-safe; one instance per scrape, on the broker's metrics thread.
 */
final class MetricsText {

    private static final String[] BOUNDS = new String[LatencyHistogram.BOUNDS_MS.length];

    static {
        for (int i = 0; i < BOUNDS.length; i++) {
            double b = LatencyHistogram.BOUNDS_MS[i];
            BOUNDS[i] = b == Math.rint(b) ? Long.toString((long) b) : Double.toString(b);
        }
    }

    private final SimpleTextOutputStream out;

    MetricsText(SimpleTextOutputStream out) {
        this.out = out;
    }

    /** Starts a family. */
    void family(String name, String type, String help) {
        out.write("# HELP ").write(name).write(' ').write(help).write('\n');
        out.write("# TYPE ").write(name).write(' ').write(type).write('\n');
    }

    /** One sample: {@code labels} is a rendered label list without braces (see {@link #label}). */
    void sample(String name, String labels, long value) {
        out.write(name).write('{').write(labels).write("} ").write(value).write('\n');
    }

    void sample(String name, String labels, double value) {
        out.write(name).write('{').write(labels).write("} ").write(value).write('\n');
    }

    /** The samples of one histogram: cumulative buckets, {@code +Inf}, sum and count. */
    void histogram(String name, String labels, LatencyHistogram.Snapshot h) {
        for (int i = 0; i < BOUNDS.length; i++) {
            out.write(name).write("_bucket{").write(labels).write(",le=\"").write(BOUNDS[i]).write("\"} ")
                    .write(h.cumulative(i)).write('\n');
        }
        out.write(name).write("_bucket{").write(labels).write(",le=\"+Inf\"} ").write(h.count()).write('\n');
        sample(name + "_sum", labels, h.sumMs());
        sample(name + "_count", labels, h.count());
    }

    /** {@code name="value"} with the value escaped. */
    static String label(String name, String value) {
        StringBuilder b = new StringBuilder(name.length() + value.length() + 4).append(name).append("=\"");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\' || c == '"') {
                b.append('\\').append(c);
            } else if (c == '\n') {
                b.append("\\n");
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
