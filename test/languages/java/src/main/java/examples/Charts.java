package examples;

import io.github.kruiseha.CertManagerOptions;
import io.github.kruiseha.CrdSource;
import io.github.kruiseha.CustomResourceAccess;
import io.github.kruiseha.FailurePolicy;
import io.github.kruiseha.GroupResource;
import io.github.kruiseha.IntOrPercent;
import io.github.kruiseha.IssuerRef;
import io.github.kruiseha.KruiseManager;
import io.github.kruiseha.ManagerImage;
import io.github.kruiseha.ManagerTopology;
import io.github.kruiseha.MonitoringOptions;
import io.github.kruiseha.Operator;
import io.github.kruiseha.OperatorProgram;
import io.github.kruiseha.PodInjectPolicy;
import io.github.kruiseha.RequiredZoneSpreadOptions;
import io.github.kruiseha.RollingUpdateOptions;
import io.github.kruiseha.Rollout;
import io.github.kruiseha.RuntimeImage;
import io.github.kruiseha.ShareVolumePolicy;
import io.github.kruiseha.SidecarContainerProps;
import io.github.kruiseha.SidecarSet;
import io.github.kruiseha.SidecarSetUpdateStrategy;
import io.github.kruiseha.SplitTopologyOptions;
import io.github.kruiseha.TransferEnvVar;
import io.github.kruiseha.UninstallProtection;
import io.github.kruiseha.UpstreamImageOptions;
import io.github.kruiseha.WebhookCertificates;
import io.github.kruiseha.WebhookGroupOptions;
import io.github.kruiseha.WebhookOptions;
import io.github.kruiseha.ZoneSpread;
import java.util.List;
import java.util.Map;
import org.cdk8s.ApiObjectMetadata;
import org.cdk8s.Chart;
import org.cdk8s.Duration;
import org.cdk8s.plus28.k8s.ConfigMapVolumeSource;
import org.cdk8s.plus28.k8s.LabelSelector;
import org.cdk8s.plus28.k8s.Quantity;
import org.cdk8s.plus28.k8s.ResourceRequirements;
import org.cdk8s.plus28.k8s.SecurityContext;
import org.cdk8s.plus28.k8s.Volume;
import org.cdk8s.plus28.k8s.VolumeMount;
import software.constructs.Construct;

/** The kruise-ha examples (examples/*.ts) as Java cdk8s charts, written as a Java user would (builders). */
public final class Charts {
  private Charts() {}

  public static final class DefaultHa extends Chart {
    public DefaultHa(Construct scope, String id) {
      super(scope, id);
      new KruiseManager(this, "Kruise");
    }
  }

  public static final class CertManager extends Chart {
    public CertManager(Construct scope, String id, String clusterIssuer) {
      super(scope, id);
      CertManagerOptions.Builder options = CertManagerOptions.builder();
      if (clusterIssuer != null && !clusterIssuer.isEmpty()) {
        options.issuer(IssuerRef.builder().name(clusterIssuer).kind("ClusterIssuer").build());
      }
      KruiseManager.Builder.create(this, "Kruise")
          .certificates(WebhookCertificates.certManager(options.build()))
          .build();
    }
  }

  public static final class OfflineRegistry extends Chart {
    public OfflineRegistry(Construct scope, String id) {
      super(scope, id);
      KruiseManager.Builder.create(this, "Kruise")
          .image(ManagerImage.upstream(
              UpstreamImageOptions.builder().registry("registry.internal.example:5000/openkruise").build()))
          .imagePullSecrets(List.of("regcred"))
          .build();
    }
  }

  public static final class RuntimeImageExample extends Chart {
    public RuntimeImageExample(Construct scope, String id) {
      super(scope, id);
      RuntimeImage image = RuntimeImage.Builder.create(this, "Image")
          .repository("registry.example.com/platform/kruise-ha-manager")
          .build();
      KruiseManager.Builder.create(this, "Kruise").image(ManagerImage.fromRuntime(image)).replicas(3).build();
    }
  }

  /** docs/sdk.md's chart: the TypeScript program in ./operator.ts (on kruise-ha-runtime) deployed by Operator. */
  public static final class OwnOperatorExample extends Chart {
    public OwnOperatorExample(Construct scope, String id) {
      super(scope, id);
      RuntimeImage image = RuntimeImage.Builder.create(this, "Image")
          .repository("registry.example.com/team/team-operator")
          .entrypoint("./operator.ts")
          .build();
      Operator.Builder.create(this, "Operator").program(OperatorProgram.fromRuntimeImage(image)).build();
    }
  }

  public static final class SidecarSetExample extends Chart {
    public SidecarSetExample(Construct scope, String id) {
      super(scope, id);
      KruiseManager manager = KruiseManager.Builder.create(this, "Kruise")
          .image(ManagerImage.runtime("registry.example.com/kruise-ha/manager:0.1.0"))
          .build();
      SidecarSet logShipper = logShipper(this);
      logShipper.getNode().addDependency(manager);
    }
  }

  /** The log shipper SidecarSet of examples/sidecarset.ts. */
  public static SidecarSet logShipper(Construct scope) {
    return SidecarSet.Builder.create(scope, "LogShipper")
        .metadata(ApiObjectMetadata.builder().name("log-shipper").build())
        .selector(LabelSelector.builder().matchLabels(Map.of("logging.example.com/ship", "true")).build())
        .namespaceSelector(LabelSelector.builder().matchLabels(Map.of("logging.example.com/enabled", "true")).build())
        .containers(List.of(SidecarContainerProps.builder()
            .name("log-shipper")
            .image("fluent/fluent-bit:3.1.9")
            .podInjectPolicy(PodInjectPolicy.AFTER_APP_CONTAINER)
            .shareVolumePolicy(ShareVolumePolicy.ENABLED)
            .transferEnv(List.of(
                TransferEnvVar.builder().sourceContainerName("app").envNames(List.of("APP_NAME", "APP_ENV")).build()))
            .args(List.of("--config=/fluent-bit/etc/fluent-bit.yaml"))
            .volumeMounts(List.of(
                VolumeMount.builder().name("log-shipper-config").mountPath("/fluent-bit/etc").readOnly(true).build()))
            .resources(ResourceRequirements.builder()
                .requests(Map.of("cpu", Quantity.fromString("20m"), "memory", Quantity.fromString("32Mi")))
                .limits(Map.of("memory", Quantity.fromString("64Mi")))
                .build())
            .securityContext(SecurityContext.builder()
                .readOnlyRootFilesystem(true)
                .allowPrivilegeEscalation(false)
                .runAsNonRoot(true)
                .build())
            .build()))
        .volumes(List.of(Volume.builder()
            .name("log-shipper-config")
            .configMap(ConfigMapVolumeSource.builder().name("log-shipper").build())
            .build()))
        .updateStrategy(SidecarSetUpdateStrategy.rollingUpdate(RollingUpdateOptions.builder()
            .maxUnavailable(IntOrPercent.percent(10))
            .partition(IntOrPercent.count(2))
            .build()))
        .build();
  }

  public static final class SmallCluster extends Chart {
    public SmallCluster(Construct scope, String id) {
      super(scope, id);
      KruiseManager.Builder.create(this, "Kruise")
          .replicas(2)
          .rollout(Rollout.surge(1))
          .expectedNodes(3)
          .webhooks(WebhookOptions.builder()
              .pods(WebhookGroupOptions.builder()
                  .failurePolicy(FailurePolicy.IGNORE)
                  .timeout(Duration.seconds(5))
                  .build())
              .build())
          .build();
    }
  }

  public static final class SplitWebhookController extends Chart {
    public SplitWebhookController(Construct scope, String id) {
      super(scope, id);
      KruiseManager.Builder.create(this, "Kruise")
          .image(ManagerImage.runtime("registry.example.com/kruise-ha/manager:0.1.0"))
          .topology(ManagerTopology.split(
              SplitTopologyOptions.builder().webhookReplicas(3).controllerReplicas(2).build()))
          .build();
    }
  }

  public static final class StrictZoneSpread extends Chart {
    public StrictZoneSpread(Construct scope, String id) {
      super(scope, id);
      KruiseManager.Builder.create(this, "Kruise")
          .zoneSpread(ZoneSpread.required(RequiredZoneSpreadOptions.builder().zones(3).build()))
          .replicas(3)
          .expectedNodes(6)
          .build();
    }
  }

  public static final class UpstreamImage extends Chart {
    public UpstreamImage(Construct scope, String id) {
      super(scope, id);
      KruiseManager.Builder.create(this, "Kruise")
          .image(ManagerImage.upstream(UpstreamImageOptions.builder().version("v1.9.1").build()))
          .crds(CrdSource.none())
          .customResourceAccess(CustomResourceAccess.including(
              List.of(GroupResource.builder().apiGroup("games.example.com").resource("gameservers").build())))
          .monitoring(MonitoringOptions.builder().serviceMonitor(true).build())
          .hostNetwork(false)
          .networkPolicy(true)
          .argoCdSyncWaves(true)
          .uninstallProtection(UninstallProtection.argoCdPreDelete())
          .build();
    }
  }
}
