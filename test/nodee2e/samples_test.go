//go:build linux && node

package nodee2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	echov1alpha1 "github.com/seed1b407122/database-operator/api/echo/v1alpha1"
	votingv1alpha1 "github.com/seed1b407122/database-operator/api/voting/v1alpha1"
)

// smallSamplesStory: the Echo, ScheduledEcho and VoteConfig samples of config/samples, applied
// as they are, on the node. The operator 0.4.0 that OLM installed names the Echo image by digest (the CSV's
// ECHO_IMAGE, make echo-image-check); that digest is the image built from hack/echo and pushed
// to the node's registry, and the kubelet pulls it by that digest. The ScheduledEcho's schedule
// (every five minutes) is not waited for: a Job made from its CronJob's template, as "kubectl
// create job --from=cronjob/..." makes it, runs what each scheduled run would. The VoteConfig
// sample runs no pod: its ConfigMap is checked key by key.
func smallSamplesStory() {
	var (
		ns        string
		echoImage string
	)

	BeforeAll(func(ctx SpecContext) {
		ns = newNamespace(ctx, "echo")
		echoImage = registryImage("ECHO_IMAGE")
		Expect(operatorEnv(ctx, "ECHO_IMAGE")).To(Equal(echoImage),
			"the operator's ECHO_IMAGE is the digest of the Echo image built from this tree")
	})

	It("runs the Echo sample as it is: its Job prints the message with the Echo image, pulled by digest", func(ctx SpecContext) {
		e := &echov1alpha1.Echo{}
		readSample("echo_v1alpha1_echo.yaml", ns, e)
		began := time.Now()
		Expect(k8s.Create(ctx, e)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(e), e)).To(Succeed())
			g.Expect(e.Status.Phase).To(Equal(echov1alpha1.EchoSucceeded))
		}).WithContext(ctx).Should(Succeed())
		report("Echo sample: create -> Succeeded (its Job's pod pulled and run on the node)", time.Since(began))
		Expect(messagesOf(ctx, ns, e.SelectorLabels())).To(Equal([]string{e.Spec.Message + "\n"}))
		expectPulled(ctx, ns, echoImage)
	}, NodeTimeout(4*time.Minute))

	It("runs the ScheduledEcho sample's CronJob as it is: a Job from its template prints the message", func(ctx SpecContext) {
		se := &echov1alpha1.ScheduledEcho{}
		readSample("echo_v1alpha1_scheduledecho.yaml", ns, se)
		cj := &batchv1.CronJob{}
		createUntilReady(ctx, se, func() []metav1.Condition { return se.Status.Conditions }, se.CronJobName(), cj)
		Expect(cj.Spec.Schedule).To(Equal(se.Spec.Schedule))
		Expect(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image).To(Equal(echoImage))

		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cj.Name + "-manual", Labels: cj.Spec.JobTemplate.Labels},
			Spec:       *cj.Spec.JobTemplate.Spec.DeepCopy(),
		}
		began := time.Now()
		Expect(k8s.Create(ctx, job)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(job), job)).To(Succeed())
			g.Expect(job.Status.Succeeded).To(BeNumerically("==", 1), "Job %s: %+v", job.Name, job.Status)
		}).WithContext(ctx).Should(Succeed())
		report("ScheduledEcho sample: a Job from its CronJob's template, create -> complete (real node)", time.Since(began))
		Expect(messagesOf(ctx, ns, se.SelectorLabels())).To(Equal([]string{se.Spec.Message + "\n"}))
	}, NodeTimeout(4*time.Minute))

	It("keeps the VoteConfig sample's ConfigMap as it is: the options, the title and options.json", func(ctx SpecContext) {
		vc := &votingv1alpha1.VoteConfig{}
		readSample("voting_v1alpha1_voteconfig.yaml", ns, vc)
		cm := &corev1.ConfigMap{}
		createUntilReady(ctx, vc, func() []metav1.Condition { return vc.Status.Conditions }, vc.ConfigMapName(), cm)
		Expect(cm.Data).To(Equal(map[string]string{
			"TITLE":        "Cats or dogs?",
			"OPTION_A":     "Cats",
			"OPTION_B":     "Dogs",
			"options.json": `{"title":"Cats or dogs?","options":[{"id":"A","label":"Cats"},{"id":"B","label":"Dogs"}]}`,
		}))
		Expect(metav1.IsControlledBy(cm, vc)).To(BeTrue())
	}, NodeTimeout(2*time.Minute))
}

// createUntilReady creates obj and waits until its Ready condition (conditions reads them from
// obj) is True and its child of that name, in obj's namespace, exists; child is read into.
func createUntilReady(ctx context.Context, obj client.Object, conditions func() []metav1.Condition, name string, child client.Object) {
	GinkgoHelper()
	Expect(k8s.Create(ctx, obj)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(conditions(), "Ready")).To(BeTrue(), "%s conditions %+v", obj.GetName(), conditions())
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, child)).To(Succeed())
	}).WithContext(ctx).Should(Succeed())
}

// operatorEnv is the value of the environment variable name in the operator's Deployment, as
// OLM made it from the CSV and the Subscription's config.
func operatorEnv(ctx context.Context, name string) string {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: operatorDeployment}, d)).To(Succeed())
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	Fail("the operator's Deployment has no " + name)
	return ""
}

// messagesOf returns the log of each pod of namespace with labels.
func messagesOf(ctx context.Context, namespace string, labels map[string]string) []string {
	GinkgoHelper()
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels(labels))).To(Succeed())
	var logs []string
	for _, p := range pods.Items {
		log, err := clientset.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		Expect(err).NotTo(HaveOccurred(), "log of pod %s", p.Name)
		logs = append(logs, string(log))
	}
	return logs
}
