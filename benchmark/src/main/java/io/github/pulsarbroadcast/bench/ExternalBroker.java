package io.github.pulsarbroadcast.bench;

/**
 * An existing cluster, given by {@code --service-url} and {@code --admin-url} (and optionally {@code --broker-pid}
 * when the broker runs on this machine, for its CPU and memory figures).
 *
 * <p>Threading: immutable; any thread.
 */
final class ExternalBroker implements Broker {

    private final String serviceUrl;
    private final String adminUrl;
    private final Long pid;

    ExternalBroker(String serviceUrl, String adminUrl, Long pid) {
        this.serviceUrl = serviceUrl;
        this.adminUrl = adminUrl;
        this.pid = pid;
    }

    @Override
    public String serviceUrl() {
        return serviceUrl;
    }

    @Override
    public String adminUrl() {
        return adminUrl;
    }

    @Override
    public Long pid() {
        return pid;
    }

    @Override
    public boolean alive() {
        return pid == null || ProcStats.available(pid);
    }

    @Override
    public String deathReason() {
        return "broker process " + pid + " is gone";
    }

    @Override
    public String memoryTrouble() {
        return null;
    }

    @Override
    public void close() {
        // not ours to stop
    }
}
