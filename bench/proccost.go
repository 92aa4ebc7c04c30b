// proccost.go reads what a process under test spent from /proc: its CPU
// time (user and system, all threads) and its read and write system calls.
// Divided by the calls of a window, they are a relay's cost per call. That
// figure does not depend on how the load generator and the other processes
// share the cores, as calls per second do.

package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// clockTicks is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// 100 on every Linux this runs on.
const clockTicks = 100

// procCost is one reading of a process's counters.
type procCost struct {
	cpuTicks uint64 // utime + stime
	syscalls uint64 // syscr + syscw: read and write calls
}

func (a procCost) minus(b procCost) procCost {
	return procCost{cpuTicks: a.cpuTicks - b.cpuTicks, syscalls: a.syscalls - b.syscalls}
}

// readProcCost reads pid's counters; an error where /proc has none.
func readProcCost(pid int) (procCost, error) {
	var c procCost
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return c, err
	}
	// The name in parentheses may hold spaces: count fields after it.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return c, fmt.Errorf("/proc/%d/stat: no name", pid)
	}
	f := bytes.Fields(stat[i+1:])
	// Fields after the name start at 3 (state); utime is 14, stime 15.
	if len(f) < 13 {
		return c, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(string(s), 10, 64)
		if err != nil {
			return c, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		c.cpuTicks += n
	}
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return c, err
	}
	for line := range bytes.Lines(io) {
		name, value, _ := bytes.Cut(bytes.TrimSpace(line), []byte(": "))
		if string(name) == "syscr" || string(name) == "syscw" {
			n, err := strconv.ParseUint(string(value), 10, 64)
			if err != nil {
				return c, fmt.Errorf("/proc/%d/io: %w", pid, err)
			}
			c.syscalls += n
		}
	}
	return c, nil
}
