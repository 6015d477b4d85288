// Copied by ../build.sh into upstream's pkg/webhook/workloadspread/validating (in a COPY of the
// pinned module, never the module cache) so the oracle can call upstream's own, unexported
// WorkloadSpread validation: this file only wires inputs to it and adds no logic of its own.
package validating

import (
	"fmt"

	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OracleValidateWorkloadSpread runs what upstream's WorkloadSpread validating webhook runs for a
// CREATE (older nil: validatingWorkloadSpreadFn) or an UPDATE (also validateWorkloadSpreadUpdate)
// against cluster `c` (the other WorkloadSpreads, the target workloads).
// A panic is answered as one error, as controller-runtime's webhook server answers it (RecoverPanic).
func OracleValidateWorkloadSpread(c client.Client, obj, older *appsv1alpha1.WorkloadSpread) (out []string) {
	defer func() {
		if r := recover(); r != nil {
			out = []string{fmt.Sprintf("panic: %v", r)}
		}
	}()
	h := &WorkloadSpreadCreateUpdateHandler{Client: c}
	errs := h.validatingWorkloadSpreadFn(obj)
	if older != nil {
		errs = append(errs, validateWorkloadSpreadUpdate(obj, older)...)
	}
	out = make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
