package leaderlock

import (
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	rl "k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
)

// Options say which Lease the lock holds and how the elector times it.
type Options struct {
	Namespace, Name string
	// LeaseDuration and RenewDeadline are the elector's (the manager's Options).
	LeaseDuration, RenewDeadline time.Duration
}

// New returns the Lease lock of o for the manager's LeaderElectionResourceLockInterface, as
// controller-runtime would make it (identity "<hostname>_<uuid>", requests timing out at half the
// renew deadline, "became leader" events on the Lease) but watched (see Lock), and a function
// that flushes and stops its events.
func New(cfg *rest.Config, o Options) (*Lock, func(), error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, nil, fmt.Errorf("leader election identity: %w", err)
	}
	id := host + "_" + string(uuid.NewUUID())
	requests := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	requests.Timeout = max(o.RenewDeadline/2, time.Second)
	clients, err := kubernetes.NewForConfig(requests)
	if err != nil {
		return nil, nil, err
	}
	// The watch is long: its client has no request timeout.
	watches := rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election-watch")
	watches.Timeout = 0
	watcher, err := kubernetes.NewForConfig(watches)
	if err != nil {
		return nil, nil, err
	}
	events := record.NewBroadcaster()
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: clients.CoreV1().Events(o.Namespace)})
	inner, err := rl.New(rl.LeasesResourceLock, o.Namespace, o.Name, clients.CoreV1(), clients.CoordinationV1(),
		rl.ResourceLockConfig{Identity: id, EventRecorder: events.NewRecorder(clientscheme.Scheme, corev1.EventSource{Component: id})})
	if err != nil {
		events.Shutdown()
		return nil, nil, err
	}
	return &Lock{Interface: inner, Leases: watcher.CoordinationV1(), Namespace: o.Namespace, Name: o.Name,
		LeaseDuration: o.LeaseDuration}, events.Shutdown, nil
}
