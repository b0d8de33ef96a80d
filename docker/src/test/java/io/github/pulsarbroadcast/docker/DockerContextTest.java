package io.github.pulsarbroadcast.docker;

import static org.testng.Assert.assertEquals;
import static org.testng.Assert.assertFalse;
import static org.testng.Assert.assertNotNull;
import static org.testng.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.testng.annotations.Test;

/**
 * target/docker-context: a Docker build context that holds everything its Dockerfile copies, FROM the Pulsar image of
 * the release we build against, tagged from the POM version. No Docker engine is needed (nor used).
 */
@Test(groups = "unit")
public class DockerContextTest {

    private static final Pattern PLACEHOLDER = Pattern.compile("@[A-Za-z.]+@");

    public void holdsExactlyThePluginAndTheBuildFiles() throws IOException {
        String v = Build.version();
        Set<String> expected = new TreeSet<>(List.of("Dockerfile", "IMAGE", "build.sh", "bin/install-plugin.sh",
                "conf/broadcast.conf", "interceptors/broadcast-subscription.nar",
                "lib/io.github.pulsarbroadcast-broadcast-subscription-" + v + ".jar",
                "lib/io.github.pulsarbroadcast-ordered-executor-patch-" + v + ".jar"));
        assertEquals(files(Build.dockerContext()), expected);
    }

    public void dockerfileStartsFromThePulsarImageAndCopiesOnlyFromTheContext() {
        String dockerfile = Build.read(Build.dockerContext().resolve("Dockerfile"));
        assertFalse(PLACEHOLDER.matcher(dockerfile).find(), dockerfile);
        assertTrue(dockerfile.contains("ARG PULSAR_IMAGE=apachepulsar/pulsar:" + Build.pulsarVersion() + "\n"),
                dockerfile);
        assertTrue(dockerfile.contains("\nFROM ${PULSAR_IMAGE}\n"), dockerfile);
        assertTrue(dockerfile.contains("install-plugin.sh --conf conf/broker.conf --conf conf/standalone.conf /pulsar"),
                dockerfile);
        assertTrue(dockerfile.trim().endsWith("USER 10000"), "the image must run as the stock uid again");

        Matcher copy = Pattern.compile("(?m)^(?:COPY|ADD)\\s+(?:--\\S+\\s+)*(\\S+)\\s+\\S+\\s*$").matcher(dockerfile);
        int copies = 0;
        while (copy.find()) {
            String source = copy.group(1);
            assertFalse(source.startsWith("/") || source.contains(".."), "outside the context: " + source);
            assertTrue(Files.exists(Build.dockerContext().resolve(source)), "not in the context: " + source);
            copies++;
        }
        assertEquals(copies, 4, dockerfile);
    }

    public void imageNameAndBuildScriptComeFromThePom() {
        Path context = Build.dockerContext();
        assertEquals(Build.read(context.resolve("IMAGE")).trim(), "pulsar-broadcast:" + Build.version());
        assertEquals(Build.image(), "pulsar-broadcast:" + Build.version());
        String build = Build.read(context.resolve("build.sh"));
        assertFalse(PLACEHOLDER.matcher(build).find(), build);
        assertTrue(build.contains("exec docker build -t \"$image\" \"$@\" ."), build);
        assertTrue(Files.isExecutable(context.resolve("build.sh")));
        assertTrue(Files.isExecutable(context.resolve("bin/install-plugin.sh")));
    }

    public void narIsTheBrokerInterceptorWithItsJars() throws IOException {
        try (ZipFile nar = new ZipFile(Build.dockerContext().resolve("interceptors/broadcast-subscription.nar")
                .toFile())) {
            ZipEntry yml = nar.getEntry("META-INF/services/broker_interceptor.yml");
            assertNotNull(yml);
            try (InputStream in = nar.getInputStream(yml)) {
                String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                assertTrue(text.contains("name: broadcast-subscription"), text);
            }
            List<String> bundled = new ArrayList<>();
            nar.stream().map(ZipEntry::getName).filter(n -> n.startsWith("META-INF/bundled-dependencies/"))
                    .forEach(bundled::add);
            assertTrue(bundled.stream().anyMatch(n -> n.contains("broadcast-subscription")), bundled.toString());
            assertTrue(bundled.stream().anyMatch(n -> n.contains("ordered-executor-patch")), bundled.toString());
            // configuration.md: the plugin's own two jars and nothing of Pulsar's (the broker provides it).
            assertEquals(bundled.stream().filter(n -> n.endsWith(".jar")).count(), 2L, bundled.toString());
            assertNotNull(nar.getEntry("META-INF/services/additional_servlet.yml"), "the listing's servlet role");
        }
        try (Stream<Path> jars = Files.list(Build.dockerContext().resolve("lib"))) {
            for (Path jar : jars.collect(Collectors.toList())) {
                try (ZipFile zip = new ZipFile(jar.toFile())) {
                    assertNotNull(zip.getEntry("META-INF/MANIFEST.MF"), jar.toString());
                }
            }
        }
    }

    public void distributionHasTheSameFilesAndTheGuide() throws IOException {
        Set<String> dist = files(Build.dist());
        Set<String> context = files(Build.dockerContext());
        context.removeAll(Set.of("Dockerfile", "IMAGE", "build.sh"));
        for (String guide : List.of("install", "configuration", "operations", "usage", "design")) {
            assertTrue(dist.remove("docs/" + guide + ".md"), "docs/" + guide + ".md in the distribution");
        }
        assertEquals(dist, context);
        for (String f : context) {
            assertEquals(Files.readAllBytes(Build.dist().resolve(f)), Files.readAllBytes(Build.dockerContext()
                    .resolve(f)), f);
        }
    }

    private static Set<String> files(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            return paths.filter(Files::isRegularFile).map(p -> root.relativize(p).toString().replace('\\', '/'))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }
}
