package io.github.pulsarbroadcast.broadcast.listing.http;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.pulsar.broker.web.PreInterceptFilter;
import org.apache.pulsar.broker.web.ProcessHandlerFilter;
import org.apache.pulsar.broker.web.ResponseHandlerFilter;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.servlet.FilterHolder;
import org.eclipse.jetty.servlet.FilterMapping;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHandler;

/**
 * Puts the broker interceptors' web filters after stock's authentication and request-limit filters on every web
 * context of the broker.
 *
 * <p>Why: with any broker interceptor loaded (this plugin is one), stock 2.10.5's {@code WebService.addServlet} puts
 * {@code PreInterceptFilter} first on every context, and it reads each request's whole body into memory
 * ({@code RequestWrapper}) before {@code AuthenticationFilter} and {@code MaxRequestSizeFilter} run: an
 * unauthenticated client could make the broker buffer a body of any size, which a broker without interceptors
 * refuses unread (401, or 400 over {@code httpMaxRequestSize}). Loading the plugin must not make the broker weaker
 * than stock, so the listing servlet, which the broker starts with its web contexts (before their connectors accept
 * anything), moves {@code PreInterceptFilter} and {@code ProcessHandlerFilter} behind every other filter but
 * {@code ResponseHandlerFilter}. What changes for interceptors: they see only the requests stock's filters let
 * through (the plugin's own admin-call preparation authenticates by itself and needs nothing earlier).
 *
 * <p>Threading: {@link #apply} runs once, on the thread that starts the web server, before it serves requests.
 */
final class WebFilterOrder {

    private static final String PRE_INTERCEPT = PreInterceptFilter.class.getName();
    private static final String PROCESS_HANDLER = ProcessHandlerFilter.class.getName();
    private static final String RESPONSE_HANDLER = ResponseHandlerFilter.class.getName();

    private WebFilterOrder() {
    }

    /** Reorders every servlet context of {@code server}; returns how many it changed. */
    static int apply(Server server) {
        int changed = 0;
        for (Handler h : server.getChildHandlersByClass(ServletContextHandler.class)) {
            if (reorder(((ServletContextHandler) h).getServletHandler())) {
                changed++;
            }
        }
        return changed;
    }

    /**
     * The interceptors' request filters after every other filter and before {@code ResponseHandlerFilter}, each
     * group in its order; true when that changed anything.
     */
    static boolean reorder(ServletHandler handler) {
        FilterMapping[] mappings = handler.getFilterMappings();
        if (mappings == null) {
            return false;
        }
        List<FilterMapping> others = new ArrayList<>();
        List<FilterMapping> intercepting = new ArrayList<>();
        List<FilterMapping> last = new ArrayList<>();
        for (FilterMapping m : mappings) {
            String filter = className(handler, m);
            if (PRE_INTERCEPT.equals(filter) || PROCESS_HANDLER.equals(filter)) {
                intercepting.add(m);
            } else if (RESPONSE_HANDLER.equals(filter)) {
                last.add(m);
            } else {
                others.add(m);
            }
        }
        others.addAll(intercepting);
        others.addAll(last);
        FilterMapping[] ordered = others.toArray(new FilterMapping[0]);
        if (Arrays.equals(ordered, mappings)) {
            return false;
        }
        handler.setFilterMappings(ordered);
        return true;
    }

    private static String className(ServletHandler handler, FilterMapping mapping) {
        FilterHolder holder = handler.getFilter(mapping.getFilterName());
        return holder == null ? null : holder.getClassName();
    }
}
