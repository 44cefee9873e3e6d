package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// UserHZ is the unit of the CPU times in /proc (USER_HZ, 100 on every Linux the project
// supports).
const UserHZ = 100

// Stat is what /proc/PID/stat says of a process that the harness and the benchmark read.
type Stat struct {
	// Name is comm, which the kernel cuts to 15 characters.
	Name string
	// PPID is the parent's pid.
	PPID int
	// CPUSeconds is the user and system time the process used so far.
	CPUSeconds float64
}

// ReadStat reads /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(string(data))
}

// ParseStat reads a /proc/PID/stat line: "pid (comm) state ppid ... utime stime ..." (utime and
// stime are fields 14 and 15; comm may hold spaces and parentheses).
func ParseStat(line string) (Stat, error) {
	open, closing := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return Stat{}, fmt.Errorf("unexpected /proc stat line %q", line)
	}
	fields := strings.Fields(line[closing+1:]) // fields[0] is field 3, the state
	if len(fields) < 13 {
		return Stat{}, fmt.Errorf("unexpected /proc stat line %q", line)
	}
	ppid, err1 := strconv.Atoi(fields[1])
	utime, err2 := strconv.ParseFloat(fields[11], 64)
	stime, err3 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Stat{}, fmt.Errorf("unexpected /proc stat line %q", line)
	}
	return Stat{Name: line[open+1 : closing], PPID: ppid, CPUSeconds: (utime + stime) / UserHZ}, nil
}
