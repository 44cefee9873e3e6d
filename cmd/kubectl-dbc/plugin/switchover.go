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

package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	databasev1alpha1 "github.com/seed1b407122/database-operator/api/database/v1alpha1"
)

// reasonSwitchoverRefused is the reason of the Warning event the operator records when it
// refuses a requested switchover.
const reasonSwitchoverRefused = databasev1alpha1.ReasonSwitchoverRefused

// switchoverPollInterval is how often "switchover --wait" reads the cluster.
const switchoverPollInterval = time.Second

// defaultSwitchoverTimeout is how long "switchover --wait" waits unless --timeout says.
const defaultSwitchoverTimeout = 2 * time.Minute

// switchoverPatch is the merge patch that sets the switchover annotation to to and nothing else.
func switchoverPatch(to string) []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		databasev1alpha1.SwitchoverAnnotation: to,
	}}})
	return data
}

// memberNames are the members of the cluster, in ordinal order: the ones the operator reports
// (status.members) and NAME-<i> for every ordinal below spec.replicas.
func memberNames(dc *databasev1alpha1.DatabaseCluster) []string {
	prefix := dc.StatefulSetName() + "-"
	ordinals := map[int32]bool{}
	for _, ms := range dc.Status.Members {
		if n, ok := ordinalOf(ms.Name, prefix); ok {
			ordinals[n] = true
		}
	}
	if dc.Spec.Replicas != nil {
		for i := range *dc.Spec.Replicas {
			ordinals[i] = true
		}
	}
	sorted := make([]int32, 0, len(ordinals))
	for n := range ordinals {
		sorted = append(sorted, n)
	}
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	names := make([]string, len(sorted))
	for i, n := range sorted {
		names[i] = prefix + strconv.Itoa(int(n))
	}
	return names
}

// checkSwitchover refuses a switchover request the operator could not take: a cluster without
// an engine, a target that is not a member (to empty: any), a switchover already in progress.
func checkSwitchover(dc *databasev1alpha1.DatabaseCluster, to string, now time.Time) error {
	if !dc.HasEngine() {
		return fmt.Errorf("%s has no engine: the operator knows no roles (spec.engine %s)", dc.Name, dc.EngineName())
	}
	if to != "" {
		members := memberNames(dc)
		isMember := false
		for _, m := range members {
			isMember = isMember || m == to
		}
		if !isMember {
			list := strings.Join(members, ", ")
			if list == "" {
				list = "none"
			}
			return fmt.Errorf("%s is not a member of %s (members: %s)", to, dc.Name, list)
		}
	}
	if sw := dc.Status.Switchover; sw != nil {
		return fmt.Errorf("%s has a switchover in progress: %s -> %s (%s, started %s ago); wait for it to finish",
			dc.Name, sw.From, sw.To, sw.Reason, durationText(now.Sub(sw.StartedAt.Time)))
	}
	return nil
}

// durationText is d in whole seconds (time.Duration's format).
func durationText(d time.Duration) string {
	return d.Truncate(time.Second).String()
}

// switchoverCommand sets the switchover annotation and, with --wait, waits for the operator's
// answer.
func (c *cli) switchoverCommand() *cobra.Command {
	var to string
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "switchover NAME [--to MEMBER] [--wait] [--timeout 2m]",
		Short: "Ask the operator to hand the primary role to another member (a cluster with an engine)",
		Long: `Ask the operator to hand the primary role of the DatabaseCluster NAME to the member
MEMBER (NAME-<ordinal>), or without --to to the most advanced healthy replica: the command
sets the annotation ` + databasev1alpha1.SwitchoverAnnotation + ` to MEMBER or
"` + databasev1alpha1.SwitchoverToAny + `" and changes nothing else (a JSON merge patch). The operator removes the
annotation once it has recorded the switchover in status.switchover, found it done already, or
refused it (a Warning event SwitchoverRefused says why).

It refuses a cluster without an engine (spec.engine none), a MEMBER that is not one of the
cluster's (status.members and NAME-0 .. NAME-<spec.replicas - 1>), and a cluster with a
switchover in progress (status.switchover).

--wait waits, up to --timeout, until the annotation is gone and no switchover is in progress,
then prints the primary (status.currentPrimary). It fails when the operator refused the request
(with the event's message), when the primary is not MEMBER, or, without --to, when the primary
did not change.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if wait && timeout <= 0 {
				return fmt.Errorf("--timeout must be positive, not %s", timeout)
			}
			k, dc, err := c.cluster(cmd, args[0])
			if err != nil {
				return err
			}
			if err := checkSwitchover(dc, to, c.Now()); err != nil {
				return err
			}
			value := to
			if value == "" {
				value = databasev1alpha1.SwitchoverToAny
			}
			// The refusals already recorded, read before the request so that only a newer one
			// counts: event times come from the operator's clock, which need not be this one's.
			var seen map[string]time.Time
			if wait {
				if seen, err = refusals(cmd.Context(), k, dc); err != nil {
					return err
				}
			}
			if err := patch(cmd, k, dc, switchoverPatch(value)); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "databasecluster/%s switchover requested (%s: %s)\n",
				dc.Name, databasev1alpha1.SwitchoverAnnotation, value); err != nil {
				return err
			}
			if !wait {
				return nil
			}
			req := switchoverRequest{dc: dc, to: to, before: dc.Status.CurrentPrimary, seen: seen}
			return c.waitSwitchover(cmd, k, req, timeout)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the member to promote, NAME-<ordinal> (default: the most advanced healthy replica)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the operator has finished or refused the switchover, and check the primary")
	cmd.Flags().DurationVar(&timeout, "timeout", defaultSwitchoverTimeout, "how long --wait waits")
	return cmd
}

// switchoverRequest is a request the plugin sent and waits on.
type switchoverRequest struct {
	// dc is the cluster as read before the request.
	dc *databasev1alpha1.DatabaseCluster
	// to is the member asked for, empty for any.
	to string
	// before is the primary before the request.
	before string
	// seen are the refusals recorded before the request (refusals).
	seen map[string]time.Time
}

// refusals are the SwitchoverRefused events regarding dc, by name, with the time each was last
// seen: a repeated refusal is the same event with a later series time.
func refusals(ctx context.Context, k client.Client, dc *databasev1alpha1.DatabaseCluster) (map[string]time.Time, error) {
	events, err := clusterEvents(ctx, k, dc)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for i := range events {
		if events[i].Reason == reasonSwitchoverRefused {
			out[events[i].Name] = eventTime(&events[i])
		}
	}
	return out, nil
}

// newRefusal is the newest SwitchoverRefused event regarding the cluster that was not in
// req.seen or was seen again since, nil when there is none.
func newRefusal(ctx context.Context, k client.Client, req switchoverRequest) (*eventsv1.Event, error) {
	events, err := clusterEvents(ctx, k, req.dc)
	if err != nil {
		return nil, err
	}
	var newest *eventsv1.Event
	for i := range events {
		ev := &events[i]
		if ev.Reason != reasonSwitchoverRefused {
			continue
		}
		if at, ok := req.seen[ev.Name]; ok && !eventTime(ev).After(at) {
			continue
		}
		if newest == nil || eventTime(ev).After(eventTime(newest)) {
			newest = ev
		}
	}
	return newest, nil
}

// waitSwitchover waits for the operator to be done with req (settled), then checks that what
// was asked happened: the operator did not refuse, and the primary is req.to (or, for any,
// another member than before).
func (c *cli) waitSwitchover(cmd *cobra.Command, k client.Client, req switchoverRequest, timeout time.Duration) error {
	dc, err := c.settled(cmd.Context(), k, req, timeout)
	if err != nil {
		return err
	}
	// The verdict is read outside the timeout: the wait itself is over.
	ctx := cmd.Context()
	failure := switchoverFailure(req, dc.Status.CurrentPrimary)
	refused, err := newRefusal(ctx, k, req)
	if err != nil {
		return err
	}
	// The operator records the refusal before it removes the annotation, but events are sent
	// asynchronously: give a failed request's event one more interval to arrive.
	if refused == nil && failure != "" && sleep(ctx, c.interval) == nil {
		if refused, err = newRefusal(ctx, k, req); err != nil {
			return err
		}
	}
	if refused != nil {
		return fmt.Errorf("the operator refused the switchover of %s: %s (the primary is %s)", dc.Name, refused.Note, primaryText(dc.Status.CurrentPrimary))
	}
	if failure != "" {
		return fmt.Errorf("the switchover of %s did not happen: %s", dc.Name, failure)
	}
	primary := dc.Status.CurrentPrimary
	if primary == req.before {
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "databasecluster/%s: %s is the primary (it already was)\n", dc.Name, primary)
	} else {
		_, err = fmt.Fprintf(cmd.OutOrStdout(), "databasecluster/%s switched over: %s is the primary (was %s)\n", dc.Name, primary, primaryText(req.before))
	}
	return err
}

// settled reads the cluster every c.interval, for up to timeout, until the operator has taken
// the request away (the annotation is gone) and no switchover is in progress, and returns it as
// last read.
func (c *cli) settled(parent context.Context, k client.Client, req switchoverRequest, timeout time.Duration) (*databasev1alpha1.DatabaseCluster, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	key := client.ObjectKeyFromObject(req.dc)
	dc := &databasev1alpha1.DatabaseCluster{}
	for {
		err := k.Get(ctx, key, dc)
		if err == nil {
			if _, asked := dc.Annotations[databasev1alpha1.SwitchoverAnnotation]; !asked && dc.Status.Switchover == nil {
				return dc, nil
			}
		} else if ctx.Err() == nil {
			return nil, fmt.Errorf("reading databasecluster %s/%s: %w", key.Namespace, key.Name, err)
		}
		if err := sleep(ctx, c.interval); err != nil {
			if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
				return nil, fmt.Errorf("timed out after %s waiting for the switchover of %s: %s", timeout, key.Name, pending(dc))
			}
			return nil, fmt.Errorf("waiting for the switchover of %s: %w", key.Name, err)
		}
	}
}

// switchoverFailure says why primary, the primary once the operator is done with req, is not
// what req asked for; empty when it is.
func switchoverFailure(req switchoverRequest, primary string) string {
	switch {
	case primary == "":
		return "the operator observes no primary"
	case req.to != "" && primary != req.to:
		return fmt.Sprintf("the primary is %s, not %s", primary, req.to)
	case req.to == "" && primary == req.before:
		return fmt.Sprintf("%s is still the primary", primary)
	}
	return ""
}

// primaryText is primary, or "none".
func primaryText(primary string) string {
	if primary == "" {
		return "none"
	}
	return primary
}

// pending says what a switchover that has not finished waits for, as dc (possibly never read:
// empty) shows.
func pending(dc *databasev1alpha1.DatabaseCluster) string {
	if sw := dc.Status.Switchover; sw != nil {
		return fmt.Sprintf("%s -> %s (%s) is in progress", sw.From, sw.To, sw.Reason)
	}
	if to, ok := dc.Annotations[databasev1alpha1.SwitchoverAnnotation]; ok {
		return fmt.Sprintf("the operator has not taken the request (%s: %s)", databasev1alpha1.SwitchoverAnnotation, to)
	}
	return "the cluster could not be read"
}

// sleep waits for d, or returns ctx's error once ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
