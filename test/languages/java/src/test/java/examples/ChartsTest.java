package examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.kruiseha.KruiseManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.cdk8s.App;
import org.cdk8s.Chart;
import org.cdk8s.Testing;
import org.cdk8s.Yaml;
import org.junit.jupiter.api.Test;

/**
 * A Java user's unit tests of kruise-ha charts: a snapshot test (the synthesized YAML against a file kept with the
 * tests; UPDATE_SNAPSHOTS=1 rewrites it) and a synth-time validation error.
 */
class ChartsTest {
  private static final Path SNAPSHOT = Path.of("src", "test", "resources", "__snapshots__", "log-shipper.yaml");

  @Test
  void logShipperMatchesSnapshot() throws IOException {
    Chart chart = new Chart(Testing.app(), "test");
    Charts.logShipper(chart);
    String manifest = Yaml.stringify(Testing.synth(chart).toArray());
    if ("1".equals(System.getenv("UPDATE_SNAPSHOTS"))) {
      Files.createDirectories(SNAPSHOT.getParent());
      Files.writeString(SNAPSHOT, manifest);
    }
    assertEquals(Files.readString(SNAPSHOT), manifest);
  }

  @Test
  void aBadPropFailsSynthNamingIt() {
    Chart chart = new Chart(new App(), "test");
    RuntimeException error = assertThrows(RuntimeException.class,
        () -> KruiseManager.Builder.create(chart, "Kruise").replicas(3).expectedNodes(2).build());
    assertTrue(error.getMessage().contains("expectedNodes:"), error.getMessage());
    assertTrue(error.getMessage().contains("Fix:"), error.getMessage());
  }
}
