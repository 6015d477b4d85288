// Copied by ../build.sh into upstream's pkg/webhook/cloneset/validating (in a COPY of the pinned
// module, never the module cache) so the oracle can call upstream's own, unexported CloneSet
// validation: this file only wires inputs to it and adds no logic of its own.
package validating

import (
	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OracleValidateCloneSet runs what upstream's CloneSet validating webhook runs: validateCloneSet
// for a CREATE (older nil), validateCloneSetUpdate for an UPDATE, against cluster `c` (the pods).
func OracleValidateCloneSet(c client.Client, obj, older *appsv1alpha1.CloneSet) []string {
	h := &CloneSetCreateUpdateHandler{Client: c}
	errs := h.validateCloneSet(obj, nil)
	if older != nil {
		errs = h.validateCloneSetUpdate(obj, older)
	}
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
