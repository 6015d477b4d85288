"""The kruise-ha examples (examples/*.ts) as a Python cdk8s app, written as a Python user would.

Usage: python app.py EXAMPLE[,EXAMPLE...] [OUTDIR]   (default-ha, cert-manager, ...; OUTDIR defaults to dist;
several examples go to OUTDIR/<example>/)
Each chart has the TypeScript example's id, so `cdk8s synth` writes the same file names.
"""

import os
import sys

from cdk8s import App, Chart, Duration
from cdk8s_plus_28 import k8s
from constructs import Construct

from kruise_ha import (
    CrdSource,
    CustomResourceAccess,
    FailurePolicy,
    GroupResource,
    IntOrPercent,
    IssuerRef,
    KruiseManager,
    ManagerImage,
    ManagerTopology,
    MonitoringOptions,
    Operator,
    OperatorProgram,
    PodInjectPolicy,
    Rollout,
    RuntimeImage,
    ShareVolumePolicy,
    SidecarContainerProps,
    SidecarSet,
    SidecarSetUpdateStrategy,
    TransferEnvVar,
    UninstallProtection,
    WebhookCertificates,
    WebhookGroupOptions,
    WebhookOptions,
    ZoneSpread,
)


class DefaultHaChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.manager = KruiseManager(self, "Kruise")


class CertManagerChart(Chart):
    def __init__(self, scope: Construct, id: str, cluster_issuer: str | None = None) -> None:
        super().__init__(scope, id)
        issuer = IssuerRef(name=cluster_issuer, kind="ClusterIssuer") if cluster_issuer else None
        self.manager = KruiseManager(self, "Kruise", certificates=WebhookCertificates.cert_manager(issuer=issuer))


class OfflineRegistryChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.manager = KruiseManager(
            self,
            "Kruise",
            image=ManagerImage.upstream(registry="registry.internal.example:5000/openkruise"),
            image_pull_secrets=["regcred"],
        )


class RuntimeImageChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.image = RuntimeImage(self, "Image", repository="registry.example.com/platform/kruise-ha-manager")
        self.manager = KruiseManager(self, "Kruise", image=ManagerImage.from_runtime(self.image), replicas=3)


class OwnOperatorChart(Chart):
    """docs/sdk.md's chart: the program in ./operator.ts (TypeScript, on kruise-ha-runtime) deployed by Operator."""

    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        image = RuntimeImage(
            self, "Image", repository="registry.example.com/team/team-operator", entrypoint="./operator.ts"
        )
        self.operator = Operator(self, "Operator", program=OperatorProgram.from_runtime_image(image))


class SidecarSetChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.manager = KruiseManager(
            self, "Kruise", image=ManagerImage.runtime("registry.example.com/kruise-ha/manager:0.1.0")
        )
        self.log_shipper = log_shipper(self)
        self.log_shipper.node.add_dependency(self.manager)


def log_shipper(scope: Construct) -> SidecarSet:
    """The log shipper SidecarSet of examples/sidecarset.ts."""
    return SidecarSet(
        scope,
        "LogShipper",
        metadata={"name": "log-shipper"},
        selector=k8s.LabelSelector(match_labels={"logging.example.com/ship": "true"}),
        namespace_selector=k8s.LabelSelector(match_labels={"logging.example.com/enabled": "true"}),
        containers=[
            SidecarContainerProps(
                name="log-shipper",
                image="fluent/fluent-bit:3.1.9",
                pod_inject_policy=PodInjectPolicy.AFTER_APP_CONTAINER,
                share_volume_policy=ShareVolumePolicy.ENABLED,
                transfer_env=[TransferEnvVar(source_container_name="app", env_names=["APP_NAME", "APP_ENV"])],
                args=["--config=/fluent-bit/etc/fluent-bit.yaml"],
                volume_mounts=[k8s.VolumeMount(name="log-shipper-config", mount_path="/fluent-bit/etc", read_only=True)],
                resources=k8s.ResourceRequirements(
                    requests={"cpu": k8s.Quantity.from_string("20m"), "memory": k8s.Quantity.from_string("32Mi")},
                    limits={"memory": k8s.Quantity.from_string("64Mi")},
                ),
                security_context=k8s.SecurityContext(
                    read_only_root_filesystem=True, allow_privilege_escalation=False, run_as_non_root=True
                ),
            )
        ],
        volumes=[k8s.Volume(name="log-shipper-config", config_map=k8s.ConfigMapVolumeSource(name="log-shipper"))],
        update_strategy=SidecarSetUpdateStrategy.rolling_update(
            max_unavailable=IntOrPercent.percent(10), partition=IntOrPercent.count(2)
        ),
    )


class SmallClusterChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.manager = KruiseManager(
            self,
            "Kruise",
            replicas=2,
            rollout=Rollout.surge(1),
            expected_nodes=3,
            webhooks=WebhookOptions(
                pods=WebhookGroupOptions(failure_policy=FailurePolicy.IGNORE, timeout=Duration.seconds(5))
            ),
        )


class SplitWebhookControllerChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.manager = KruiseManager(
            self,
            "Kruise",
            image=ManagerImage.runtime("registry.example.com/kruise-ha/manager:0.1.0"),
            topology=ManagerTopology.split(webhook_replicas=3, controller_replicas=2),
        )


class StrictZoneSpreadChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.manager = KruiseManager(
            self, "Kruise", zone_spread=ZoneSpread.required(zones=3), replicas=3, expected_nodes=6
        )


class UpstreamImageChart(Chart):
    def __init__(self, scope: Construct, id: str) -> None:
        super().__init__(scope, id)
        self.manager = KruiseManager(
            self,
            "Kruise",
            image=ManagerImage.upstream(version="v1.9.1"),
            crds=CrdSource.none(),
            custom_resource_access=CustomResourceAccess.including(
                [GroupResource(api_group="games.example.com", resource="gameservers")]
            ),
            monitoring=MonitoringOptions(service_monitor=True),
            host_network=False,
            network_policy=True,
            argo_cd_sync_waves=True,
            uninstall_protection=UninstallProtection.argo_cd_pre_delete(),
        )


# Example name -> (chart id, chart factory), as in examples/*.ts.
EXAMPLES = {
    "default-ha": ("kruise", DefaultHaChart),
    "cert-manager": (
        "kruise-cert-manager",
        lambda app, id: CertManagerChart(app, id, cluster_issuer=os.environ.get("KRUISE_CLUSTER_ISSUER")),
    ),
    "offline-registry": ("kruise-offline-registry", OfflineRegistryChart),
    "runtime-image": ("kruise-runtime-image", RuntimeImageChart),
    # Not an examples/*.ts file: docs/sdk.md's chart, which python.test.ts runs beside the guide's program.
    "own-operator": ("team-operator", OwnOperatorChart),
    "sidecarset": ("kruise-sidecarset", SidecarSetChart),
    "small-cluster": ("kruise-small-cluster", SmallClusterChart),
    "split-webhook-controller": ("kruise-split-webhook-controller", SplitWebhookControllerChart),
    "strict-zone-spread": ("kruise-strict-zone-spread", StrictZoneSpreadChart),
    "upstream-image": ("kruise-upstream-image", UpstreamImageChart),
}


def main(argv: list[str]) -> None:
    """Synthesizes each example (comma-separated) into OUTDIR/<example>/, one App each, as `cdk8s synth` would."""
    names = argv[1].split(",")
    outdir = argv[2] if len(argv) > 2 else "dist"
    for name in names:
        app = App(outdir=os.path.join(outdir, name) if len(names) > 1 else outdir)
        chart_id, chart = EXAMPLES[name]
        chart(app, chart_id)
        app.synth()


if __name__ == "__main__":
    main(sys.argv)
