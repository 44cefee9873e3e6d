//go:build linux

package realnode

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ContainerPID returns the host PID of a running container's first process. containerID is
// the form a pod's status reports ("containerd://<id>") or the bare id.
func (n *Node) ContainerPID(ctx context.Context, containerID string) (int, error) {
	id := strings.TrimPrefix(containerID, "containerd://")
	out, err := ctr(ctx, n.containerdDir(), "tasks", "list")
	if err != nil {
		return 0, err
	}
	return taskPID(string(out), id)
}

func (n *Node) containerdDir() string { return n.dir + "/containerd" }

// taskPID finds id in the output of "ctr tasks list" (TASK PID STATUS) and returns its PID if
// it runs.
func taskPID(list, id string) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(list))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || fields[0] != id {
			continue
		}
		if fields[2] != "RUNNING" {
			return 0, fmt.Errorf("container %s is %s", id, fields[2])
		}
		pid, err := strconv.Atoi(fields[1])
		if err != nil {
			return 0, fmt.Errorf("container %s: PID %q: %w", id, fields[1], err)
		}
		return pid, nil
	}
	return 0, fmt.Errorf("container %s has no task in containerd", id)
}

// taskCount counts the tasks in the output of "ctr tasks list" (a header, then a task a line).
func taskCount(list string) int {
	n := 0
	for line := range strings.Lines(list) {
		if fields := strings.Fields(line); len(fields) > 0 && fields[0] != "TASK" {
			n++
		}
	}
	return n
}

// ProcessStatus returns the fields of /proc/<pid>/status ("Uid", "CapEff", "NoNewPrivs",
// "Seccomp", ...), each value with its whitespace collapsed to single spaces.
func ProcessStatus(pid int) (map[string]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	return parseProcStatus(string(data)), nil
}

func parseProcStatus(s string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		key, value, ok := strings.Cut(line, ":")
		if ok {
			fields[key] = strings.Join(strings.Fields(value), " ")
		}
	}
	return fields
}
