package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and annotations of the simulated nodes.
const (
	// KwokNodeAnnotation marks a node kwok manages.
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	// NodeTypeLabel is set to "kwok" on every simulated node.
	NodeTypeLabel = "type"
)

// NeverReadyImage is an image whose pods are scheduled and Running but never Ready, their
// container waiting in ImagePullBackOff (stages/pod-never-ready.yaml): a broken image.
const NeverReadyImage = "localcluster.test/never-ready:v1"

// NodeName returns the name of the i-th simulated node (0-based).
func NodeName(i int) string { return fmt.Sprintf("kwok-node-%d", i) }

// buildNode returns a simulated node. Its capacity is in the status kwok keeps (the
// node-initialize stage reuses what is there), since no kubelet reports one.
func buildNode(name string) *corev1.Node {
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				NodeTypeLabel:          "kwok",
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
			},
		},
		Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources},
	}
}

// createNodes creates n simulated nodes.
func createNodes(ctx context.Context, c client.Client, n int) error {
	for i := range n {
		if err := c.Create(ctx, buildNode(NodeName(i))); err != nil {
			return fmt.Errorf("creating node %s: %w", NodeName(i), err)
		}
	}
	return nil
}

// nodesReady reports whether n simulated nodes exist and are Ready.
func nodesReady(ctx context.Context, c client.Client, n int) (bool, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{NodeTypeLabel: "kwok"}); err != nil {
		return false, fmt.Errorf("listing nodes: %w", err)
	}
	ready := 0
	for i := range nodes.Items {
		if NodeReady(&nodes.Items[i]) {
			ready++
		}
	}
	return ready >= n, nil
}

// NodeReady reports whether node's Ready condition is True.
func NodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
