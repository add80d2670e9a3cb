package pgcount

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// CPU is the machine's CPU time so far, from /proc/stat: Busy (user, nice,
// system, irq and softirq of every core) and Steal (time a hypervisor gave
// to others). Over a drain, Busy per job is what both processes (the
// system under test and PostgreSQL) spent on each job. On a machine whose
// speed changes with its neighbours it moves too, but less than the rate,
// and it says whether a system is slower because it waits or because it
// works. Everything else running on the machine counts as well, so it is
// read on a quiet machine. Zero where /proc/stat cannot be read.
type CPU struct{ Busy, Steal time.Duration }

// MachineCPU reads CPU now.
func MachineCPU() CPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPU{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return CPU{}
	}
	var v [8]int64 // user nice system idle iowait irq softirq steal
	for i := range v {
		if v[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return CPU{}
		}
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return CPU{Busy: time.Duration(v[0]+v[1]+v[2]+v[5]+v[6]) * tick, Steal: time.Duration(v[7]) * tick}
}

// Since is the CPU time spent from c0 to c.
func (c CPU) Since(c0 CPU) CPU { return CPU{Busy: c.Busy - c0.Busy, Steal: c.Steal - c0.Steal} }
