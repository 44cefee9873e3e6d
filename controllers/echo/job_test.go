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
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/seed1b407122/database-operator/test/harness/testenv"
)

var _ = Describe("Echo builders", Label("unit"), func() {
	Describe("BuildJob", func() {
		It("builds the whole Job", func() {
			Expect(BuildJob(newEcho("ec"), "busybox:1.36")).To(Equal(&batchv1.Job{
				ObjectMeta: testenv.ParentOf(newEcho("ec"), "echo").ChildMeta("ec-echo"),
				Spec: batchv1.JobSpec{
					BackoffLimit:            ptr.To[int32](2),
					ActiveDeadlineSeconds:   ptr.To[int64](600),
					TTLSecondsAfterFinished: ptr.To[int32](3600),
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
							"app.kubernetes.io/name": "echo", "app.kubernetes.io/instance": "ec",
						}},
						Spec: corev1.PodSpec{
							RestartPolicy:                corev1.RestartPolicyNever,
							AutomountServiceAccountToken: ptr.To(false),
							EnableServiceLinks:           ptr.To(false),
							SecurityContext: &corev1.PodSecurityContext{
								RunAsNonRoot:   ptr.To(true),
								RunAsUser:      ptr.To[int64](65534),
								RunAsGroup:     ptr.To[int64](65534),
								SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
							},
							Containers: []corev1.Container{{
								Name:    "echo",
								Image:   "busybox:1.36",
								Command: []string{"/bin/sh", "-c", `printf '%s\n' "$MESSAGE"`},
								Env:     []corev1.EnvVar{{Name: "MESSAGE", Value: "hello"}},
								Resources: corev1.ResourceRequirements{
									Requests: corev1.ResourceList{
										corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi"),
									},
									Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")},
								},
								SecurityContext: &corev1.SecurityContext{
									AllowPrivilegeEscalation: ptr.To(false),
									ReadOnlyRootFilesystem:   ptr.To(true),
									RunAsNonRoot:             ptr.To(true),
									Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
									SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
								},
							}},
						},
					},
				},
			}))
		})

		DescribeTable("follows the Echo",
			func(job *batchv1.Job, check func(*batchv1.Job)) { check(job) },
			Entry("namespace and name", BuildJob(newEcho("hello", withEchoNamespace("team-a")), "busybox"), func(job *batchv1.Job) {
				Expect(job.Namespace).To(Equal("team-a"))
				Expect(job.Name).To(Equal("hello-echo"))
				Expect(job.Spec.Template.Labels).To(HaveKeyWithValue("app.kubernetes.io/instance", "hello"))
			}),
			Entry("the message goes in an environment variable, never in the command",
				BuildJob(newEcho("ec", withEchoMessage(`"; rm -rf / #$(id)`)), "busybox"), func(job *batchv1.Job) {
					c := job.Spec.Template.Spec.Containers[0]
					Expect(c.Env).To(Equal([]corev1.EnvVar{{Name: "MESSAGE", Value: `"; rm -rf / #$(id)`}}))
					Expect(c.Command).To(Equal(printCommand))
				}),
			Entry("image", BuildJob(newEcho("ec"), "registry.example/tools/busybox@sha256:abc"), func(job *batchv1.Job) {
				Expect(job.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/tools/busybox@sha256:abc"))
			}),
		)

		It("carries the label the operator's cache selects Jobs by", func() {
			selector := testenv.CacheSelector(&batchv1.Job{})
			Expect(selector).NotTo(BeNil(), "the cache has no entry for Jobs")
			Expect(selector.Matches(labels.Set(BuildJob(newEcho("ec"), "busybox").Labels))).To(BeTrue())
		})
	})

	DescribeTable("jobSpec keeps retries and cleanup, never the pod template",
		func(change func(*batchv1.Job), inSync bool) {
			desired, observed := newJob(), newJob()
			change(observed)
			Expect(jobSpec.InSync(desired, observed)).To(Equal(inSync))
			jobSpec.Merge(desired, observed)
			Expect(jobSpec.InSync(desired, observed)).To(BeTrue())
		},
		Entry("as built", func(*batchv1.Job) {}, true),
		Entry("TTL changed by hand", func(job *batchv1.Job) { job.Spec.TTLSecondsAfterFinished = ptr.To[int32](5) }, false),
		Entry("backoffLimit changed by hand", func(job *batchv1.Job) { job.Spec.BackoffLimit = ptr.To[int32](9) }, false),
		Entry("pod template differs (immutable: left alone)", func(job *batchv1.Job) {
			job.Spec.Template.Spec.Containers[0].Image = "other"
		}, true),
	)

	DescribeTable("jobChanged lets through only what the status is computed from",
		func(change func(*batchv1.Job), want bool) {
			before := newJob()
			after := before.DeepCopy()
			change(after)
			Expect(jobChanged().Update(event.UpdateEvent{ObjectOld: before, ObjectNew: after})).To(Equal(want))
		},
		Entry("nothing", func(*batchv1.Job) {}, false),
		Entry("a ready count", func(job *batchv1.Job) { job.Status.Ready = ptr.To[int32](1) }, false),
		Entry("a pod started", withActive(1), true),
		Entry("succeeded", withSucceeded(), true),
		Entry("failed", withFailed(), true),
		Entry("a spec edit", func(job *batchv1.Job) { job.Generation++ }, true),
		Entry("a label removed", func(job *batchv1.Job) { job.Labels = nil }, true),
	)
})
