package io.github.pulsarbroadcast.bench.metrics;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A streaming reader of the Prometheus text exposition format 0.0.4, one line at a time: {@code # HELP} and
 * {@code # TYPE} lines (TYPE handed to the sink, other comments skipped), and samples
 * {@code name{label="value",...} value [timestamp]} with escaped label values ({@code \\}, {@code \"}, {@code \n}),
 * {@code +Inf}, {@code -Inf}, {@code NaN} and exponent numbers. A line is parsed only when its metric name passes
 * the caller's filter, so that a large {@code /metrics} body costs little more than reading it.
 *
 * <p>Threading: stateless; any thread.
 */
public final class PromText {

    /** Receives what a body holds. Threading: called on the parsing thread. */
    public interface Sink {
        void sample(String name, Map<String, String> labels, double value);

        /** A {@code # TYPE name type} line. */
        default void type(String name, String type) {
        }
    }

    /** One parsed sample line. Threading: immutable. */
    public static final class Sample {
        public final String name;
        public final Map<String, String> labels;
        public final double value;

        Sample(String name, Map<String, String> labels, double value) {
            this.name = name;
            this.labels = labels;
            this.value = value;
        }
    }

    private PromText() {
    }

    /**
     * Reads {@code in} to its end, handing every sample whose metric name passes {@code wanted} (and every TYPE line)
     * to {@code sink}; returns the number of malformed sample lines among the wanted ones, which are skipped.
     */
    public static int parse(BufferedReader in, Predicate<String> wanted, Sink sink) throws IOException {
        int malformed = 0;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isEmpty()) {
                continue;
            }
            if (line.charAt(0) == '#') {
                typeLine(line, sink);
                continue;
            }
            if (!wanted.test(name(line))) {
                continue;
            }
            try {
                Sample s = parseLine(line);
                sink.sample(s.name, s.labels, s.value);
            } catch (IllegalArgumentException e) {
                malformed++;
            }
        }
        return malformed;
    }

    private static void typeLine(String line, Sink sink) {
        String[] f = line.split("\\s+", 4);
        if (f.length >= 4 && f[0].equals("#") && f[1].equals("TYPE")) {
            sink.type(f[2], f[3].trim());
        }
    }

    /** The metric name at the start of a sample line (up to '{' or white space). */
    public static String name(String line) {
        int i = 0;
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '{' || c == ' ' || c == '\t') {
                break;
            }
            i++;
        }
        return line.substring(0, i);
    }

    /** Parses one sample line; throws IllegalArgumentException when it is not one. */
    public static Sample parseLine(String line) {
        String name = name(line);
        if (name.isEmpty()) {
            throw new IllegalArgumentException("no metric name: " + line);
        }
        int i = name.length();
        Map<String, String> labels = Collections.emptyMap();
        if (i < line.length() && line.charAt(i) == '{') {
            labels = new LinkedHashMap<>();
            i = labels(line, i + 1, labels);
        }
        String rest = line.substring(i).trim();
        if (rest.isEmpty()) {
            throw new IllegalArgumentException("no value: " + line);
        }
        int space = rest.indexOf(' ');
        String value = space < 0 ? rest : rest.substring(0, space); // an optional timestamp follows
        return new Sample(name, labels, number(value));
    }

    /** Reads {@code a="x",b="y"} from {@code from} up to and past the closing brace; returns the index after it. */
    private static int labels(String line, int from, Map<String, String> into) {
        int i = from;
        while (true) {
            i = skipSpaces(line, i);
            if (i >= line.length()) {
                throw new IllegalArgumentException("unterminated labels: " + line);
            }
            if (line.charAt(i) == '}') {
                return i + 1;
            }
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                throw new IllegalArgumentException("bad label at " + i + ": " + line);
            }
            String key = line.substring(i, eq).trim();
            StringBuilder value = new StringBuilder();
            i = quoted(line, eq + 2, value);
            into.put(key, value.toString());
            i = skipSpaces(line, i);
            if (i < line.length() && line.charAt(i) == ',') {
                i++;
            }
        }
    }

    /** Reads an escaped label value up to its closing quote; returns the index after the quote. */
    private static int quoted(String line, int from, StringBuilder value) {
        for (int i = from; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '"') {
                return i + 1;
            }
            if (c == '\\' && i + 1 < line.length()) {
                char e = line.charAt(++i);
                value.append(e == 'n' ? '\n' : e);
            } else {
                value.append(c);
            }
        }
        throw new IllegalArgumentException("unterminated label value: " + line);
    }

    private static int skipSpaces(String line, int i) {
        while (i < line.length() && line.charAt(i) == ' ') {
            i++;
        }
        return i;
    }

    /** A sample value: a Go float literal, including {@code +Inf}, {@code -Inf} and {@code NaN}. */
    public static double number(String s) {
        switch (s) {
            case "+Inf":
            case "Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            case "NaN":
                return Double.NaN;
            default:
                try {
                    return Double.parseDouble(s);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("not a number: " + s, e);
                }
        }
    }

    /**
     * The canonical key of a sample: {@code name{a="x",b="y"}} with the labels sorted by name and escaped, leaving
     * out the labels in {@code drop}; {@link #parseLine} reads it back (with a value appended).
     */
    public static String key(String name, Map<String, String> labels, java.util.Set<String> drop) {
        java.util.TreeMap<String, String> sorted = new java.util.TreeMap<>(labels);
        sorted.keySet().removeAll(drop);
        if (sorted.isEmpty()) {
            return name;
        }
        StringBuilder b = new StringBuilder(name).append('{');
        sorted.forEach((k, v) -> b.append(k).append("=\"").append(v.replace("\\", "\\\\").replace("\"", "\\\"")
                .replace("\n", "\\n")).append("\","));
        b.setCharAt(b.length() - 1, '}');
        return b.toString();
    }
}
