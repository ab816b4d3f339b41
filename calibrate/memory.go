package calibrate

import (
	"errors"
	"fmt"
	"math"
)

// Mode is an allocator mode read off a memory curve.
type Mode string

// The modes [AnalyzeMemory] tells apart.
const (
	ModePreallocate Mode = "preallocate" // one jump to (most of) the free memory, flat after
	ModeGrowth      Mode = "growth"      // several rising steps (BFC regions that double)
	ModeLimit       Mode = "limit"       // one jump to a cap well below the free memory, flat after
	ModeUnknown     Mode = "unknown"     // the job never took device memory beyond its context
)

// MemoryAnalysis is what a recording says about the job's device memory.
type MemoryAnalysis struct {
	Device int  `json:"device"`
	Mode   Mode `json:"mode"`
	// Reason explains the decision in one sentence.
	Reason string `json:"reason"`
	// ContextBytes is the first level the job held (its CUDA context and runtime), 0 when the
	// first level is already the preallocated pool.
	ContextBytes int64 `json:"context_bytes"`
	// PlateauBytes is the highest level the job held for at least two samples.
	PlateauBytes int64 `json:"plateau_bytes"`
	// FreeAtStartBytes is the device's free memory before the job started.
	FreeAtStartBytes int64 `json:"free_at_start_bytes"`
	// Levels are the job's memory levels in time order (each held for at least two samples).
	Levels []Level `json:"levels"`
}

// Level is a stretch of samples at one memory level; Bytes is the highest of them.
type Level struct {
	StartNS int64 `json:"start_ns"`
	EndNS   int64 `json:"end_ns"`
	Bytes   int64 `json:"bytes"`
}

const (
	// levelTolerance is how far samples may wander and still be one level: NVML charges device
	// memory to a process in 2 MiB pages, and runtimes allocate small buffers (cuBLAS
	// workspaces, event pools) around the big pool.
	levelTolerance = 16 << 20
	// preallocFraction: a single jump that takes at least this share of the free memory is a
	// preallocated pool. TF's default pool is free minus 225-1800 MiB (gpu_device.cc,
	// MinSystemMemory), JAX's 75% of free (XLA_PYTHON_CLIENT_MEM_FRACTION default .75); a limit
	// set by hand is almost always far below either.
	preallocFraction = 0.5
	// minRiseFraction: a rise smaller than this share of the level it starts from is a runtime
	// buffer, not an allocator step.
	minRiseFraction = 0.05
)

// ErrNoMemory says that the trace holds no memory samples for the job.
var ErrNoMemory = errors.New("no memory samples for the job")

// AnalyzeMemory reads the job's memory curve from a trace: on the device where the job's
// processes appear (or the one whose use changed most), the memory of processes that were not
// there before the job started (or, if NVML lists no processes, the device's used memory minus
// the baseline).
func AnalyzeMemory(t *Trace) (MemoryAnalysis, error) {
	dev, series, times := jobMemory(t)
	if len(series) == 0 {
		return MemoryAnalysis{}, ErrNoMemory
	}
	a := MemoryAnalysis{Device: dev}
	for _, b := range t.Baseline {
		if b.Index == dev {
			a.FreeAtStartBytes = int64(b.MemFree)
		}
	}
	a.Levels = levels(series, times)
	if len(a.Levels) == 0 {
		a.Mode, a.Reason = ModeUnknown, "the job never held device memory for two samples"
		return a, nil
	}
	for _, l := range a.Levels {
		a.PlateauBytes = max(a.PlateauBytes, l.Bytes)
	}
	free := float64(a.FreeAtStartBytes)
	big := func(b int64) bool { return free > 0 && float64(b) >= preallocFraction*free }
	first := a.Levels[0]
	if big(first.Bytes) {
		a.Mode = ModePreallocate
		a.Reason = fmt.Sprintf("the first level, %s, is %.0f%% of the %s free at start: the pool was preallocated with the context", mibi(first.Bytes), pct(first.Bytes, free), mibi(a.FreeAtStartBytes))
		return a, nil
	}
	a.ContextBytes = first.Bytes
	// Rises that matter: more than the tolerance and more than 5% of the level they start from.
	// Runtimes allocate small buffers beside the pool (cuBLAS workspaces, compiled executables:
	// +72 MiB on top of JAX's 105 GiB pool on the H200 here); a BFC region is never that small
	// next to the pool it extends, because regions double.
	var rises []int64
	var riseTo []int64
	falls := 0
	for i := 1; i < len(a.Levels); i++ {
		prev, cur := a.Levels[i-1].Bytes, a.Levels[i].Bytes
		switch d := cur - prev; {
		case d > levelTolerance && float64(d) > minRiseFraction*float64(prev):
			rises = append(rises, d)
			riseTo = append(riseTo, cur)
		case -d > levelTolerance && float64(-d) > minRiseFraction*float64(prev) && i < len(a.Levels)-1:
			falls++ // the last fall is the job exiting
		}
	}
	// Preallocation: one rise takes the job to at least half of the free memory, and that rise
	// is (almost) all of the level it reaches above the context. Growth can also reach half of
	// the free memory, but its last region is only about half of the level (regions double).
	for i, d := range rises {
		if big(d) && float64(d) >= 0.9*float64(riseTo[i]-a.ContextBytes) {
			a.Mode = ModePreallocate
			a.Reason = fmt.Sprintf("after a %s context, one jump of %s to %s (%.0f%% of the %s free at start)", mibi(a.ContextBytes), mibi(d), mibi(riseTo[i]), pct(riseTo[i], free), mibi(a.FreeAtStartBytes))
			return a, nil
		}
	}
	fallNote := ""
	if falls > 0 {
		fallNote = fmt.Sprintf("; %d falls while running (memory returned to the driver, which TF's BFC allocator never does)", falls)
	}
	switch {
	case len(rises) == 0:
		a.Mode, a.Reason = ModeUnknown, fmt.Sprintf("memory stayed at the first level, %s", mibi(first.Bytes))
	case len(rises) == 1:
		a.Mode = ModeLimit
		a.Reason = fmt.Sprintf("after a %s context, one jump of %s to a cap of %s (%.0f%% of the %s free at start), flat after%s", mibi(a.ContextBytes), mibi(rises[0]), mibi(riseTo[0]), pct(riseTo[0], free), mibi(a.FreeAtStartBytes), fallNote)
	default:
		growing := 0
		for i := 1; i < len(rises); i++ {
			if rises[i] >= rises[i-1]-levelTolerance {
				growing++
			}
		}
		a.Mode = ModeGrowth
		a.Reason = fmt.Sprintf("after a %s context, %d rising steps (%d of %d no smaller than the one before, as BFC regions double) up to %s%s", mibi(a.ContextBytes), len(rises), growing, len(rises)-1, mibi(a.PlateauBytes), fallNote)
	}
	return a, nil
}

// jobMemory returns the device the job ran on and its memory per sample.
func jobMemory(t *Trace) (int, []int64, []int64) {
	base := map[int]DeviceSample{}
	basePIDs := map[int]map[int]bool{}
	for _, b := range t.Baseline {
		base[b.Index] = b
		basePIDs[b.Index] = map[int]bool{}
		for _, p := range b.Processes {
			basePIDs[b.Index][p.PID] = true
		}
	}
	// Pick the device: the one with new processes holding the most memory, else the one whose
	// used memory rose most.
	type score struct{ procs, used int64 }
	scores := map[int]*score{}
	hasProcs := false
	for _, s := range t.Samples {
		for _, d := range s.Devices {
			sc := scores[d.Index]
			if sc == nil {
				sc = &score{}
				scores[d.Index] = sc
			}
			sc.used = max(sc.used, int64(d.MemUsed)-int64(base[d.Index].MemUsed))
			sc.procs = max(sc.procs, newProcMem(d, basePIDs[d.Index]))
			if len(d.Processes) > 0 {
				hasProcs = true
			}
		}
	}
	dev, best := -1, int64(math.MinInt64)
	for i, sc := range scores {
		v := sc.used
		if hasProcs {
			v = sc.procs
		}
		if v > best || (v == best && i < dev) {
			dev, best = i, v
		}
	}
	if dev < 0 {
		return 0, nil, nil
	}
	var series, times []int64
	for _, s := range t.Samples {
		for _, d := range s.Devices {
			if d.Index != dev {
				continue
			}
			v := int64(d.MemUsed) - int64(base[dev].MemUsed)
			if hasProcs {
				v = newProcMem(d, basePIDs[dev])
			}
			series = append(series, max(v, 0))
			times = append(times, s.TNS)
		}
	}
	return dev, series, times
}

func newProcMem(d DeviceSample, old map[int]bool) int64 {
	var sum int64
	for _, p := range d.Processes {
		if !old[p.PID] {
			sum += int64(p.UsedBytes)
		}
	}
	return sum
}

// levels splits a curve into levels held for at least two samples, ignoring zero (before the
// job touched the GPU and after it exited).
func levels(series, times []int64) []Level {
	var out []Level
	i := 0
	for i < len(series) {
		j := i + 1
		lo, hi := series[i], series[i]
		for j < len(series) {
			nlo, nhi := min(lo, series[j]), max(hi, series[j])
			if nhi-nlo > levelTolerance {
				break
			}
			lo, hi = nlo, nhi
			j++
		}
		if j-i >= 2 && hi > levelTolerance {
			l := Level{StartNS: times[i], EndNS: times[j-1], Bytes: hi}
			if n := len(out); n > 0 && abs64(out[n-1].Bytes-l.Bytes) <= levelTolerance {
				out[n-1].EndNS, out[n-1].Bytes = l.EndNS, max(out[n-1].Bytes, l.Bytes)
			} else {
				out = append(out, l)
			}
		}
		i = j
	}
	return out
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func pct(b int64, of float64) float64 { return 100 * float64(b) / of }

func mibi(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// jaxMemFraction is JAX's default XLA_PYTHON_CLIENT_MEM_FRACTION (.75: the share of the GPU's
// memory its BFC pool preallocates; JAX's "GPU memory allocation" guide), and jaxFractionTol how
// close a recorded pool must come to it to be read as JAX's default. TF's own default pool is
// the free memory minus 225-1800 MiB (gpu_device.cc MinSystemMemory): 98% or more of it on
// cards of 16 GB and up, far from 75%.
const (
	jaxMemFraction = 0.75
	jaxFractionTol = 0.03
)

// AllocatorOverrides are the scenario keys that make the simulator's allocator work as the
// recorded job's did, read off the memory curve: a preallocated pool of 75% of the free memory
// is JAX's default limit (memory.fraction=0.75, which the simulator applies as TF's
// per_process_gpu_memory_fraction of the total: 0.4% above 75% of free on the H200 fixture);
// rising BFC regions are growth (memory.growth=true). A TF-sized pool or an unknown curve gives
// none. The reason says why, for the fit's report.
func AllocatorOverrides(a MemoryAnalysis) (keys []string, reason string) {
	switch a.Mode {
	case ModePreallocate:
		if a.FreeAtStartBytes <= 0 {
			return nil, ""
		}
		f := float64(a.PlateauBytes-a.ContextBytes) / float64(a.FreeAtStartBytes)
		if math.Abs(f-jaxMemFraction) <= jaxFractionTol {
			return []string{fmt.Sprintf("memory.fraction=%g", jaxMemFraction)},
				fmt.Sprintf("pool %.1f%% of the free memory: JAX's default XLA_PYTHON_CLIENT_MEM_FRACTION", 100*f)
		}
	case ModeGrowth:
		return []string{"memory.growth=true"}, "rising BFC regions: growth"
	}
	return nil, ""
}
