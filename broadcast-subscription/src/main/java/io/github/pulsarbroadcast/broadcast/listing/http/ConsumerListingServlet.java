package io.github.pulsarbroadcast.broadcast.listing.http;

import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.web.plugin.servlet.AdditionalServletWithPulsarService;
import org.apache.pulsar.common.configuration.PulsarConfiguration;
import org.eclipse.jetty.servlet.ServletHolder;

/**
 * The stock additional servlet that serves the consumer listing at {@value #BASE_PATH} on the broker's web port,
 * named {@code broadcast-consumers} in the NAR's {@code META-INF/services/additional_servlet.yml}. The broker adds
 * its authentication filter when authentication is enabled (as for its admin API) and hands it the
 * {@link PulsarService} before its web service starts.
 *
 * <p>Threading: the broker calls {@link #setPulsarService}, {@link #getServletHolder} and {@link #close} on its
 * start-up and shut-down threads; the broker is volatile for the web threads.
 */
public final class ConsumerListingServlet implements AdditionalServletWithPulsarService {

    /** Where the listing lives on the web port. */
    public static final String BASE_PATH = "/broadcast";

    private volatile PulsarService pulsar;

    @Override
    public void setPulsarService(PulsarService pulsarService) {
        this.pulsar = pulsarService;
    }

    @Override
    public void loadConfig(PulsarConfiguration pulsarConfiguration) {
        // Nothing to configure: authorization, timeouts and ownership follow the broker's own settings.
    }

    @Override
    public String getBasePath() {
        return BASE_PATH;
    }

    /**
     * The listing's servlet, initialized when its context starts (before the broker's connectors accept requests):
     * its initialization also puts the broker interceptors' web filters after stock's authentication
     * ({@link WebFilterOrder}).
     */
    @Override
    public ServletHolder getServletHolder() {
        ServletHolder holder = new ServletHolder(new ListingHttpServlet(() -> pulsar));
        holder.setInitOrder(0);
        return holder;
    }

    @Override
    public void close() {
        pulsar = null;
    }
}
