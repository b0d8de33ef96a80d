package io.github.pulsarbroadcast.broadcast.prometheus;

import io.github.pulsarbroadcast.broadcast.BroadcastService;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastDispatcher;
import io.github.pulsarbroadcast.broadcast.dispatch.BroadcastSubscription;
import io.github.pulsarbroadcast.executor.SubscriptionOrderedExecutor;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.pulsar.broker.PulsarService;
import org.apache.pulsar.broker.service.Topic;
import org.apache.pulsar.broker.stats.prometheus.PrometheusRawMetricsProvider;
import org.apache.pulsar.common.naming.TopicName;
import org.apache.pulsar.common.util.SimpleTextOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Adds the plugin's metrics to the broker's {@code /metrics}: the per-subscription families of
 * {@link SubscriptionFamilies} for every broadcast subscription open on this broker (left out, as stock leaves out its
 * topic-level series, when the broker's {@code exposeTopicLevelMetricsInPrometheus} is false: only their count is
 * written then), and the executor's per-thread queue depth, task count, task time and slow tasks. Registered once by
 * the interceptor with {@code PulsarService.addPrometheusRawMetricsProvider}.
 *
 * <p>Cost per scrape: one walk over the broker's topics (as the stock metrics make), and per broadcast subscription
 * one {@link io.github.pulsarbroadcast.broadcast.dispatch.SubscriptionSnapshot} (what the last periodic sync gathered
 * of its consumers, or a pass of its own when there is no recent one); nothing per consumer is written.
 *
 * <p>It also reports its own cost: how many scrapes it answered and the wall-clock and CPU time it spent on them
 * (the stock metrics on the same endpoint are not included), so an operator can see what 100,000 consumers cost a
 * scrape.
 *
 * <p>Threading: {@link #generate} runs on the broker's metrics thread, one scrape at a time; the cost counters are
 * single-writer (that thread) and volatile.
 */
public final class BroadcastMetricsProvider implements PrometheusRawMetricsProvider {

    private static final Logger log = LoggerFactory.getLogger(BroadcastMetricsProvider.class);

    private final PulsarService pulsar;
    private final BroadcastService service;
    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    /** Scrapes answered before this one and their total wall-clock and CPU nanoseconds; single writer. */
    private volatile long scrapes;
    private volatile long scrapeNanos;
    private volatile long scrapeCpuNanos;
    /** Subscriptions left out of a scrape because reading them failed ({@link #addSample}); single writer. */
    private volatile long sampleFailures;

    public BroadcastMetricsProvider(PulsarService pulsar, BroadcastService service) {
        this.pulsar = pulsar;
        this.service = service;
    }

    @Override
    public void generate(SimpleTextOutputStream stream) {
        long start = System.nanoTime();
        long cpuStart = threadCpuNanos();
        try {
            String cluster = MetricsText.label("cluster", pulsar.getConfiguration().getClusterName());
            MetricsText text = new MetricsText(stream);
            // As stock: with exposeTopicLevelMetricsInPrometheus=false no series names a topic (nor a subscription).
            boolean perTopic = pulsar.getConfiguration().isExposeTopicLevelMetricsInPrometheus();
            List<SubscriptionFamilies.Sample> samples = perTopic ? new ArrayList<>() : null;
            int[] open = new int[1];
            pulsar.getBrokerService().forEachTopic(topic -> collect(cluster, topic, samples, open));
            text.family("pulsar_broadcast_metrics_errors_total", "counter", "Broadcast subscriptions left out of a"
                    + " scrape because reading their metrics failed (the broker log has a WARN)");
            text.sample("pulsar_broadcast_metrics_errors_total", cluster, sampleFailures);
            text.family("pulsar_broadcast_subscriptions", "gauge", "Broadcast subscriptions open on this broker");
            text.sample("pulsar_broadcast_subscriptions", cluster, open[0]);
            if (perTopic) {
                SubscriptionFamilies.write(text, samples);
            }
            writeExecutor(text, cluster, service.executor());
            text.family("pulsar_broadcast_ack_read_pauses_total", "counter", "Times a connection stopped reading"
                    + " because broadcastMaxPendingAcksPerConnection of its acks waited for the executor");
            text.sample("pulsar_broadcast_ack_read_pauses_total", cluster, service.ackReadPauses().sum());
            writeOwnCost(text, cluster);
        } catch (RuntimeException e) {
            // A failure here must not break the broker's own metrics: log it and write nothing more.
            log.warn("Writing the pulsar-broadcast metrics failed: {}", e.toString(), e);
        } finally {
            scrapeNanos = scrapeNanos + (System.nanoTime() - start);
            scrapeCpuNanos = scrapeCpuNanos + Math.max(0, threadCpuNanos() - cpuStart);
            scrapes = scrapes + 1;
        }
    }

    private long threadCpuNanos() {
        return threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : 0;
    }

    /** The cost of the scrapes answered before this one (this one's is counted once it is written). */
    private void writeOwnCost(MetricsText text, String cluster) {
        text.family("pulsar_broadcast_metrics_scrapes_total", "counter",
                "Scrapes of the plugin's metrics answered before this one");
        text.sample("pulsar_broadcast_metrics_scrapes_total", cluster, scrapes);
        text.family("pulsar_broadcast_metrics_scrape_ms_total", "counter",
                "Wall-clock time those scrapes spent in the plugin's metrics (stock metrics not included)");
        text.sample("pulsar_broadcast_metrics_scrape_ms_total", cluster, scrapeNanos / 1e6);
        text.family("pulsar_broadcast_metrics_scrape_cpu_ms_total", "counter",
                "CPU time those scrapes spent in the plugin's metrics");
        text.sample("pulsar_broadcast_metrics_scrape_cpu_ms_total", cluster, scrapeCpuNanos / 1e6);
    }

    /** Counts the topic's open broadcast subscriptions into {@code open}, and adds a sample of each unless null. */
    private void collect(String cluster, Topic topic, List<SubscriptionFamilies.Sample> samples, int[] open) {
        String topicLabels = null;
        for (Object s : topic.getSubscriptions().values()) {
            if (!(s instanceof BroadcastSubscription)) {
                continue;
            }
            BroadcastSubscription sub = (BroadcastSubscription) s;
            BroadcastDispatcher dispatcher = sub.broadcastDispatcher();
            if (dispatcher == null || dispatcher.isClosed()) {
                continue;
            }
            open[0]++;
            if (samples == null) {
                continue;
            }
            if (topicLabels == null) {
                TopicName name = TopicName.get(topic.getName());
                topicLabels = cluster + "," + MetricsText.label("namespace", name.getNamespace()) + ","
                        + MetricsText.label("topic", topic.getName());
            }
            String labels = topicLabels + "," + MetricsText.label("subscription", sub.getName());
            addSample(samples, () -> new SubscriptionFamilies.Sample(labels, dispatcher.snapshot(),
                    dispatcher.receiveToPersisted().snapshot()), sub.getTopicName(), sub.getName());
        }
    }

    /**
     * Adds one subscription's sample. A failure leaves out that subscription alone, counted and logged (the first
     * time at WARN, then at DEBUG), not the rest of the scrape: before, it ended the plugin's whole output, and every
     * series of every subscription went stale with their pending alerts (a read-only review, forty-fourth session).
     */
    <T> void addSample(List<T> samples, Supplier<T> sample, String topic, String subscription) {
        try {
            samples.add(sample.get());
        } catch (RuntimeException e) {
            long failures = sampleFailures + 1;
            sampleFailures = failures;
            if (failures == 1) {
                log.warn("[{}][{}] Reading the subscription's metrics failed; it is left out of this scrape"
                        + " (pulsar_broadcast_metrics_errors_total counts such failures): {}", topic, subscription,
                        e.toString(), e);
            } else if (log.isDebugEnabled()) { // later ones at DEBUG, as operations.md says (a review, 46th session)
                log.debug("[{}][{}] Reading the subscription's metrics failed again: {}", topic, subscription,
                        e.toString(), e);
            }
        }
    }

    /** See {@link #sampleFailures}. */
    long sampleFailures() {
        return sampleFailures;
    }

    private static void writeExecutor(MetricsText text, String cluster, SubscriptionOrderedExecutor executor) {
        int n = executor.numThreads();
        String[] labels = new String[n];
        for (int i = 0; i < n; i++) {
            labels[i] = cluster + "," + MetricsText.label("thread", executor.threadName(i));
        }
        text.family("pulsar_broadcast_executor_queue_depth", "gauge",
                "Tasks waiting in the queue of each thread of the plugin's executor");
        for (int i = 0; i < n; i++) {
            text.sample("pulsar_broadcast_executor_queue_depth", labels[i], executor.queuedTasks(i));
        }
        text.family("pulsar_broadcast_executor_tasks_total", "counter", "Tasks run by each executor thread");
        for (int i = 0; i < n; i++) {
            text.sample("pulsar_broadcast_executor_tasks_total", labels[i], executor.completedTasks(i));
        }
        text.family("pulsar_broadcast_executor_task_ms_total", "counter",
                "Time each executor thread spent running tasks, in milliseconds");
        for (int i = 0; i < n; i++) {
            text.sample("pulsar_broadcast_executor_task_ms_total", labels[i],
                    executor.taskNanos(i) / (double) TimeUnit.MILLISECONDS.toNanos(1));
        }
        text.family("pulsar_broadcast_executor_slow_tasks_total", "counter",
                "Executor tasks that ran longer than broadcastExecutorSlowTaskMs");
        for (int i = 0; i < n; i++) {
            text.sample("pulsar_broadcast_executor_slow_tasks_total", labels[i], executor.slowTasks(i));
        }
    }
}
