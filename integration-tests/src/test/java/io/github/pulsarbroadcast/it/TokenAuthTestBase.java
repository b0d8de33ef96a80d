package io.github.pulsarbroadcast.it;

import io.jsonwebtoken.SignatureAlgorithm;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;
import javax.crypto.SecretKey;
import org.apache.pulsar.broker.ServiceConfiguration;
import org.apache.pulsar.broker.authentication.AuthenticationProviderToken;
import org.apache.pulsar.broker.authentication.utils.AuthTokenUtils;
import org.apache.pulsar.client.api.AuthenticationFactory;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.api.PulsarClientException;
import org.apache.pulsar.client.impl.auth.AuthenticationToken;

/**
 * A broker with token authentication and authorization on, as an operator would secure it: one secret key, the
 * super-user {@value #ADMIN} (also the broker's own client role), and {@link #token} for any role. The inherited
 * client is the super-user's.
 *
 * <p>Threading: TestNG's test thread only; the key is created once per test class.
 */
public abstract class TokenAuthTestBase extends BroadcastTestBase {

    protected static final String ADMIN = "admin";

    private final SecretKey secret = AuthTokenUtils.createSecretKey(SignatureAlgorithm.HS256);

    @Override
    protected void configureBroker(ServiceConfiguration conf) {
        conf.setAuthenticationEnabled(true);
        conf.setAuthenticationProviders(Set.of(AuthenticationProviderToken.class.getName()));
        conf.getProperties().setProperty("tokenSecretKey",
                "data:;base64," + Base64.getEncoder().encodeToString(secret.getEncoded()));
        conf.setAuthorizationEnabled(true);
        conf.setSuperUserRoles(Set.of(ADMIN));
        conf.setBrokerClientAuthenticationPlugin(AuthenticationToken.class.getName());
        conf.setBrokerClientAuthenticationParameters("token:" + token(ADMIN));
    }

    @Override
    protected PulsarClient newClient() throws PulsarClientException {
        return PulsarClient.builder().serviceUrl(cluster.serviceUrl())
                .authentication(AuthenticationFactory.token(token(ADMIN))).build();
    }

    /** A token for {@code role}, signed with the broker's key. */
    protected String token(String role) {
        return AuthTokenUtils.createToken(secret, role, Optional.empty());
    }
}
