package io.github.pulsarbroadcast.it;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import io.github.pulsarbroadcast.broadcast.client.Broadcast;
import io.github.pulsarbroadcast.broadcast.cnx.BroadcastServerCnx;
import io.netty.handler.ssl.util.SelfSignedCertificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.service.Consumer;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.api.Schema;
import org.testng.annotations.AfterClass;
import org.testng.annotations.Test;

/**
 * Broadcast consumers over TLS and over plain TCP, on one subscription: every one gets every message, in order,
 * intact. On TLS connections the plugin sends through the stock per-message path (Pulsar's pipeline copies what it
 * hands to the TLS handler); on plain connections it writes its own frames. Both paths serve one subscription here.
 *
 * <p>Threading: TestNG's test thread only.
 */
public class BroadcastTlsTest extends BroadcastTestBase {

    /** A throw-away key pair and self-signed certificate in temporary PEM files (made with BouncyCastle). */
    private SelfSignedCertificate certificate;
    private PulsarClient tlsClient;

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        try {
            certificate = new SelfSignedCertificate("localhost");
        } catch (java.security.cert.CertificateException e) {
            throw new IllegalStateException("could not make a test certificate", e);
        }
        conf.setBrokerServicePortTls(Optional.of(0));
        conf.setTlsCertificateFilePath(certificate.certificate().getAbsolutePath());
        conf.setTlsKeyFilePath(certificate.privateKey().getAbsolutePath());
    }

    private PulsarClient tlsClient() throws PulsarClientException {
        if (tlsClient == null) {
            int port = cluster.broker().getBrokerListenPortTls().orElseThrow();
            tlsClient = PulsarClient.builder().serviceUrl("pulsar+ssl://127.0.0.1:" + port)
                    .allowTlsInsecureConnection(true).enableTlsHostnameVerification(false).build();
        }
        return tlsClient;
    }

    @AfterClass(alwaysRun = true)
    public void closeTls() throws Exception {
        if (tlsClient != null) {
            tlsClient.close();
        }
        if (certificate != null) {
            certificate.delete();
        }
    }

    @Test(groups = "integration", timeOut = 120_000)
    public void consumersOverTlsAndPlainGetEverythingInOrder() throws Exception {
        String topic = newTopic("tls");
        List<org.apache.pulsar.client.api.Consumer<String>> consumers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                consumers.add(Broadcast.configure(tlsClient().newConsumer(Schema.STRING)).topic(topic)
                        .subscriptionName("fleet").consumerName("tls-" + i).subscribe());
            }
            consumers.add(broadcastConsumer(topic, "fleet", "plain-0"));
            try (Producer<String> producer = tlsClient().newProducer(Schema.STRING).topic(topic)
                    .enableBatching(false).create()) {
                List<String> sent = new ArrayList<>();
                for (int i = 0; i < 30; i++) {
                    // Sizes from a few bytes to beyond one TLS record (16 KiB), so records split messages.
                    String value = i + ":" + "x".repeat(i * 1_000);
                    producer.send(value);
                    sent.add(value);
                }
                assertEveryoneReceives(consumers, sent);
            }
            int tls = 0;
            int plain = 0;
            for (Consumer c : brokerSubscription(topic, "fleet").getConsumers()) {
                BroadcastServerCnx cnx = (BroadcastServerCnx) c.cnx();
                assertNotNull(cnx);
                if (c.consumerName().startsWith("tls-")) {
                    assertFalse(cnx.writesFramesDirectly(), "TLS connections use the stock send path");
                    tls++;
                } else {
                    assertTrue(cnx.writesFramesDirectly(), "plain connections write the plugin's own frames");
                    plain++;
                }
            }
            assertEquals(tls, 3);
            assertEquals(plain, 1);
        } finally {
            closeAll(consumers);
        }
    }
}
