package olm

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Processes", Label("unit"), func() {
	It("quotes the log of a process that exited", func() {
		p, err := StartProcess("failing", "/bin/sh", []string{"-c", "echo it went wrong; exit 3"},
			filepath.Join(GinkgoT().TempDir(), "failing.log"), ProcessOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(p.Done()).Should(BeClosed())
		Expect(p.ExitError()).To(MatchError(And(ContainSubstring("failing exited (exit status 3)"), ContainSubstring("it went wrong"))))
		Expect(p.Stop()).To(Succeed(), "stopping an exited process is a no-op")
	})

	It("ends a WhileRunning context when a process exits, with the process as the cause", func() {
		p, err := StartProcess("short", "/bin/sh", []string{"-c", "sleep 0.2"},
			filepath.Join(GinkgoT().TempDir(), "short.log"), ProcessOptions{})
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := WhileRunning(context.Background(), p)
		defer cancel()
		Eventually(ctx.Done()).Should(BeClosed())
		Expect(context.Cause(ctx)).To(MatchError(ContainSubstring("short exited (exit status 0)")))
	})

	It("finds and stops a detached process by pid, only when its command line carries the mark", func() {
		dir := GinkgoT().TempDir()
		mark := filepath.Join(dir, "catalog")
		// "sh -c SCRIPT NAME": NAME is $0, so the mark is on the command line.
		p, err := StartProcess("detached", "/bin/sh", []string{"-c", "sleep 60", mark},
			filepath.Join(dir, "detached.log"), ProcessOptions{Detached: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { _ = p.Stop() })
		Expect(ProcessAlive(p.PID(), mark)).To(BeTrue())
		Expect(ProcessAlive(p.PID(), mark, "something-else")).To(BeFalse())

		// A pid whose command line lacks the mark is not ours: left alone.
		Expect(StopPID(context.Background(), p.PID(), "/not/our/catalog")).To(Succeed())
		Consistently(p.Done()).WithTimeout(200 * time.Millisecond).ShouldNot(BeClosed())

		Expect(StopPID(context.Background(), p.PID(), mark)).To(Succeed())
		Expect(ProcessAlive(p.PID(), mark)).To(BeFalse())
		Eventually(p.Done()).Should(BeClosed())
	})
})
