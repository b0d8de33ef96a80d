package io.github.pulsarbroadcast.broadcast.listing.http;

/**
 * An answer other than 200: its HTTP status and the message written as {@code {"reason": ...}} (the form of the
 * stock admin API's errors), or a redirect ({@link #location}).
 *
 * <p>Threading: immutable; thrown and caught on one web thread.
 */
final class HttpError extends Exception {

    private static final long serialVersionUID = 1L;

    private final int status;
    private final String location;

    HttpError(int status, String message) {
        this(status, message, null);
    }

    private HttpError(int status, String message, String location) {
        super(message, null, false, false);
        this.status = status;
        this.location = location;
    }

    /** A 307 Temporary Redirect to {@code location}, as the stock admin API answers for a topic owned elsewhere. */
    static HttpError redirect(String location) {
        return new HttpError(307, "Topic owned by another broker: " + location, location);
    }

    int status() {
        return status;
    }

    /** Where a redirect points, or null. */
    String location() {
        return location;
    }
}
