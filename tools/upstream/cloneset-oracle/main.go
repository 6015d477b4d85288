// Command cloneset-oracle runs upstream OpenKruise's OWN CloneSet code (the pinned module, built by
// build.sh inside a copy of that module) so tests can compare lib/runtime/cloneset against it. It
// is a test oracle, never shipped. Each command but schema reads one JSON case per stdin line and
// prints one JSON line per case ({"error":…} when the case cannot be decoded).
//
//	cloneset-oracle schema    prints the Go JSON layout (field order, omitempty, kinds) of CloneSet
//	                          and everything it contains; cloneset's gojson.generated.ts is written from it
//	cloneset-oracle default   {"object":…,"older":…}: upstream's CloneSet mutating webhook (its Handle,
//	                          CREATE, or UPDATE when older is given), its patch applied to the object:
//	                          {"object":…,"patched":bool} or {"denied":…}
//	cloneset-oracle validate  {"object":…,"older":…,"pods":[…]}: upstream's CloneSet validation
//	                          (validateCloneSet, or validateCloneSetUpdate when older is given) on a fake
//	                          API holding the pods: {"errors":[…]}
//	cloneset-oracle revision  {"object":…,"revision":n,"collisionCount":n}: the ControllerRevision
//	                          upstream's revision control builds (NewRevision), and the labels
//	                          WriteRevisionHash puts on a pod of that revision
//	cloneset-oracle apply     {"object":…,"data":…}: ApplyRevision of a revision holding data: {"object":…}
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
	"github.com/openkruise/kruise/apis"
	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	"github.com/openkruise/kruise/pkg/controller/cloneset/revision"
	clonesetutils "github.com/openkruise/kruise/pkg/controller/cloneset/utils"
	"github.com/openkruise/kruise/pkg/webhook/cloneset/mutating"
	"github.com/openkruise/kruise/pkg/webhook/cloneset/validating"
	admissionv1 "k8s.io/api/admission/v1"
	apps "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/capabilities"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// goField and goType: one struct field's JSON name, omitempty and type; a type's kind and fields.
type goField struct {
	JSON      string `json:"json"`
	OmitEmpty bool   `json:"omitempty"`
	Type      string `json:"type"`
	Pointer   bool   `json:"pointer,omitempty"`
}

type goType struct {
	Kind   string    `json:"kind"`
	Elem   string    `json:"elem,omitempty"`
	Fields []goField `json:"fields,omitempty"`
}

// layout walks Go types into the table gojson.ts reads, naming each type as "<package>.<Name>".
type layout struct {
	types map[string]goType
	seen  map[string]reflect.Type
}

var leaves = map[reflect.Type]string{
	reflect.TypeOf(resource.Quantity{}):  "quantity",
	reflect.TypeOf(intstr.IntOrString{}): "intOrString",
	reflect.TypeOf(metav1.Time{}):        "time",
	reflect.TypeOf(metav1.FieldsV1{}):    "rawJSON",
}

func (l *layout) typeName(t reflect.Type) string {
	if s, ok := leaves[t]; ok {
		return s
	}
	switch k := t.Kind(); {
	case k == reflect.Ptr:
		return l.typeName(t.Elem())
	case k == reflect.String:
		return "string"
	case k == reflect.Bool:
		return "bool"
	case k >= reflect.Int && k <= reflect.Uint64:
		return "int"
	case k == reflect.Float32 || k == reflect.Float64:
		return "float"
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return "bytes"
	case k == reflect.Slice || k == reflect.Map:
		elem := l.typeName(t.Elem())
		if k == reflect.Slice {
			l.types["[]"+elem] = goType{Kind: "slice", Elem: elem}
			return "[]" + elem
		}
		l.types["map[string]"+elem] = goType{Kind: "map", Elem: elem}
		return "map[string]" + elem
	case k == reflect.Struct:
		n := t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:] + "." + t.Name()
		if other, ok := l.seen[n]; ok && other != t {
			panic(fmt.Sprintf("two Go types are named %s: %s and %s", n, other.PkgPath(), t.PkgPath()))
		}
		l.seen[n] = t
		if _, ok := l.types[n]; !ok {
			l.types[n] = goType{Kind: "struct"}
			l.types[n] = goType{Kind: "struct", Fields: l.structFields(t)}
		}
		return n
	}
	panic(fmt.Sprintf("unsupported kind %s of %s", t.Kind(), t))
}

func (l *layout) structFields(t reflect.Type) []goField {
	var out []goField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("json"), ",")
		if tag[0] == "-" || !f.IsExported() {
			continue
		}
		if tag[0] == "" && f.Anonymous {
			out = append(out, l.structFields(f.Type)...)
			continue
		}
		name := tag[0]
		if name == "" {
			name = f.Name
		}
		omit := false
		for _, o := range tag[1:] {
			omit = omit || o == "omitempty"
		}
		// encoding/json never omits a struct value, omitempty or not.
		out = append(out, goField{JSON: name, OmitEmpty: omit && f.Type.Kind() != reflect.Struct, Type: l.typeName(f.Type), Pointer: f.Type.Kind() == reflect.Ptr})
	}
	return out
}

var scheme = runtime.NewScheme()

func decodeCloneSet(raw json.RawMessage) (*appsv1alpha1.CloneSet, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	cs := &appsv1alpha1.CloneSet{}
	return cs, json.Unmarshal(raw, cs)
}

type input struct {
	Object         json.RawMessage   `json:"object"`
	Older          json.RawMessage   `json:"older"`
	Pods           []json.RawMessage `json:"pods"`
	Revision       int64             `json:"revision"`
	CollisionCount *int32            `json:"collisionCount"`
	Data           json.RawMessage   `json:"data"`
}

func answer(mode string, in *input) (v interface{}, err error) {
	// Upstream's webhook server turns a handler's panic into an error answer; so does the oracle.
	defer func() {
		if r := recover(); r != nil {
			v, err = map[string]string{"panic": fmt.Sprint(r)}, nil
		}
	}()
	cs, err := decodeCloneSet(in.Object)
	if err != nil || cs == nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	older, err := decodeCloneSet(in.Older)
	if err != nil {
		return nil, fmt.Errorf("older: %v", err)
	}
	switch mode {
	case "default":
		decoder := admission.NewDecoder(scheme)
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: in.Object}}}
		if older != nil {
			req.Operation = admissionv1.Update
			req.OldObject = runtime.RawExtension{Raw: in.Older}
		}
		resp := (&mutating.CloneSetCreateUpdateHandler{Decoder: decoder}).Handle(context.TODO(), req)
		if !resp.Allowed {
			return map[string]string{"denied": resp.Result.Message}, nil
		}
		if len(resp.Patches) == 0 {
			return map[string]interface{}{"object": in.Object, "patched": false}, nil
		}
		ops, _ := json.Marshal(resp.Patches)
		patch, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			return nil, err
		}
		out, err := patch.Apply(in.Object)
		if err != nil {
			return nil, err
		}
		return map[string]interface{}{"object": json.RawMessage(out), "patched": true}, nil
	case "validate":
		builder := fake.NewClientBuilder().WithScheme(scheme)
		for _, raw := range in.Pods {
			pod := &corev1.Pod{}
			if err := json.Unmarshal(raw, pod); err != nil {
				return nil, fmt.Errorf("pods: %v", err)
			}
			builder = builder.WithObjects(pod)
		}
		return map[string][]string{"errors": validating.OracleValidateCloneSet(builder.Build(), cs, older)}, nil
	case "revision":
		cr, err := revision.NewRevisionControl().NewRevision(cs, in.Revision, in.CollisionCount)
		if err != nil {
			return nil, err
		}
		pod := &corev1.Pod{}
		clonesetutils.WriteRevisionHash(pod, cr.Name)
		return map[string]interface{}{
			"name": cr.Name, "namespace": cr.Namespace, "labels": cr.Labels, "annotations": cr.Annotations,
			"ownerReferences": cr.OwnerReferences, "data": string(cr.Data.Raw), "revision": cr.Revision,
			"podLabels": pod.Labels,
		}, nil
	case "apply":
		restored, err := revision.NewRevisionControl().ApplyRevision(cs, &apps.ControllerRevision{Data: runtime.RawExtension{Raw: in.Data}})
		if err != nil {
			return nil, err
		}
		return map[string]interface{}{"object": restored}, nil
	}
	return nil, fmt.Errorf("unknown command %q", mode)
}

func main() {
	// As upstream's main with its default --allow-privileged=true: core validation reads it.
	capabilities.Initialize(capabilities.Capabilities{AllowPrivileged: true})
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(apis.AddToScheme(scheme))
	// The revision control encodes through client-go's scheme, as in upstream's manager.
	utilruntime.Must(apis.AddToScheme(clientgoscheme.Scheme))
	mode := os.Args[1]
	if mode == "schema" {
		l := &layout{types: map[string]goType{}, seen: map[string]reflect.Type{}}
		roots := map[string]string{"cloneSet": l.typeName(reflect.TypeOf(appsv1alpha1.CloneSet{}))}
		b, _ := json.MarshalIndent(map[string]interface{}{"roots": roots, "types": l.types}, "", "  ")
		fmt.Println(string(b))
		return
	}
	lines := bufio.NewScanner(os.Stdin)
	lines.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for lines.Scan() {
		in := &input{}
		var v interface{}
		err := json.Unmarshal(lines.Bytes(), in)
		if err == nil {
			v, err = answer(mode, in)
		}
		if err != nil {
			v = map[string]string{"error": err.Error()}
		}
		_ = out.Encode(v)
	}
}
