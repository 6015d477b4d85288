package examples;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.cdk8s.App;
import org.cdk8s.AppProps;
import org.cdk8s.Chart;
import software.constructs.Construct;

/**
 * Usage: java examples.Main EXAMPLE[,EXAMPLE...] [OUTDIR] — synthesizes each example into OUTDIR/EXAMPLE/ (OUTDIR
 * itself for one example; default dist), with the TypeScript example's chart id.
 */
public final class Main {
  private record Example(String chartId, BiFunction<Construct, String, Chart> chart) {}

  private static final Map<String, Example> EXAMPLES = Map.of(
      "default-ha", new Example("kruise", Charts.DefaultHa::new),
      "cert-manager", new Example("kruise-cert-manager",
          (scope, id) -> new Charts.CertManager(scope, id, System.getenv("KRUISE_CLUSTER_ISSUER"))),
      "offline-registry", new Example("kruise-offline-registry", Charts.OfflineRegistry::new),
      "runtime-image", new Example("kruise-runtime-image", Charts.RuntimeImageExample::new),
      // Not an examples/*.ts file: docs/sdk.md's chart, which java.test.ts runs beside the guide's program.
      "own-operator", new Example("team-operator", Charts.OwnOperatorExample::new),
      "sidecarset", new Example("kruise-sidecarset", Charts.SidecarSetExample::new),
      "small-cluster", new Example("kruise-small-cluster", Charts.SmallCluster::new),
      "split-webhook-controller", new Example("kruise-split-webhook-controller", Charts.SplitWebhookController::new),
      "strict-zone-spread", new Example("kruise-strict-zone-spread", Charts.StrictZoneSpread::new),
      "upstream-image", new Example("kruise-upstream-image", Charts.UpstreamImage::new));

  public static void main(String[] args) {
    List<String> names = List.of(args[0].split(","));
    String outdir = args.length > 1 ? args[1] : "dist";
    for (String name : names) {
      Example example = EXAMPLES.get(name);
      if (example == null) throw new IllegalArgumentException("no example " + name);
      String dir = names.size() > 1 ? Path.of(outdir, name).toString() : outdir;
      App app = new App(AppProps.builder().outdir(dir).build());
      example.chart().apply(app, example.chartId());
      app.synth();
    }
  }
}
