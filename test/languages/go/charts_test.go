// A Go user's unit tests of kruise-ha charts: a snapshot test (the synthesized YAML against a file kept with the
// tests; UPDATE_SNAPSHOTS=1 rewrites it) and a synth-time validation error.
package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
	"github.com/cdk8s-team/cdk8s-core-go/cdk8s/v2"
	"github.com/kruise-ha/kruise-ha-go/kruiseha"
	"sigs.k8s.io/yaml"
)

const snapshot = "testdata/log-shipper.yaml"

func TestLogShipperMatchesSnapshot(t *testing.T) {
	chart := cdk8s.NewChart(cdk8s.Testing_App(nil), jsii.String("test"), nil)
	NewLogShipper(chart)
	var docs []string
	for _, manifest := range *cdk8s.Testing_Synth(chart) {
		doc, err := yaml.Marshal(manifest)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	got := strings.Join(docs, "---\n")
	if os.Getenv("UPDATE_SNAPSHOTS") == "1" {
		if err := os.WriteFile(snapshot, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the log shipper differs from %s (UPDATE_SNAPSHOTS=1 rewrites it):\n%s", snapshot, got)
	}
}

func TestABadPropFailsSynthNamingItAsWritten(t *testing.T) {
	defer func() {
		message := fmt.Sprint(recover())
		if !strings.Contains(message, "ExpectedNodes") || !strings.Contains(message, "Fix:") {
			t.Errorf("want an error naming ExpectedNodes and the fix, got %q", message)
		}
	}()
	chart := cdk8s.NewChart(cdk8s.NewApp(nil), jsii.String("test"), nil)
	kruiseha.NewKruiseManager(chart, jsii.String("Kruise"), &kruiseha.KruiseManagerProps{
		Replicas:      jsii.Number(3),
		ExpectedNodes: jsii.Number(2),
	})
}
