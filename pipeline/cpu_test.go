package pipeline

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gpusim/gpusim/sim"
)

// mapRate runs procs pipelines of calls map calls each on one CPU of host h, every pipeline
// pulled as fast as it delivers, and returns the elements mapped per second over all of them.
func mapRate(t *testing.T, h Host, procs, calls int) float64 {
	t.Helper()
	return mapRateThreads(t, h, procs, calls, 0)
}

// mapRateThreads is mapRate with each process's calls capped at threads (0: none).
func mapRateThreads(t *testing.T, h Host, procs, calls, threads int) float64 {
	t.Helper()
	e := sim.NewEngine()
	cpu := NewCPU(e, h)
	cfg := small()
	cfg.Records, cfg.Batch, cfg.Host = 4000, 10, h
	cfg.ParallelCalls, cfg.Prefetch, cfg.Threads = Tunable(calls), 4, threads
	cfg.StorageBandwidth, cfg.H2DBandwidth, cfg.PageableBandwidth = 0, 0, 0
	var ps []*Pipeline
	var last sim.Time
	for i := range procs {
		p := NewOn(cpu, cfg, rand.New(rand.NewPCG(uint64(i), 1)))
		ps = append(ps, p)
		var pull func(sim.Time)
		pull = func(ready sim.Time) {
			last = max(last, ready)
			if p.Stats().Batches < 200 {
				p.Get(pull)
			}
		}
		p.Get(pull)
	}
	e.Run(-1)
	var elems int
	for _, p := range ps {
		elems += p.Stats().Elements
	}
	return float64(elems) / last.Seconds()
}

// TestProcessesShareTheHostsCores: pipelines of several processes on one host queue for the
// same cores. One pipeline of 8 calls on 16 cores maps 8 elements per 2 ms; four such
// processes need 32 threads and get the 16 cores: 16 per 2 ms, not 32.
func TestProcessesShareTheHostsCores(t *testing.T) {
	h := Host{Cores: 16, MemoryBytes: 64 << 30}
	for _, tc := range []struct {
		procs int
		want  float64
	}{{1, 8 / 2e-3}, {2, 16 / 2e-3}, {4, 16 / 2e-3}} {
		if got := mapRate(t, h, tc.procs, 8); math.Abs(got/tc.want-1) > 0.02 {
			t.Errorf("%d processes x 8 calls on 16 cores: %.0f elements/s, want %.0f", tc.procs, got, tc.want)
		}
	}
}

// TestSMTSecondThreadAddsTheGain: on 8 cores of 2 threads with SMTGain 0.3, 8 calls run on
// their own cores (8 per 2 ms); 16 calls fill both threads of every core and map only 1.3
// times as much, 10.4 per 2 ms. Without SMT the same 16 threads would map 16.
func TestSMTSecondThreadAddsTheGain(t *testing.T) {
	smt := Host{Cores: 16, ThreadsPerCore: 2, SMTGain: 0.3, MemoryBytes: 64 << 30}
	for _, tc := range []struct {
		name         string
		h            Host
		procs, calls int
		want         float64
	}{
		{"8 calls, one per core", smt, 1, 8, 8 / 2e-3},
		{"16 calls on 8 cores x 2 threads", smt, 2, 8, 8 * 1.3 / 2e-3},
		{"12 calls: 4 cores shared", smt, 2, 6, (4 + 4*1.3) / 2e-3},
		{"16 calls without SMT", Host{Cores: 16, MemoryBytes: 64 << 30}, 2, 8, 16 / 2e-3},
	} {
		if got := mapRate(t, tc.h, tc.procs, tc.calls); math.Abs(got/tc.want-1) > 0.03 {
			t.Errorf("%s: %.0f elements/s, want %.0f", tc.name, got, tc.want)
		}
	}
}

func TestHostThreadsPerCoreIsValidated(t *testing.T) {
	for _, h := range []Host{
		{Cores: 16, ThreadsPerCore: 3, MemoryBytes: 1},
		{Cores: 15, ThreadsPerCore: 2, MemoryBytes: 1},
		{Cores: 16, ThreadsPerCore: 2, SMTGain: 1.5, MemoryBytes: 1},
	} {
		c := small()
		c.Host = h
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(host %+v) = nil, want an error", h)
		}
	}
}

// TestThreadsCapTheProcessesCalls: 16 processes of 10 map calls on a 96-thread host of 48
// cores (a DGX-2's CPUs) whose sessions each have 4 inter-op threads run 64 calls at once, not
// 96: 32 cores with one call and 16 with two, (32 + 16 x 1.3) per 2 ms.
func TestThreadsCapTheProcessesCalls(t *testing.T) {
	h := Host{Cores: 96, ThreadsPerCore: 2, SMTGain: 0.3, MemoryBytes: 1 << 40}
	got := mapRateThreads(t, h, 16, 10, 4)
	if want := (32 + 16*1.3) / 2e-3; math.Abs(got/want-1) > 0.03 {
		t.Errorf("16 x 10 calls on 4 threads each: %.0f elements/s, want %.0f", got, want)
	}
	uncapped := mapRateThreads(t, h, 16, 10, 0)
	if want := 48 * 1.3 / 2e-3; math.Abs(uncapped/want-1) > 0.03 {
		t.Errorf("16 x 10 calls without a cap: %.0f elements/s, want %.0f (every thread busy)", uncapped, want)
	}
}
