// Copied by ../build.sh into upstream's pkg/util/workloadspread (in a COPY of the pinned module,
// never the module cache) so the oracle can call upstream's own, unexported pod-webhook steps of
// WorkloadSpread: this file only wires inputs to them and adds no logic of its own.
package workloadspread

import (
	"fmt"

	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OracleSubsetResult is what one pod CREATE or DELETE does to a WorkloadSpread in upstream's webhook.
type OracleSubsetResult struct {
	Changed      bool                              `json:"changed"`
	Subset       string                            `json:"subset"`
	GeneratedUID bool                              `json:"generatedUID"`
	Status       appsv1alpha1.WorkloadSpreadStatus `json:"status"`
	Pod          *corev1.Pod                       `json:"pod,omitempty"`
	InjectError  string                            `json:"injectError,omitempty"`
}

// OracleSubsetForPod runs upstream's choice for one pod: the StatefulSet ordinal path or
// updateSubsetForPod (on `ws` as given: its status is the cache's), then, on CREATE,
// injectWorkloadSpreadIntoPod. A panic is answered as an error.
func OracleSubsetForPod(c client.Client, ws *appsv1alpha1.WorkloadSpread, pod *corev1.Pod, injectWS *InjectWorkloadSpread, operation Operation) (out *OracleSubsetResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	h := &Handler{Client: c}
	out = &OracleSubsetResult{}
	var subsetName, uid string
	if len(ws.Spec.Subsets) == 1 && ws.Spec.Subsets[0].MaxReplicas == nil {
		subsetName = ws.Spec.Subsets[0].Name
	} else if ws.Spec.TargetReference != nil && ws.Spec.TargetReference.Kind == controllerKindSts.Kind {
		// acquireSuitableSubset's StatefulSet branch, which needs no client.
		name, _, e := h.acquireSuitableSubset(ws, pod, injectWS, operation)
		if e != nil {
			return nil, e
		}
		subsetName = name
	} else {
		changed, subset, generatedUID, e := h.updateSubsetForPod(ws, pod, injectWS, operation)
		if e != nil {
			return nil, e
		}
		out.Changed = changed
		if subset != nil {
			subsetName = subset.Name
		}
		uid = generatedUID
	}
	out.Subset = subsetName
	out.GeneratedUID = uid != ""
	out.Status = ws.Status
	if operation == CreateOperation && subsetName != "" {
		if _, e := injectWorkloadSpreadIntoPod(ws, pod, subsetName, uid); e != nil {
			out.InjectError = e.Error()
		}
		out.Pod = pod
	}
	return out, nil
}
