// The kruise-ha examples (examples/*.ts) as a Go cdk8s app, written as a Go user would. Each chart has the
// TypeScript example's id, so synth writes the same file names.
package main

import (
	"os"

	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2"
	"github.com/cdk8s-team/cdk8s-plus-go/cdk8splus28/v2/k8s"
	"github.com/kruise-ha/kruise-ha-go/kruiseha"
)

func NewDefaultHaChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), nil)
	return chart
}

func NewCertManagerChart(scope constructs.Construct, id string, clusterIssuer string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	options := &kruiseha.CertManagerOptions{}
	if clusterIssuer != "" {
		options.Issuer = &kruiseha.IssuerRef{Name: jsii.String(clusterIssuer), Kind: jsii.String("ClusterIssuer")}
	}
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Certificates: kruiseha.WebhookCertificates_CertManager(options),
	})
	return chart
}

func NewOfflineRegistryChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Image: kruiseha.ManagerImage_Upstream(&kruiseha.UpstreamImageOptions{
			Registry: jsii.String("registry.internal.example:5000/openkruise"),
		}),
		ImagePullSecrets: jsii.Strings("regcred"),
	})
	return chart
}

func NewRuntimeImageChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	image := kruiseha.NewRuntimeImage(chart, jsii.String("Image"), &kruiseha.RuntimeImageProps{
		Repository: jsii.String("registry.example.com/platform/kruise-ha-manager"),
	})
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Image:    kruiseha.ManagerImage_FromRuntime(image),
		Replicas: jsii.Number(3),
	})
	return chart
}

// NewOwnOperatorChart is docs/sdk.md's chart: the TypeScript program in ./operator.ts (on kruise-ha-runtime) deployed
// by Operator.
func NewOwnOperatorChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	image := kruiseha.NewRuntimeImage(chart, jsii.String("Image"), &kruiseha.RuntimeImageProps{
		Repository: jsii.String("registry.example.com/team/team-operator"),
		Entrypoint: jsii.String("./operator.ts"),
	})
	kruiseha.NewOperator(chart, jsii.String("Operator"), &kruiseha.OperatorProps{
		Program: kruiseha.OperatorProgram_FromRuntimeImage(image),
	})
	return chart
}

func NewSidecarSetChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	manager := kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Image: kruiseha.ManagerImage_Runtime(jsii.String("registry.example.com/kruise-ha/manager:0.1.0")),
	})
	logShipper := NewLogShipper(chart)
	logShipper.Node().AddDependency(manager)
	return chart
}

// NewLogShipper is the log shipper SidecarSet of examples/sidecarset.ts.
func NewLogShipper(scope constructs.Construct) kruiseha.SidecarSet {
	return kruiseha.NewSidecarSet(scope, jsii.String("LogShipper"), &kruiseha.SidecarSetProps{
		Metadata:          &cdk8s.ApiObjectMetadata{Name: jsii.String("log-shipper")},
		Selector:          &k8s.LabelSelector{MatchLabels: &map[string]*string{"logging.example.com/ship": jsii.String("true")}},
		NamespaceSelector: &k8s.LabelSelector{MatchLabels: &map[string]*string{"logging.example.com/enabled": jsii.String("true")}},
		Containers: &[]*kruiseha.SidecarContainerProps{{
			Name:              jsii.String("log-shipper"),
			Image:             jsii.String("fluent/fluent-bit:3.1.9"),
			PodInjectPolicy:   kruiseha.PodInjectPolicy_AFTER_APP_CONTAINER,
			ShareVolumePolicy: kruiseha.ShareVolumePolicy_ENABLED,
			TransferEnv: &[]*kruiseha.TransferEnvVar{{
				SourceContainerName: jsii.String("app"),
				EnvNames:            jsii.Strings("APP_NAME", "APP_ENV"),
			}},
			Args: jsii.Strings("--config=/fluent-bit/etc/fluent-bit.yaml"),
			VolumeMounts: &[]*k8s.VolumeMount{{
				Name: jsii.String("log-shipper-config"), MountPath: jsii.String("/fluent-bit/etc"), ReadOnly: jsii.Bool(true),
			}},
			Resources: &k8s.ResourceRequirements{
				Requests: &map[string]k8s.Quantity{
					"cpu":    k8s.Quantity_FromString(jsii.String("20m")),
					"memory": k8s.Quantity_FromString(jsii.String("32Mi")),
				},
				Limits: &map[string]k8s.Quantity{"memory": k8s.Quantity_FromString(jsii.String("64Mi"))},
			},
			SecurityContext: &k8s.SecurityContext{
				ReadOnlyRootFilesystem:   jsii.Bool(true),
				AllowPrivilegeEscalation: jsii.Bool(false),
				RunAsNonRoot:             jsii.Bool(true),
			},
		}},
		Volumes: &[]*k8s.Volume{{
			Name:      jsii.String("log-shipper-config"),
			ConfigMap: &k8s.ConfigMapVolumeSource{Name: jsii.String("log-shipper")},
		}},
		UpdateStrategy: kruiseha.SidecarSetUpdateStrategy_RollingUpdate(&kruiseha.RollingUpdateOptions{
			MaxUnavailable: kruiseha.IntOrPercent_Percent(jsii.Number(10)),
			Partition:      kruiseha.IntOrPercent_Count(jsii.Number(2)),
		}),
	})
}

func NewSmallClusterChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Replicas:      jsii.Number(2),
		Rollout:       kruiseha.Rollout_Surge(jsii.Number(1)),
		ExpectedNodes: jsii.Number(3),
		Webhooks: &kruiseha.WebhookOptions{
			Pods: &kruiseha.WebhookGroupOptions{
				FailurePolicy: kruiseha.FailurePolicy_IGNORE,
				Timeout:       cdk8s.Duration_Seconds(jsii.Number(5)),
			},
		},
	})
	return chart
}

func NewSplitWebhookControllerChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Image: kruiseha.ManagerImage_Runtime(jsii.String("registry.example.com/kruise-ha/manager:0.1.0")),
		Topology: kruiseha.ManagerTopology_Split(&kruiseha.SplitTopologyOptions{
			WebhookReplicas:    jsii.Number(3),
			ControllerReplicas: jsii.Number(2),
		}),
	})
	return chart
}

func NewStrictZoneSpreadChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		ZoneSpread:    kruiseha.ZoneSpread_Required(&kruiseha.RequiredZoneSpreadOptions{Zones: jsii.Number(3)}),
		Replicas:      jsii.Number(3),
		ExpectedNodes: jsii.Number(6),
	})
	return chart
}

func NewUpstreamImageChart(scope constructs.Construct, id string) cdk8s.Chart {
	chart := cdk8s.NewChart(scope, jsii.String(id), nil)
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Image: kruiseha.ManagerImage_Upstream(&kruiseha.UpstreamImageOptions{Version: jsii.String("v1.9.1")}),
		Crds:  kruiseha.CrdSource_None(),
		CustomResourceAccess: kruiseha.CustomResourceAccess_Including(&[]*kruiseha.GroupResource{{
			ApiGroup: jsii.String("games.example.com"), Resource: jsii.String("gameservers"),
		}}),
		Monitoring:          &kruiseha.MonitoringOptions{ServiceMonitor: jsii.Bool(true)},
		HostNetwork:         jsii.Bool(false),
		NetworkPolicy:       jsii.Bool(true),
		ArgoCdSyncWaves:     jsii.Bool(true),
		UninstallProtection: kruiseha.UninstallProtection_ArgoCdPreDelete(),
	})
	return chart
}

type example struct {
	chartID string
	chart   func(scope constructs.Construct, id string) cdk8s.Chart
}

// Examples maps each example of examples/ to its chart id and constructor.
var Examples = map[string]example{
	"default-ha": {"kruise", NewDefaultHaChart},
	"cert-manager": {"kruise-cert-manager", func(scope constructs.Construct, id string) cdk8s.Chart {
		return NewCertManagerChart(scope, id, os.Getenv("KRUISE_CLUSTER_ISSUER"))
	}},
	"offline-registry": {"kruise-offline-registry", NewOfflineRegistryChart},
	"runtime-image":    {"kruise-runtime-image", NewRuntimeImageChart},
	// Not an examples/*.ts file: docs/sdk.md's chart, which go.test.ts runs beside the guide's program.
	"own-operator":             {"team-operator", NewOwnOperatorChart},
	"sidecarset":               {"kruise-sidecarset", NewSidecarSetChart},
	"small-cluster":            {"kruise-small-cluster", NewSmallClusterChart},
	"split-webhook-controller": {"kruise-split-webhook-controller", NewSplitWebhookControllerChart},
	"strict-zone-spread":       {"kruise-strict-zone-spread", NewStrictZoneSpreadChart},
	"upstream-image":           {"kruise-upstream-image", NewUpstreamImageChart},
}
