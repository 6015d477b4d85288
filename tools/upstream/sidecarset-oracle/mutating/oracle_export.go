// Copied by ../build.sh into upstream's pkg/webhook/pod/mutating (in a COPY of the pinned
// module, never the module cache) so the oracle can call upstream's own, unexported pod
// injection: this file only wires inputs to it and adds no logic of its own.
package mutating

import (
	"context"

	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	"github.com/openkruise/kruise/pkg/util/fieldindex"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// OracleInjectSidecarSets runs upstream's SidecarSet pod injection (sidecarsetMutatingPod) for a
// pod CREATE, with the given SidecarSets and Namespaces as the cluster. It returns the pod after
// injection, and whether injection was skipped.
func OracleInjectSidecarSets(sidecarSets []appsv1alpha1.SidecarSet, namespaces []corev1.Namespace, pod *corev1.Pod) (*corev1.Pod, bool, error) {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = appsv1alpha1.AddToScheme(scheme)
	objects := make([]client.Object, 0, len(sidecarSets)+len(namespaces))
	for i := range sidecarSets {
		objects = append(objects, &sidecarSets[i])
	}
	for i := range namespaces {
		objects = append(objects, &namespaces[i])
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithIndex(&appsv1alpha1.SidecarSet{}, fieldindex.IndexNameForSidecarSetNamespace, fieldindex.IndexSidecarSet).Build()
	h := &PodCreateHandler{Decoder: admission.NewDecoder(scheme), Client: c}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Operation: admissionv1.Create,
		Namespace: pod.Namespace,
	}}
	out := pod.DeepCopy()
	skip, err := h.sidecarsetMutatingPod(context.Background(), req, out)
	return out, skip, err
}
