package promserver

import (
	"fmt"
	"maps"
	"net"
	"strconv"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// ServiceMonitorJob renders endpoint 0 of a ServiceMonitor into a scrape configuration, as the
// Prometheus Operator does: the job named serviceMonitor/NAMESPACE/NAME/0, the job label the
// value of the Service's jobLabel label (else the Service's name), one target per ready address
// of the Service's EndpointSlices on the endpoint's port, labelled namespace, service, pod and
// endpoint. svc must be selected by the ServiceMonitor in its namespace: a ServiceMonitor that
// would not select it is an error. tokenFile is what bearerTokenFile names on Prometheus's side.
func ServiceMonitorJob(sm *monitoringv1.ServiceMonitor, svc *corev1.Service, slices []discoveryv1.EndpointSlice, tokenFile string) (ScrapeConfig, error) {
	if len(sm.Spec.Endpoints) == 0 {
		return ScrapeConfig{}, fmt.Errorf("ServiceMonitor %s/%s has no endpoints", sm.Namespace, sm.Name)
	}
	if err := selects(sm.Spec.Selector, svc.Labels); err != nil {
		return ScrapeConfig{}, fmt.Errorf("ServiceMonitor %s/%s, Service %s: %w", sm.Namespace, sm.Name, svc.Name, err)
	}
	ep := sm.Spec.Endpoints[0]
	job := svc.Name
	if v := svc.Labels[sm.Spec.JobLabel]; sm.Spec.JobLabel != "" && v != "" {
		job = v
	}
	sc := ScrapeConfig{
		JobName: fmt.Sprintf("serviceMonitor/%s/%s/0", sm.Namespace, sm.Name), Scheme: ep.Scheme,
		MetricsPath: ep.Path, HonorLabels: ep.HonorLabels,
	}
	if ep.BearerTokenFile != "" { //nolint:staticcheck // the field the project's ServiceMonitor uses
		sc.Authorization = &Authorization{CredentialsFile: tokenFile}
	}
	if ep.TLSConfig != nil && ep.TLSConfig.InsecureSkipVerify != nil && *ep.TLSConfig.InsecureSkipVerify {
		sc.TLSConfig = &TLSConfig{InsecureSkipVerify: true}
	}
	for _, slice := range slices {
		sc.StaticConfigs = append(sc.StaticConfigs, sliceTargets(slice, ep.Port,
			map[string]string{"job": job, "namespace": svc.Namespace, "service": svc.Name, "endpoint": ep.Port})...)
	}
	if len(sc.StaticConfigs) == 0 {
		return sc, fmt.Errorf("ServiceMonitor %s/%s: Service %s has no ready endpoint on port %q", sm.Namespace, sm.Name, svc.Name, ep.Port)
	}
	return sc, nil
}

// PodMonitorJob renders endpoint 0 of a PodMonitor into a scrape configuration, as the
// Prometheus Operator does: the job named podMonitor/NAMESPACE/NAME/0, the job label the value of
// the pods' jobLabel label (else NAMESPACE/NAME), one target per running pod the selector picks
// that has the named container port, labelled namespace, pod, container and endpoint.
func PodMonitorJob(pm *monitoringv1.PodMonitor, pods []corev1.Pod) (ScrapeConfig, error) {
	if len(pm.Spec.PodMetricsEndpoints) == 0 {
		return ScrapeConfig{}, fmt.Errorf("PodMonitor %s/%s has no endpoints", pm.Namespace, pm.Name)
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port == nil {
		return ScrapeConfig{}, fmt.Errorf("PodMonitor %s/%s: endpoint 0 names no port", pm.Namespace, pm.Name)
	}
	sc := ScrapeConfig{JobName: fmt.Sprintf("podMonitor/%s/%s/0", pm.Namespace, pm.Name), MetricsPath: ep.Path}
	sc.Scheme = ep.Scheme
	for i := range pods {
		p := &pods[i]
		if p.Namespace != pm.Namespace || p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning || selects(pm.Spec.Selector, p.Labels) != nil {
			continue
		}
		container, port := namedPort(p, *ep.Port)
		if port == 0 {
			continue
		}
		job := pm.Namespace + "/" + pm.Name
		if v := p.Labels[pm.Spec.JobLabel]; pm.Spec.JobLabel != "" && v != "" {
			job = v
		}
		sc.StaticConfigs = append(sc.StaticConfigs, StaticConfig{
			Targets: []string{hostPort(p.Status.PodIP, port)},
			Labels:  map[string]string{"job": job, "namespace": p.Namespace, "pod": p.Name, "container": container, "endpoint": *ep.Port},
		})
	}
	if len(sc.StaticConfigs) == 0 {
		return sc, fmt.Errorf("PodMonitor %s/%s selects no running pod with port %q", pm.Namespace, pm.Name, *ep.Port)
	}
	return sc, nil
}

// sliceTargets are the ready addresses of an EndpointSlice on the named port, each with labels
// and the name of its pod.
func sliceTargets(slice discoveryv1.EndpointSlice, portName string, labels map[string]string) []StaticConfig {
	port := slicePort(slice, portName)
	if port == 0 {
		return nil
	}
	var targets []StaticConfig
	for _, e := range slice.Endpoints {
		if e.Conditions.Ready != nil && !*e.Conditions.Ready {
			continue
		}
		withPod := maps.Clone(labels)
		if e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
			withPod["pod"] = e.TargetRef.Name
		}
		for _, addr := range e.Addresses {
			targets = append(targets, StaticConfig{Targets: []string{hostPort(addr, port)}, Labels: withPod})
		}
	}
	return targets
}

// selects reports (as an error) when selector does not select objects with these labels.
func selects(selector metav1.LabelSelector, objectLabels map[string]string) error {
	s, err := metav1.LabelSelectorAsSelector(&selector)
	if err != nil {
		return fmt.Errorf("invalid selector: %w", err)
	}
	if !s.Matches(labels.Set(objectLabels)) {
		return fmt.Errorf("selector %s does not select labels %v", s, objectLabels)
	}
	return nil
}

func slicePort(slice discoveryv1.EndpointSlice, name string) int32 {
	for _, p := range slice.Ports {
		if p.Name != nil && *p.Name == name && p.Port != nil {
			return *p.Port
		}
	}
	return 0
}

func namedPort(p *corev1.Pod, name string) (container string, port int32) {
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if cp.Name == name {
				return c.Name, cp.ContainerPort
			}
		}
	}
	return "", 0
}

func hostPort(host string, port int32) string {
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}
