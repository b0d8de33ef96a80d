package io.github.pulsarbroadcast.standalone.consumers;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * The listing as a human-readable table: a summary line, then one line per consumer, most useful columns first.
 *
 * <p>Threading: stateless; any thread.
 */
final class ConsumerTable {

    private static final String[] HEADERS = {"NAME", "STATE", "LAG", "ACKNOWLEDGED", "SENT", "PERMITS", "LAST ACK",
        "LAST SENT", "ADDRESS", "CONNECTED SINCE"};

    private ConsumerTable() {
    }

    /** Renders {@code page} (the listing's JSON) with times relative to {@code nowMillis}. */
    static String render(JsonNode page, long nowMillis) {
        StringBuilder out = new StringBuilder();
        JsonNode consumers = page.path("consumers");
        int offset = page.path("offset").asInt();
        out.append(page.path("topic").asText()).append(" subscription '").append(page.path("subscription").asText())
                .append("': ").append(page.path("total").asInt()).append(" consumers in ")
                .append(states(page)).append(" of ").append(page.path("connected").asInt()).append(" connected, ")
                .append(page.path("retained").asInt()).append(" disconnected with a retained position\n");
        out.append("sorted by ").append(page.path("sort").asText()).append(' ').append(page.path("order").asText())
                .append("; showing ").append(consumers.size() == 0 ? "none" : (offset + 1) + "-"
                        + (offset + consumers.size())).append('\n');
        if (page.has("note")) {
            out.append(page.get("note").asText()).append('\n');
        }
        if (consumers.size() == 0) {
            return out.toString();
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADERS);
        for (JsonNode c : consumers) {
            rows.add(new String[] {c.path("name").asText(), c.path("state").asText(), c.path("lag").asText(),
                c.path("acknowledged").asText(), c.path("sent").asText(), c.path("permits").asText(),
                ago(c.path("lastAckedTimestamp").asLong(), nowMillis),
                ago(c.path("lastSentTimestamp").asLong(), nowMillis), c.path("address").asText(""),
                c.path("connectedSince").asText("")});
        }
        int[] widths = new int[HEADERS.length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                widths[i] = Math.max(widths[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                boolean number = i == 2 || i == 5;
                String cell = number && r != HEADERS ? " ".repeat(widths[i] - r[i].length()) + r[i]
                        : r[i] + " ".repeat(widths[i] - r[i].length());
                line.append(cell).append(i < r.length - 1 ? "  " : "");
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    private static String states(JsonNode page) {
        List<String> states = new ArrayList<>();
        page.path("state").forEach(s -> states.add(s.asText()));
        return states.size() >= 5 ? "any state" : "state " + String.join(",", states);
    }

    /** {@code never}, or how long ago: {@code 4s ago}, {@code 3m12s ago}, {@code 2h05m ago}, {@code 3d04h ago}. */
    static String ago(long millis, long nowMillis) {
        if (millis <= 0) {
            return "never";
        }
        long s = Math.max(0, (nowMillis - millis) / 1000);
        if (s < 60) {
            return s + "s ago";
        }
        if (s < 3600) {
            return String.format("%dm%02ds ago", s / 60, s % 60);
        }
        if (s < 86_400) {
            return String.format("%dh%02dm ago", s / 3600, s % 3600 / 60);
        }
        return String.format("%dd%02dh ago", s / 86_400, s % 86_400 / 3600);
    }
}
