// Copyright 2026 The database-operator Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package echo

import (
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	"github.com/seed1b407122/database-operator/controllers/internal/child"
	"github.com/seed1b407122/database-operator/controllers/internal/podsecurity"
)

// echoKind names Echos in owner references and in the operator's metrics.
const echoKind = "Echo"

// ContainerName is the name of the container that prints the message.
const ContainerName = "echo"

// MessageEnv is the environment variable that carries the message into the container. The
// message is never part of the shell command, so no message can inject shell code.
const MessageEnv = "MESSAGE"

// Settings of every Job that prints a message. Every number is set, even where it equals the
// API server's default, so that the drift checks compare numbers exactly.
const (
	// BackoffLimit is how many times a failed pod is retried before the Job fails.
	BackoffLimit = 2
	// ActiveDeadlineSeconds bounds a run, pending pods included: a Job whose image cannot be
	// pulled fails instead of waiting forever.
	ActiveDeadlineSeconds = 600
	// TTLSecondsAfterFinished keeps a finished Job (and its pod's log) for an hour.
	TTLSecondsAfterFinished = 3600
	// nobody is the uid and gid the container runs as: busybox images default to root, which
	// the restricted Pod Security profile forbids.
	nobody = 65534
)

// printCommand prints $MESSAGE (MessageEnv) with printf rather than echo, so that a message
// such as "-n" or one with backslashes is printed as it is.
var printCommand = []string{"/bin/sh", "-c", `printf '%s\n' "$MESSAGE"`}

// BuildJob returns the Job that prints the message of e once, with image.
func BuildJob(e *echov1alpha1.Echo, image string) *batchv1.Job {
	spec := buildJobSpec(e.Spec.Message, image, e.SelectorLabels())
	spec.TTLSecondsAfterFinished = ptr.To[int32](TTLSecondsAfterFinished)
	return &batchv1.Job{
		ObjectMeta: child.Meta(e, echov1alpha1.GroupVersion.WithKind(echoKind), e.JobName(), e.Labels()),
		Spec:       spec,
	}
}

// buildJobSpec returns the spec of a Job whose single pod, labelled podLabels, prints message.
// ScheduledEchos run the same Job from their CronJob (BuildCronJob).
func buildJobSpec(message, image string, podLabels map[string]string) batchv1.JobSpec {
	return batchv1.JobSpec{
		BackoffLimit:          ptr.To[int32](BackoffLimit),
		ActiveDeadlineSeconds: ptr.To[int64](ActiveDeadlineSeconds),
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(podLabels)},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				// The pod talks to nothing: no token, no Service environment variables.
				AutomountServiceAccountToken: ptr.To(false),
				EnableServiceLinks:           ptr.To(false),
				SecurityContext:              podsecurity.RestrictedPod(ptr.To[int64](nobody), ptr.To[int64](nobody)),
				Containers:                   []corev1.Container{buildContainer(message, image)},
			},
		},
	}
}

func buildContainer(message, image string) corev1.Container {
	// The Pod Security "restricted" profile, and a read-only root: printf writes no file.
	security := podsecurity.Restricted()
	security.ReadOnlyRootFilesystem = ptr.To(true)
	return corev1.Container{
		Name:    ContainerName,
		Image:   image,
		Command: printCommand,
		Env:     []corev1.EnvVar{{Name: MessageEnv, Value: message}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("10m"),
				corev1.ResourceMemory: resource.MustParse("16Mi"),
			},
			Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")},
		},
		SecurityContext: security,
	}
}

// jobSpec keeps the fields of a Job the operator owns and may change. The pod template, the
// selector and completions of a Job are immutable and the Job runs once: they are set on create
// and never sent again. Only the retry and cleanup settings are kept in place.
var jobSpec = child.Spec[*batchv1.Job]{
	InSync: func(desired, observed *batchv1.Job) bool {
		return ptr.Equal(desired.Spec.BackoffLimit, observed.Spec.BackoffLimit) &&
			ptr.Equal(desired.Spec.TTLSecondsAfterFinished, observed.Spec.TTLSecondsAfterFinished)
	},
	Merge: func(desired, observed *batchv1.Job) {
		observed.Spec.BackoffLimit = desired.Spec.BackoffLimit
		observed.Spec.TTLSecondsAfterFinished = desired.Spec.TTLSecondsAfterFinished
	},
}
