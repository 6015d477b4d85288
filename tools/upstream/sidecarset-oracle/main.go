// Command sidecarset-oracle runs upstream OpenKruise's OWN code (the pinned module, built by
// build.sh inside a copy of that module) so tests can compare this project's TypeScript
// against it. It is a test oracle, never shipped.
//
//	sidecarset-oracle schema  prints the Go JSON layout (field order, omitempty, kinds) of what a
//	                          SidecarSet's hash and ControllerRevision encode: SidecarContainer,
//	                          core/v1 Volume, LocalObjectReference, SidecarSetPatchPodMetadata;
//	                          gojson.generated.ts is written from it
//	sidecarset-oracle hash    reads one SidecarSet JSON per stdin line; prints one JSON line each:
//	                          {"raw":{hash,withoutImage},"defaulted":{hash,withoutImage,spec}}
//	                          ("raw" hashes the decoded object as is, "defaulted" after upstream's
//	                          SidecarSet defaulting, exactly what its mutating webhook records)
//	sidecarset-oracle inject  reads {"sidecarSets":[…],"namespaces":[…],"pod":{…}} per line; prints
//	                          {"pod":…,"skip":bool}: upstream's pod webhook SidecarSet injection
//	                          (mutating/oracle_export.go wires the inputs to it)
//	sidecarset-oracle state   reads {"sidecarSet":…,"pod":…} per line; prints how upstream's
//	                          controller sees the pod: {"updated","upgradable","consistent"}
//	                          (sidecarcontrol.IsPodSidecarUpdated, IsSidecarSetUpgradable)
//	sidecarset-oracle validate reads {"existing":[…],"namespaces":[…],"object":…,"older":…} per
//	                          line; prints {"errors":[…]} from upstream's SidecarSet validation
//	                          (validating/oracle_export.go wires the inputs to it)
//	sidecarset-oracle wsvalidate reads {"wsExisting":[…],"workloads":[…],"ws":…,"wsOlder":…} per
//	                          line; prints {"errors":[…]} from upstream's WorkloadSpread validation
//	                          (wsvalidating/oracle_export.go wires the inputs to it)
//	sidecarset-oracle wssubset reads {"ws":…,"pod":…,"operation":…,"injectWS":…,"workloads":[…]}
//	                          per line; prints what upstream's pod webhook does for WorkloadSpread:
//	                          the subset chosen, the status after, the pod injected (wsutil/oracle_export.go)
//	sidecarset-oracle wscost  reads {"ws":…,"podMap":{subset:[pod…]},"replicas":n,"reverse":bool,"absent":[name…]}
//	                          per line (the absent pods are left out of the cluster, so patching them fails);
//	                          prints each pod's deletion cost after upstream's updateDeletionCostBySubset,
//	                          its error and the events it recorded (wscontroller/oracle_export.go)
//	sidecarset-oracle wsstatus reads {"ws":…,"oldStatuses":[…],"podMap":{…},"replicas":n} per line;
//	                          prints upstream's calculateWorkloadSpreadSubsetStatuses: statuses and the
//	                          pods to reschedule (wscontroller/oracle_export.go)
//	sidecarset-oracle podmerge prints, for core/v1 Pod, every field path that carries strategic-merge
//	                          directives (patchStrategy, patchMergeKey struct tags): podmerge.generated.ts
//	                          is written from it
//	sidecarset-oracle smp     reads {"pod":…,"patch":…} per line; prints {"pod":…} as upstream's pod
//	                          webhook merges a subset patch (strategicpatch.StrategicMergePatch over
//	                          corev1.Pod, then decoded into a Pod), or {"error":…}
//	sidecarset-oracle wsgroup reads {"ws":…,"pods":[…],"nodes":[…],"replicas":n} per line; prints
//	                          upstream's groupPodBySubset: pods per subset, their metadata after
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/openkruise/kruise/apis/apps/defaults"
	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	appsv1beta1 "github.com/openkruise/kruise/apis/apps/v1beta1"
	"github.com/openkruise/kruise/pkg/control/sidecarcontrol"
	"github.com/openkruise/kruise/pkg/controller/sidecarset"
	wscontroller "github.com/openkruise/kruise/pkg/controller/workloadspread"
	"github.com/openkruise/kruise/pkg/util/fieldindex"
	wsutil "github.com/openkruise/kruise/pkg/util/workloadspread"
	"github.com/openkruise/kruise/pkg/webhook/pod/mutating"
	"github.com/openkruise/kruise/pkg/webhook/sidecarset/validating"
	wsvalidating "github.com/openkruise/kruise/pkg/webhook/workloadspread/validating"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/kubernetes/pkg/capabilities"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

type field struct {
	JSON      string `json:"json"`
	OmitEmpty bool   `json:"omitempty"`
	Type      string `json:"type"`
	// Pointer: omitempty omits only nil, and a missing value encodes as null.
	Pointer bool `json:"pointer,omitempty"`
}

type typ struct {
	Kind   string  `json:"kind"`
	Elem   string  `json:"elem,omitempty"`
	Fields []field `json:"fields,omitempty"`
}

// structs: the Go type behind each struct name, so that two packages' types of one name fail loudly.
var structs = map[string]reflect.Type{}

var special = map[reflect.Type]string{
	reflect.TypeOf(resource.Quantity{}):  "quantity",
	reflect.TypeOf(intstr.IntOrString{}): "intOrString",
	reflect.TypeOf(v1.Time{}):            "time",
	// managedFields' fieldsV1 (in an ephemeral volume's claim template) marshals itself as raw JSON.
	reflect.TypeOf(v1.FieldsV1{}): "rawJSON",
}

func name(t reflect.Type, types map[string]typ) string {
	if s, ok := special[t]; ok {
		return s
	}
	switch t.Kind() {
	case reflect.Ptr:
		return name(t.Elem(), types)
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Int8, reflect.Int16:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		n := "[]" + name(t.Elem(), types)
		types[n] = typ{Kind: "slice", Elem: name(t.Elem(), types)}
		return n
	case reflect.Map:
		n := "map[string]" + name(t.Elem(), types)
		types[n] = typ{Kind: "map", Elem: name(t.Elem(), types)}
		return n
	case reflect.Struct:
		n := t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:] + "." + t.Name()
		if seen, ok := structs[n]; ok && seen != t {
			panic(fmt.Sprintf("two Go types are named %s: %s and %s", n, seen.PkgPath(), t.PkgPath()))
		}
		structs[n] = t
		if _, ok := types[n]; ok {
			return n
		}
		types[n] = typ{Kind: "struct"}
		types[n] = typ{Kind: "struct", Fields: fields(t, types)}
		return n
	}
	panic(fmt.Sprintf("unsupported kind %s of %s", t.Kind(), t))
}

// patchTags records, by JSON path from the root ("spec.containers[].env"), the patchStrategy and
// patchMergeKey struct tags of every field under t that has one.
func patchTags(t reflect.Type, path string, out map[string]map[string]string, depth int) {
	for t.Kind() == reflect.Ptr || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		if t.Kind() == reflect.Slice {
			path += "[]"
		} else if t.Kind() == reflect.Map {
			path += "{}"
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || depth > 12 {
		return
	}
	if _, ok := special[t]; ok {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		jsonName := strings.Split(tag, ",")[0]
		here := path
		if jsonName == "" && f.Anonymous {
			patchTags(f.Type, path, out, depth+1)
			continue
		}
		if here != "" {
			here += "."
		}
		here += jsonName
		if s, k := f.Tag.Get("patchStrategy"), f.Tag.Get("patchMergeKey"); s != "" || k != "" {
			out[here] = map[string]string{"strategy": s, "key": k}
		}
		patchTags(f.Type, here, out, depth+1)
	}
}

func fields(t reflect.Type, types map[string]typ) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		parts := strings.Split(tag, ",")
		if parts[0] == "" && f.Anonymous {
			out = append(out, fields(f.Type, types)...)
			continue
		}
		jsonName := parts[0]
		if jsonName == "" {
			jsonName = f.Name
		}
		omit := false
		for _, p := range parts[1:] {
			omit = omit || p == "omitempty"
		}
		// A nil pointer is "empty" for omitempty; a struct value never is.
		out = append(out, field{JSON: jsonName, OmitEmpty: omit && f.Type.Kind() != reflect.Struct, Type: name(f.Type, types), Pointer: f.Type.Kind() == reflect.Ptr})
	}
	return out
}

func main() {
	// As upstream's main with its default --allow-privileged=true: core validation reads it.
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	switch os.Args[1] {
	case "schema":
		types := map[string]typ{}
		// container: the SidecarSet hash's root; all four: what its ControllerRevision records.
		roots := map[string]string{
			"container":            name(reflect.TypeOf(appsv1alpha1.SidecarContainer{}), types),
			"volume":               name(reflect.TypeOf(corev1.Volume{}), types),
			"localObjectReference": name(reflect.TypeOf(corev1.LocalObjectReference{}), types),
			"patchPodMetadata":     name(reflect.TypeOf(appsv1alpha1.SidecarSetPatchPodMetadata{}), types),
		}
		b, _ := json.MarshalIndent(map[string]interface{}{"roots": roots, "types": types}, "", "  ")
		fmt.Println(string(b))
	case "podmerge":
		out := map[string]map[string]string{}
		patchTags(reflect.TypeOf(corev1.Pod{}), "", out, 0)
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Println(string(b))
	case "smp":
		eachLine(func(line []byte) (interface{}, error) {
			var c struct {
				Pod   json.RawMessage `json:"pod"`
				Patch json.RawMessage `json:"patch"`
			}
			if err := json.Unmarshal(line, &c); err != nil {
				return nil, err
			}
			pod := &corev1.Pod{}
			if err := json.Unmarshal(c.Pod, pod); err != nil {
				return nil, err
			}
			original, _ := json.Marshal(pod)
			modified, err := strategicpatch.StrategicMergePatch(original, c.Patch, &corev1.Pod{})
			if err != nil {
				return map[string]string{"error": err.Error()}, nil
			}
			merged := &corev1.Pod{}
			if err := json.Unmarshal(modified, merged); err != nil {
				return map[string]string{"error": err.Error()}, nil
			}
			return map[string]interface{}{"pod": merged}, nil
		})
	case "hash":
		eachLine(func(line []byte) (interface{}, error) {
			s := &appsv1alpha1.SidecarSet{}
			if err := json.Unmarshal(line, s); err != nil {
				return nil, err
			}
			raw := hashes(s)
			defaults.SetDefaultsSidecarSet(s)
			d := hashes(s)
			d["spec"] = s.Spec
			return map[string]interface{}{"raw": raw, "defaulted": d}, nil
		})
	case "inject":
		eachCase(func(c *input) (interface{}, error) {
			pod, skip, err := mutating.OracleInjectSidecarSets(c.cluster(c.SidecarSets), c.Pod)
			return map[string]interface{}{"pod": pod, "skip": skip}, err
		})
	case "state":
		eachCase(func(c *input) (interface{}, error) {
			set := beta(c.SidecarSet)
			canUpgrade, consistent := sidecarcontrol.New(set).IsSidecarSetUpgradable(c.Pod)
			return map[string]bool{
				"updated":    sidecarcontrol.IsPodSidecarUpdated(set, c.Pod),
				"upgradable": canUpgrade,
				"consistent": consistent,
			}, nil
		})
	case "rollout":
		eachCase(func(c *input) (interface{}, error) { return rollout(c) })
	case "validate":
		eachCase(func(c *input) (interface{}, error) {
			return map[string][]string{"errors": validating.OracleValidateSidecarSet(c.cluster(c.Existing), beta(c.Object), betaOrNil(c.Older))}, nil
		})
	case "wsvalidate":
		eachCase(func(c *input) (interface{}, error) {
			return map[string][]string{"errors": wsvalidating.OracleValidateWorkloadSpread(c.wsCluster(), c.WS, c.WSOlder)}, nil
		})
	case "wssubset":
		eachCase(func(c *input) (interface{}, error) {
			return wsutil.OracleSubsetForPod(c.wsCluster(), c.WS, c.Pod, c.InjectWS, wsutil.Operation(c.Operation))
		})
	case "wscost":
		eachCase(func(c *input) (interface{}, error) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			objects := []client.Object{}
			absent := map[string]bool{}
			for _, name := range c.Absent {
				absent[name] = true
			}
			for _, pods := range c.PodMap {
				for _, p := range pods {
					if !absent[p.Name] {
						objects = append(objects, p.DeepCopy())
					}
				}
			}
			cli := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
			return wscontroller.OracleDeletionCost(cli, c.WS, c.PodMap, c.Replicas, c.Reverse)
		})
	case "wsstatus":
		eachCase(func(c *input) (interface{}, error) {
			return wscontroller.OracleSubsetStatuses(c.WS, c.OldStatuses, c.PodMap, c.Replicas)
		})
	case "wsgroup":
		eachCase(func(c *input) (interface{}, error) {
			scheme := runtime.NewScheme()
			_ = clientgoscheme.AddToScheme(scheme)
			objects := []client.Object{}
			pods := []*corev1.Pod{}
			for i := range c.Pods {
				objects = append(objects, c.Pods[i].DeepCopy())
				pods = append(pods, &c.Pods[i])
			}
			for i := range c.Nodes {
				objects = append(objects, &c.Nodes[i])
			}
			cli := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
			return wscontroller.OracleGroupPods(cli, c.WS, pods, c.Replicas)
		})
	default:
		panic("usage: sidecarset-oracle schema|podmerge|smp|hash|inject|state|rollout|validate|wsvalidate|wssubset|wscost|wsstatus|wsgroup")
	}
}

// input is one stdin line of the inject, state and validate modes (each reads its own fields).
type input struct {
	SidecarSets []appsv1alpha1.SidecarSet                 `json:"sidecarSets"`
	Existing    []appsv1alpha1.SidecarSet                 `json:"existing"`
	Namespaces  []corev1.Namespace                        `json:"namespaces"`
	Pod         *corev1.Pod                               `json:"pod"`
	SidecarSet  *appsv1alpha1.SidecarSet                  `json:"sidecarSet"`
	Object      *appsv1alpha1.SidecarSet                  `json:"object"`
	Older       *appsv1alpha1.SidecarSet                  `json:"older"`
	Pods        []corev1.Pod                              `json:"pods"`
	WS          *appsv1alpha1.WorkloadSpread              `json:"ws"`
	WSOlder     *appsv1alpha1.WorkloadSpread              `json:"wsOlder"`
	WSExisting  []appsv1alpha1.WorkloadSpread             `json:"wsExisting"`
	Workloads   []unstructured.Unstructured               `json:"workloads"`
	InjectWS    *wsutil.InjectWorkloadSpread              `json:"injectWS"`
	Operation   string                                    `json:"operation"`
	PodMap      map[string][]*corev1.Pod                  `json:"podMap"`
	Replicas    int32                                     `json:"replicas"`
	Reverse     bool                                      `json:"reverse"`
	Absent      []string                                  `json:"absent"`
	OldStatuses []appsv1alpha1.WorkloadSpreadSubsetStatus `json:"oldStatuses"`
	Nodes       []corev1.Node                             `json:"nodes"`
}

// wsCluster is a fake API holding the input's other WorkloadSpreads and target workloads.
func (c *input) wsCluster() client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = appsv1alpha1.AddToScheme(scheme)
	objects := []client.Object{}
	for i := range c.WSExisting {
		objects = append(objects, &c.WSExisting[i])
	}
	for i := range c.Workloads {
		objects = append(objects, &c.Workloads[i])
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
}

// rollout runs one reconcile of upstream's own SidecarSet controller (Processor.UpdateSidecarSet)
// on a fake API holding the SidecarSet, the pods and the namespaces, and answers with the
// SidecarSet's status, its ControllerRevisions and the pods afterwards.
func rollout(c *input) (interface{}, error) {
	// Upstream's manager registers its types in client-go's scheme, which its revision codec uses.
	_ = appsv1alpha1.AddToScheme(clientgoscheme.Scheme)
	_ = appsv1beta1.AddToScheme(clientgoscheme.Scheme)
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = appsv1alpha1.AddToScheme(scheme)
	_ = appsv1beta1.AddToScheme(scheme)
	objects := []client.Object{beta(c.SidecarSet)}
	for i := range c.Pods {
		objects = append(objects, &c.Pods[i])
	}
	for i := range c.Namespaces {
		objects = append(objects, labelled(&c.Namespaces[i]))
	}
	cli := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithStatusSubresource(&appsv1beta1.SidecarSet{}).
		WithIndex(&appsv1beta1.SidecarSet{}, fieldindex.IndexNameForSidecarSetNamespace, fieldindex.IndexSidecarSetV1Beta1).Build()
	// Expectations are process-global upstream: each case starts from none.
	sidecarcontrol.UpdateExpectations.DeleteExpectations(c.SidecarSet.Name)
	set := &appsv1beta1.SidecarSet{}
	if err := cli.Get(context.TODO(), client.ObjectKeyFromObject(c.SidecarSet), set); err != nil {
		return nil, err
	}
	if _, err := sidecarset.NewSidecarSetProcessor(cli, record.NewFakeRecorder(1000)).UpdateSidecarSet(set); err != nil {
		return nil, err
	}
	after := &appsv1beta1.SidecarSet{}
	pods := &corev1.PodList{}
	revisions := &appsv1.ControllerRevisionList{}
	for _, err := range []error{cli.Get(context.TODO(), client.ObjectKeyFromObject(c.SidecarSet), after), cli.List(context.TODO(), pods), cli.List(context.TODO(), revisions)} {
		if err != nil {
			return nil, err
		}
	}
	return map[string]interface{}{"status": after.Status, "pods": pods.Items, "revisions": revisions.Items}, nil
}

// cluster is a fake API holding sidecarSets and the input's namespaces, indexed as upstream's
// manager indexes SidecarSets (by namespace). The SidecarSets are held as v1beta1, the version
// upstream's CRD stores and its webhooks and controller read, converted from the v1alpha1 input
// by upstream's own conversion (what the API server's conversion webhook call does).
func (c *input) cluster(sidecarSets []appsv1alpha1.SidecarSet) client.Client {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = appsv1alpha1.AddToScheme(scheme)
	_ = appsv1beta1.AddToScheme(scheme)
	objects := make([]client.Object, 0, len(sidecarSets)+len(c.Namespaces))
	for i := range sidecarSets {
		objects = append(objects, beta(&sidecarSets[i]))
	}
	for i := range c.Namespaces {
		objects = append(objects, labelled(&c.Namespaces[i]))
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithIndex(&appsv1beta1.SidecarSet{}, fieldindex.IndexNameForSidecarSetNamespace, fieldindex.IndexSidecarSetV1Beta1).Build()
}

// beta converts a v1alpha1 SidecarSet (a test input) to v1beta1 with upstream's own ConvertTo,
// on a deep copy (ConvertTo shares the source's label map and deletes from it).
func beta(s *appsv1alpha1.SidecarSet) *appsv1beta1.SidecarSet {
	out := &appsv1beta1.SidecarSet{}
	if err := s.DeepCopy().ConvertTo(out); err != nil {
		panic(err)
	}
	return out
}

func betaOrNil(s *appsv1alpha1.SidecarSet) *appsv1beta1.SidecarSet {
	if s == nil {
		return nil
	}
	return beta(s)
}

// labelled is the namespace as a real API server stores it: with the kubernetes.io/metadata.name
// label it sets on every Namespace (which upstream v1.9.1's namespace matching reads).
func labelled(ns *corev1.Namespace) *corev1.Namespace {
	out := ns.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	out.Labels[appsv1alpha1.LabelMetadataName] = out.Name
	return out
}

// eachCase decodes each stdin line as an input and answers it like eachLine.
func eachCase(answer func(c *input) (interface{}, error)) {
	eachLine(func(line []byte) (interface{}, error) {
		c := &input{}
		if err := json.Unmarshal(line, c); err != nil {
			return nil, err
		}
		return answer(c)
	})
}

// eachLine answers each stdin line with one JSON line on stdout ({"error":…} when it fails).
func eachLine(answer func(line []byte) (interface{}, error)) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		v, err := answer(in.Bytes())
		if err != nil {
			v = map[string]string{"error": err.Error()}
		}
		_ = out.Encode(v)
	}
}

func hashes(s *appsv1alpha1.SidecarSet) map[string]interface{} {
	h, err := sidecarcontrol.SidecarSetHash(s)
	if err != nil {
		panic(err)
	}
	w, err := sidecarcontrol.SidecarSetHashWithoutImage(s)
	if err != nil {
		panic(err)
	}
	return map[string]interface{}{"hash": h, "withoutImage": w}
}
