// Copied by ../build.sh into upstream's pkg/controller/workloadspread (in a COPY of the pinned
// module, never the module cache) so the oracle can call upstream's own, unexported WorkloadSpread
// controller steps: this file only wires inputs to them and adds no logic of its own.
package workloadspread

import (
	"context"
	"fmt"

	appsv1alpha1 "github.com/openkruise/kruise/apis/apps/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// recorded drains the events a FakeRecorder holds ("<type> <reason> <message>" each).
func recorded(rec *record.FakeRecorder) []string {
	out := []string{}
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// OracleDeletionCost runs upstream's updateDeletionCostBySubset for `podMap` (subset name, or
// FakeSubsetName, to pods that are in cluster `c`) and answers each pod's deletion-cost
// annotation afterwards ("" when it has none), the error if it failed and the events it recorded.
func OracleDeletionCost(c client.Client, ws *appsv1alpha1.WorkloadSpread, podMap map[string][]*corev1.Pod, replicas int32, reverse bool) (out map[string]interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	rec := record.NewFakeRecorder(1000)
	r := &ReconcileWorkloadSpread{Client: c, recorder: rec}
	failed := ""
	if err = r.updateDeletionCostBySubset(ws, podMap, replicas, reverse); err != nil {
		failed = err.Error()
	}
	pods := &corev1.PodList{}
	if err = c.List(context.TODO(), pods); err != nil {
		return nil, err
	}
	costs := map[string]string{}
	for _, p := range pods.Items {
		costs[p.Name] = p.Annotations["controller.kubernetes.io/pod-deletion-cost"]
	}
	return map[string]interface{}{"costs": costs, "failed": failed, "events": recorded(rec)}, nil
}

// OracleSubsetStatuses runs upstream's calculateWorkloadSpreadSubsetStatuses (statuses from the
// pods of each subset, with creating/deleting timeouts and, under Adaptive, the Schedulable
// condition and the pods to reschedule) and answers the statuses, those pods' names and the events
// it recorded.
func OracleSubsetStatuses(ws *appsv1alpha1.WorkloadSpread, old []appsv1alpha1.WorkloadSpreadSubsetStatus, podMap map[string][]*corev1.Pod, replicas int32) (out map[string]interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	rec := record.NewFakeRecorder(1000)
	r := &ReconcileWorkloadSpread{recorder: rec}
	statuses, failed := r.calculateWorkloadSpreadSubsetStatuses(ws, old, podMap, replicas)
	names := map[string][]string{}
	for subset, pods := range failed {
		names[subset] = []string{}
		for _, p := range pods {
			names[subset] = append(names[subset], p.Name)
		}
	}
	return map[string]interface{}{"statuses": statuses, "failed": names, "nil": statuses == nil, "events": recorded(rec)}, nil
}

// OracleGroupPods runs upstream's groupPodBySubset for `pods` (which, with the nodes, are in
// cluster `c`) and answers the pod names per subset and every pod's labels and annotations after.
func OracleGroupPods(c client.Client, ws *appsv1alpha1.WorkloadSpread, pods []*corev1.Pod, replicas int32) (out map[string]interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	r := &ReconcileWorkloadSpread{Client: c, recorder: record.NewFakeRecorder(1000)}
	podMap, err := r.groupPodBySubset(ws, pods, replicas)
	if err != nil {
		return nil, err
	}
	names := map[string][]string{}
	for subset, list := range podMap {
		names[subset] = []string{}
		for _, p := range list {
			names[subset] = append(names[subset], p.Name)
		}
	}
	after := &corev1.PodList{}
	if err = c.List(context.TODO(), after); err != nil {
		return nil, err
	}
	meta := map[string]interface{}{}
	for _, p := range after.Items {
		meta[p.Name] = map[string]interface{}{"labels": p.Labels, "annotations": p.Annotations}
	}
	return map[string]interface{}{"podMap": names, "pods": meta}, nil
}
