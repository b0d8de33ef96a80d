/**
 * The plugin's metrics on the broker's own {@code /metrics} endpoint, through the stock
 * {@code PrometheusRawMetricsProvider} extension point: per broadcast subscription (labels cluster, namespace,
 * topic, subscription; never a series per consumer) and per executor thread. It reads the {@code dispatch}
 * package's snapshots and the {@code metrics} package's instruments; only the {@code plugin} package depends on it.
 * The metric reference is docs/operations.md.
 */
package io.github.pulsarbroadcast.broadcast.prometheus;
