// Copied by ../build.sh into upstream's pkg/webhook/sidecarset/validating (in a COPY of the
// pinned module, never the module cache) so the oracle can call upstream's own, unexported
// SidecarSet validation: this file only wires inputs to it and adds no logic of its own.
package validating

import (
	appsv1beta1 "github.com/openkruise/kruise/apis/apps/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// OracleValidateSidecarSet runs upstream's SidecarSet validation (validateSidecarSet) for a
// CREATE (older nil) or UPDATE against cluster `c` (the other SidecarSets, the namespaces). Upstream
// validates v1beta1: a v1alpha1 request is converted (ConvertTo) first, as its Handle does.
func OracleValidateSidecarSet(c client.Client, obj, older *appsv1beta1.SidecarSet) []string {
	h := &SidecarSetCreateUpdateHandler{Client: c}
	errs := h.validateSidecarSet(obj, older)
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
