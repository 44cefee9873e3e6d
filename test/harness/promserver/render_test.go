package promserver

import (
	"reflect"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var managerLabels = map[string]string{"app.kubernetes.io/name": "database-operator", "app.kubernetes.io/component": "manager"}

func serviceMonitor() *monitoringv1.ServiceMonitor {
	return &monitoringv1.ServiceMonitor{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "mon"},
		Spec: monitoringv1.ServiceMonitorSpec{
			JobLabel: "app.kubernetes.io/name",
			Selector: metav1.LabelSelector{MatchLabels: managerLabels},
			Endpoints: []monitoringv1.Endpoint{{
				Port: "https", Path: "/metrics", Scheme: "https", HonorLabels: true,
				BearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
				TLSConfig:       &monitoringv1.TLSConfig{SafeTLSConfig: monitoringv1.SafeTLSConfig{InsecureSkipVerify: ptr.To(true)}},
			}},
		},
	}
}

func TestServiceMonitorJobHasOneTargetPerReadyEndpoint(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "metrics", Labels: managerLabels}}
	slices := []discoveryv1.EndpointSlice{{
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To[int32](8443)}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "a"}},
			{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "b"}},
		},
	}}
	got, err := ServiceMonitorJob(serviceMonitor(), svc, slices, "/tmp/token")
	if err != nil {
		t.Fatal(err)
	}
	want := ScrapeConfig{
		JobName: "serviceMonitor/ops/mon/0", Scheme: "https", MetricsPath: "/metrics", HonorLabels: true,
		Authorization: &Authorization{CredentialsFile: "/tmp/token"}, TLSConfig: &TLSConfig{InsecureSkipVerify: true},
		StaticConfigs: []StaticConfig{{Targets: []string{"10.0.0.1:8443"}, Labels: map[string]string{
			"job": "database-operator", "namespace": "ops", "service": "metrics", "endpoint": "https", "pod": "a",
		}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestServiceMonitorJobRefusesAServiceItDoesNotSelect(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "other", Labels: map[string]string{"app": "x"}}}
	_, err := ServiceMonitorJob(serviceMonitor(), svc, nil, "/tmp/token")
	if err == nil || !strings.Contains(err.Error(), "does not select") {
		t.Errorf("err = %v, want a selector error", err)
	}
}

func TestPodMonitorJobHasOneTargetPerRunningSelectedPod(t *testing.T) {
	pm := &monitoringv1.PodMonitor{
		ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: "etcd"},
		Spec: monitoringv1.PodMonitorSpec{
			Selector:            metav1.LabelSelector{MatchLabels: map[string]string{"app": "etcd"}},
			PodMetricsEndpoints: []monitoringv1.PodMetricsEndpoint{{Port: ptr.To("metrics"), Path: "/metrics"}},
		},
	}
	pod := func(name, ip string, phase corev1.PodPhase, labels map[string]string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "db", Name: name, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "database", Ports: []corev1.ContainerPort{
				{Name: "db", ContainerPort: 2379}, {Name: "metrics", ContainerPort: 2381},
			}}}},
			Status: corev1.PodStatus{Phase: phase, PodIP: ip},
		}
	}
	etcd := map[string]string{"app": "etcd"}
	got, err := PodMonitorJob(pm, []corev1.Pod{
		pod("etcd-0", "10.0.0.1", corev1.PodRunning, etcd),
		pod("etcd-1", "", corev1.PodPending, etcd),
		pod("other", "10.0.0.9", corev1.PodRunning, map[string]string{"app": "x"}),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := ScrapeConfig{JobName: "podMonitor/db/etcd/0", MetricsPath: "/metrics", StaticConfigs: []StaticConfig{{
		Targets: []string{"10.0.0.1:2381"},
		Labels:  map[string]string{"job": "db/etcd", "namespace": "db", "pod": "etcd-0", "container": "database", "endpoint": "metrics"},
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestRuleFileIsTheRuleSpec(t *testing.T) {
	rule := &monitoringv1.PrometheusRule{Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{{
		Name: "g", Rules: []monitoringv1.Rule{{Alert: "A", Expr: intstr.FromString("up == 0")}},
	}}}}
	got, err := RuleFile(rule)
	if err != nil {
		t.Fatal(err)
	}
	want := "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := RuleFile(&monitoringv1.PrometheusRule{}); err == nil {
		t.Error("a rule without groups gave no error")
	}
}
