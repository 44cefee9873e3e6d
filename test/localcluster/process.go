package localcluster

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/seed1b407122/database-operator/test/child"
)

// startChild starts one of the cluster's components, its output appended to workDir/<name>.log.
func startChild(name, bin string, args []string, workDir string, env []string) (*child.Process, error) {
	return child.Start(name, bin, args, child.Options{LogPath: filepath.Join(workDir, name+".log"), Append: true, Env: env})
}

// StopChildren stops procs in reverse start order and returns the errors of those that had to be
// killed. An exit status is no error here: kube-scheduler and kwok exit 1 on SIGTERM, as they
// always do.
func StopChildren(procs []*child.Process) error {
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].Stop(); errors.Is(err, child.ErrKilled) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WaitWhileRunning polls done every interval, for at most timeout, until it reports true. It
// fails at once, with that process's exit error, as soon as one of procs has exited.
func WaitWhileRunning(ctx context.Context, what string, procs []*child.Process, interval, timeout time.Duration,
	done func(context.Context) (bool, error),
) error {
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		for _, p := range procs {
			if p.Exited() {
				return false, p.ExitError()
			}
		}
		return done(ctx)
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
