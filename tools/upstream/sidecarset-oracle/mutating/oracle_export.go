// Copied by ../build.sh into upstream's pkg/webhook/pod/mutating (in a COPY of the pinned
// module, never the module cache) so the oracle can call upstream's own, unexported pod
// injection: this file only wires inputs to it and adds no logic of its own.
package mutating

import (
	"context"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// OracleInjectSidecarSets runs upstream's SidecarSet pod injection (sidecarsetMutatingPod) for a
// pod CREATE against cluster `c`. It returns the pod after injection, and whether it was skipped.
func OracleInjectSidecarSets(c client.Client, pod *corev1.Pod) (*corev1.Pod, bool, error) {
	h := &PodCreateHandler{Decoder: admission.NewDecoder(runtime.NewScheme()), Client: c}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		Operation: admissionv1.Create,
		Namespace: pod.Namespace,
	}}
	out := pod.DeepCopy()
	skip, err := h.sidecarsetMutatingPod(context.Background(), req, out)
	return out, skip, err
}
