package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// What a load benchmark's requests cost the machine: each side's CPU time
// per request, read from /proc (Linux; elsewhere nothing is reported), and
// the share of the machine left idle meanwhile. The load benchmarks run
// the clients, the lab and the database on the same few cores, so these
// say where a rate's bound is: a side's CPU, or waiting (docs/load.md).

// userHZ is the unit of /proc's CPU times: 100 a second on Linux.
const userHZ = 100

// cpuSides names the processes whose CPU a benchmark reports: the
// children (the lab processes and the no-op server), and the database's
// processes on this machine, found anew at each reading (db, nil for
// none). The benchmark's own process is the clients'.
type cpuSides struct {
	children []*child
	db       func() []int
}

// cpuReading is the machine's and each side's CPU time at one moment, in
// ticks of userHZ; ok is false where /proc cannot be read.
type cpuReading struct {
	ok                         bool
	total, idle                uint64
	clients, servers, database uint64
}

// read takes a reading.
func (s cpuSides) read() cpuReading {
	total, idle, ok := machineTicks()
	if !ok {
		return cpuReading{}
	}
	r := cpuReading{ok: true, total: total, idle: idle, clients: processTicks(os.Getpid())}
	for _, c := range s.children {
		if c != nil && c.cmd.Process != nil {
			r.servers += processTicks(c.cmd.Process.Pid)
		}
	}
	if s.db != nil {
		for _, pid := range s.db() {
			r.database += processTicks(pid)
		}
	}
	return r
}

// report reports, for ops requests between two readings, each side's CPU
// time a request in microseconds (client-cpu-µs, server-cpu-µs, and
// db-cpu-µs when the database's processes were found) and the machine's
// idle share (idle-%).
func (s cpuSides) report(b *testing.B, before, after cpuReading, ops int) {
	if !before.ok || !after.ok || ops <= 0 || after.total <= before.total {
		return
	}
	per := func(x, y uint64) float64 { return float64(y-min(x, y)) * 1e6 / userHZ / float64(ops) }
	b.ReportMetric(per(before.clients, after.clients), "client-cpu-µs")
	b.ReportMetric(per(before.servers, after.servers), "server-cpu-µs")
	if s.db != nil {
		b.ReportMetric(per(before.database, after.database), "db-cpu-µs")
	}
	b.ReportMetric(100*float64(after.idle-before.idle)/float64(after.total-before.total), "idle-%")
}

// machineTicks is /proc/stat's first line: every CPU's time, and the part
// of it idle or waiting for I/O.
func machineTicks() (total, idle uint64, ok bool) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i == 3 || i == 4 {
			idle += n
		}
	}
	return total, idle, true
}

// statFields is a process's /proc/PID/stat after its name (which may hold
// spaces): field 3 of proc(5) first.
func statFields(pid int) []string {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil
	}
	f := bytes.Fields(raw[i+1:])
	out := make([]string, len(f))
	for j, v := range f {
		out[j] = string(v)
	}
	return out
}

// processTicks is a process's CPU time so far, user and system, all its
// threads: 0 once it has gone.
func processTicks(pid int) uint64 {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseUint(f[11], 10, 64) // utime, field 14
	s, _ := strconv.ParseUint(f[12], 10, 64) // stime, field 15
	return u + s
}

// parentOf is a process's parent's id, or 0.
func parentOf(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1]) // ppid, field 4
	return p
}

// serverProcesses returns a reader of the ids of a database server's
// processes on this machine, found from one of its backends: the
// backend's parent and that parent's children. It returns nil when the
// backend is not a process here (a server elsewhere, or in a container).
func serverProcesses(backend int) func() []int {
	root := parentOf(backend)
	if root <= 1 {
		return nil
	}
	return func() []int {
		pids := []int{root}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err == nil && pid != root && parentOf(pid) == root {
				pids = append(pids, pid)
			}
		}
		return pids
	}
}
