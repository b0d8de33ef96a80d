package io.github.pulsarbroadcast.bench;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Short, one-line descriptions of exceptions for the report (server-side errors arrive with whole stack traces in
 * their messages).
 *
 * <p>Threading: stateless; any thread.
 */
final class Errors {

    private static final int MAX = 300;

    private Errors() {
    }

    /** The innermost meaningful exception's class and the first line of its message, at most 300 characters. */
    static String brief(Throwable t) {
        Throwable e = t;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        String message = e.getMessage() == null ? "" : e.getMessage().strip();
        int newline = message.indexOf('\n');
        if (newline >= 0) {
            message = message.substring(0, newline).strip();
        }
        String text = e.getClass().getSimpleName() + (message.isEmpty() ? "" : ": " + message);
        return text.length() <= MAX ? text : text.substring(0, MAX - 3) + "...";
    }
}
