package io.github.pulsarbroadcast.bench;

import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * A progress bar on standard error (stdout stays for the final table), or nothing with {@code --no-progress}.
 *
 * <p>Threading: used by the main thread only; the progress bar library redraws from a thread of its own.
 */
final class Progress implements AutoCloseable {

    private final ProgressBar bar;

    private Progress(ProgressBar bar) {
        this.bar = bar;
    }

    /**
     * A bar named {@code task} that goes to {@code max}, or a silent one when disabled: {@code enabled} null means
     * "when standard error is a terminal".
     */
    static Progress start(Boolean enabled, String task, long max) {
        boolean on = enabled != null ? enabled : System.console() != null;
        if (!on) {
            return new Progress(null);
        }
        return new Progress(new ProgressBarBuilder()
                .setTaskName(task)
                .setInitialMax(max)
                .setStyle(ProgressBarStyle.ASCII)
                .setUpdateIntervalMillis(500)
                .setMaxRenderedLength(120)
                .continuousUpdate()
                .build());
    }

    void stepTo(long n) {
        if (bar != null) {
            bar.stepTo(n);
        }
    }

    void extra(String message) {
        if (bar != null) {
            bar.setExtraMessage(message);
        }
    }

    @Override
    public void close() {
        if (bar != null) {
            bar.close();
        }
    }
}
