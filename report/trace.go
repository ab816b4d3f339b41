package report

// Chrome trace event export (the JSON that chrome://tracing, Perfetto and about://tracing open).
// Format: "Trace Event Format", Google, https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
// (ph "X" complete events with ts/dur in microseconds, "C" counters, "i" instants, "M" metadata).

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/gpusim/gpusim/sim"
)

// Tracks of a TraceSpan: one row (thread) per GPU in the trace viewer.
const (
	TrackCompute   = "compute"    // forward, backward and optimizer ops
	TrackAllReduce = "all-reduce" // NCCL collectives
	TrackInput     = "input"      // the step waiting for the input pipeline
	TrackAllocator = "allocator"  // allocator OOM retries and failures
	TrackStep      = "step"       // whole steps (written for steps whose ops are left out)
)

// trackTID is the thread id of each track, so rows appear in this order under each GPU.
var trackTID = map[string]int{TrackStep: 1, TrackCompute: 2, TrackAllReduce: 3, TrackInput: 4, TrackAllocator: 5}

// Timeline is what a run recorded for the Chrome trace: spans of time on each GPU. Memory,
// utilization and input-buffer counters come from the Run's series.
type Timeline struct {
	Spans []TraceSpan
}

// TraceSpan is one interval on one GPU's track. A span with Dur 0 is written as an instant
// (an allocator OOM with no wait, say).
type TraceSpan struct {
	Device int    // GPU index (TF's logical GPU number); -1 for the host
	Track  string // one of the Track constants; others get their own rows after them
	Name   string // op name ("conv2d_3/Conv2D"), "all-reduce 97.5MiB", "input wait", "OOM retry"
	// Step is the 0-based training step the span belongs to; -1 for work outside the steps
	// (startup, weight allocation).
	Step  int
	Start sim.Time
	Dur   sim.Time
	// Args are shown in the viewer's detail pane (bytes, FLOPs, the OOM message).
	Args map[string]string
}

// TraceOptions bound the size of a trace. The zero value means the defaults.
type TraceOptions struct {
	// DetailSteps is how many steps keep every span, counted from the first step; the last
	// step and every step with an allocator event are kept too. Other steps are written as one
	// "step N" span per GPU. Default 5.
	DetailSteps int
	// MaxEvents caps the spans written (about 150 bytes each); when the whole-step spans of
	// the other steps would pass it, every k-th step is written. Default 200,000 (~30 MB).
	MaxEvents int
	// MaxCounterPoints caps the points written per counter series; samples are merged into
	// buckets keeping each bucket's maximum, so peaks survive. Default 2,000.
	MaxCounterPoints int
}

func (o TraceOptions) withDefaults() TraceOptions {
	if o.DetailSteps <= 0 {
		o.DetailSteps = 5
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = 200_000
	}
	if o.MaxCounterPoints <= 0 {
		o.MaxCounterPoints = 2000
	}
	return o
}

// traceEvent is one JSON object of the traceEvents array.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	sort [3]int64       // ordering key, not written
}

// micros converts virtual nanoseconds to the trace's microseconds.
func micros(t sim.Time) float64 { return float64(t) / 1e3 }

// pid is the trace process of a device: the host is 0, GPU i is i+1.
func pid(device int) int {
	if device < 0 {
		return 0
	}
	return device + 1
}

// WriteTrace writes r as a Chrome trace event JSON object: one process per GPU (and one for the
// host), one thread per track (steps, compute, all-reduce, input waits, allocator), and counters
// for memory in use, pool and limit, utilization and the input buffer. The output is bounded by
// opts whatever the run's length: a 1,000-step run stays in the megabytes.
func WriteTrace(w io.Writer, r *Run, opts TraceOptions) error {
	opts = opts.withDefaults()
	bw := bufio.NewWriter(w)
	first := true
	// One event per line keeps the file greppable and diffable.
	emit := func(ev traceEvent) error {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		_, err = bw.Write(b)
		return err
	}
	if _, err := bw.WriteString(`{"displayTimeUnit":"ms","otherData":{"generator":"gpusim","run":` + strconv.Quote(r.Label) + "},\n\"traceEvents\":[\n"); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	for _, ev := range traceMetadata(r) {
		if err := emit(ev); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	if r.Timeline != nil {
		for _, ev := range spanEvents(r.Timeline.Spans, opts) {
			if err := emit(ev); err != nil {
				return fmt.Errorf("write trace: %w", err)
			}
		}
	}
	for _, ev := range counterEvents(r, opts.MaxCounterPoints) {
		if err := emit(ev); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	if _, err := bw.WriteString("\n]}\n"); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

// traceMetadata names the processes and threads so the viewer shows "GPU:0 / compute".
func traceMetadata(r *Run) []traceEvent {
	devices := map[int]string{}
	tracks := map[[2]int]string{}
	for i, m := range r.Memory {
		devices[i] = m.Device
	}
	for i := range r.Utilization {
		if _, ok := devices[i]; !ok {
			devices[i] = fmt.Sprintf("GPU:%d", i)
		}
	}
	extra := map[string]int{}
	if r.Timeline != nil {
		for _, s := range r.Timeline.Spans {
			if _, ok := devices[s.Device]; !ok {
				devices[s.Device] = fmt.Sprintf("GPU:%d", s.Device)
				if s.Device < 0 {
					devices[s.Device] = "host"
				}
			}
			tid := trackID(s.Track, extra)
			tracks[[2]int{pid(s.Device), tid}] = s.Track
		}
	}
	if len(r.InputBuffer.Points) > 0 {
		devices[-1] = "host"
	}
	var evs []traceEvent
	ids := make([]int, 0, len(devices))
	for d := range devices {
		ids = append(ids, d)
	}
	slices.Sort(ids)
	for _, d := range ids {
		name := devices[d]
		if d < 0 {
			name = "host"
		}
		evs = append(evs,
			traceEvent{Name: "process_name", Ph: "M", PID: pid(d), Args: map[string]any{"name": name}},
			traceEvent{Name: "process_sort_index", Ph: "M", PID: pid(d), Args: map[string]any{"sort_index": pid(d)}})
	}
	keys := make([][2]int, 0, len(tracks))
	for k := range tracks {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, k := range keys {
		evs = append(evs,
			traceEvent{Name: "thread_name", Ph: "M", PID: k[0], TID: k[1], Args: map[string]any{"name": tracks[k]}},
			traceEvent{Name: "thread_sort_index", Ph: "M", PID: k[0], TID: k[1], Args: map[string]any{"sort_index": k[1]}})
	}
	return evs
}

// trackID is the thread id of a track; unknown tracks get ids after the known ones, in the
// order first seen.
func trackID(track string, extra map[string]int) int {
	if id, ok := trackTID[track]; ok {
		return id
	}
	if id, ok := extra[track]; ok {
		return id
	}
	id := len(trackTID) + 1 + len(extra)
	extra[track] = id
	return id
}

// spanEvents selects and converts spans: every span of the detailed steps, startup work and
// allocator events; one whole-step span per GPU for the other steps, thinned to the budget.
func spanEvents(spans []TraceSpan, o TraceOptions) []traceEvent {
	kept, extent := splitDetail(spans, o.DetailSteps)
	if len(kept) > o.MaxEvents {
		// Too many even in detail (a huge model): keep allocator events, then the earliest spans.
		slices.SortStableFunc(kept, func(a, b TraceSpan) int {
			return cmp.Or(-cmp.Compare(boolInt(a.Track == TrackAllocator), boolInt(b.Track == TrackAllocator)), cmp.Compare(a.Start, b.Start))
		})
		kept = kept[:o.MaxEvents]
	}
	summary := make([]stepKey, 0, len(extent))
	for k := range extent {
		summary = append(summary, k)
	}
	slices.SortFunc(summary, func(a, b stepKey) int { return cmp.Or(cmp.Compare(a.step, b.step), cmp.Compare(a.dev, b.dev)) })
	if room := o.MaxEvents - len(kept); len(summary) > room {
		summary = thinSteps(summary, room)
	}
	extra := map[string]int{}
	evs := make([]traceEvent, 0, len(kept)+len(summary))
	for _, s := range kept {
		evs = append(evs, spanEvent(s, extra))
	}
	for _, k := range summary {
		e := extent[k]
		d := micros(e[1] - e[0])
		evs = append(evs, traceEvent{Name: "step " + strconv.Itoa(k.step), Cat: TrackStep, Ph: "X", Ts: micros(e[0]), Dur: &d,
			PID: pid(k.dev), TID: trackTID[TrackStep], Args: map[string]any{"step": k.step, "detail": "ops left out to bound the trace size"},
			sort: [3]int64{int64(e[0]), int64(pid(k.dev)), int64(trackTID[TrackStep])}})
	}
	// Viewers do not need sorted events, but sorted output is deterministic and diffable.
	slices.SortStableFunc(evs, func(a, b traceEvent) int {
		return cmp.Or(cmp.Compare(a.sort[0], b.sort[0]), cmp.Compare(a.sort[1], b.sort[1]), cmp.Compare(a.sort[2], b.sort[2]))
	})
	return evs
}

// stepKey is one GPU's step.
type stepKey struct{ dev, step int }

// splitDetail keeps every span of the detailed steps (the first detailSteps, the last, and any
// with allocator events) and sums the others into whole-step extents per GPU and step.
func splitDetail(spans []TraceSpan, detailSteps int) (kept []TraceSpan, extent map[stepKey][2]sim.Time) {
	lastStep := -1
	allocSteps := map[int]bool{}
	for _, s := range spans {
		lastStep = max(lastStep, s.Step)
		if s.Track == TrackAllocator {
			allocSteps[s.Step] = true
		}
	}
	extent = map[stepKey][2]sim.Time{}
	for _, s := range spans {
		if s.Step < detailSteps || s.Step == lastStep || allocSteps[s.Step] {
			kept = append(kept, s)
			continue
		}
		k := stepKey{s.Device, s.Step}
		e, ok := extent[k]
		end := s.Start + s.Dur
		if !ok {
			e = [2]sim.Time{s.Start, end}
		}
		e[0], e[1] = min(e[0], s.Start), max(e[1], end)
		extent[k] = e
	}
	return kept, extent
}

// thinSteps keeps every stride-th step of the sorted summary, all of its GPUs, so that at
// most about room are left.
func thinSteps(summary []stepKey, room int) []stepKey {
	steps := 0
	for i, k := range summary {
		if i == 0 || k.step != summary[i-1].step {
			steps++
		}
	}
	perStep := (len(summary) + steps - 1) / steps
	stride := 1
	if room > 0 {
		stride = (steps*perStep + room - 1) / room
	}
	thinned := summary[:0]
	idx := -1
	for i, k := range summary {
		if i == 0 || k.step != summary[i-1].step {
			idx++
		}
		if room > 0 && idx%stride == 0 {
			thinned = append(thinned, k)
		}
	}
	return thinned
}

// spanEvent is the trace event of one span: a complete event, or an instant one for a span
// without duration, with the span's args and step.
func spanEvent(s TraceSpan, extra map[string]int) traceEvent {
	ev := traceEvent{Name: s.Name, Cat: s.Track, Ts: micros(s.Start), PID: pid(s.Device), TID: trackID(s.Track, extra)}
	if s.Dur > 0 {
		d := micros(s.Dur)
		ev.Ph, ev.Dur = "X", &d
	} else {
		ev.Ph, ev.S = "i", "t"
	}
	if len(s.Args) > 0 || s.Step >= 0 {
		ev.Args = map[string]any{}
		for k, v := range s.Args {
			ev.Args[k] = v
		}
		if s.Step >= 0 {
			ev.Args["step"] = s.Step
		}
	}
	ev.sort = [3]int64{int64(s.Start), int64(ev.PID), int64(ev.TID)}
	return ev
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// counterEvents writes the memory, utilization and input-buffer series as "C" events, at most
// maxPoints per series.
func counterEvents(r *Run, maxPoints int) []traceEvent {
	var evs []traceEvent
	for i, m := range r.Memory {
		pts := make([]counterPoint, len(m.Points))
		for j, p := range m.Points {
			pts[j] = counterPoint{p.T, []float64{float64(p.InUse), float64(p.Pool)}}
		}
		for _, p := range bucketMax(pts, maxPoints) {
			evs = append(evs, traceEvent{Name: "memory " + m.Device, Ph: "C", Ts: p.t * 1e6, PID: pid(i),
				Args: map[string]any{"in_use_bytes": p.v[0], "pool_bytes": p.v[1], "limit_bytes": m.Limit}})
		}
		for _, t := range m.OOMs {
			evs = append(evs, traceEvent{Name: "OOM", Cat: TrackAllocator, Ph: "i", S: "p", Ts: t * 1e6, PID: pid(i), TID: trackTID[TrackAllocator]})
		}
	}
	for i, u := range r.Utilization {
		for _, p := range bucketMax(timePoints(u.Points), maxPoints) {
			evs = append(evs, traceEvent{Name: "utilization " + u.Name, Ph: "C", Ts: p.t * 1e6, PID: pid(i),
				Args: map[string]any{"busy_percent": p.v[0] * 100}})
		}
	}
	for _, p := range bucketMax(timePoints(r.InputBuffer.Points), maxPoints) {
		evs = append(evs, traceEvent{Name: "input buffer", Ph: "C", Ts: p.t * 1e6, PID: pid(-1),
			Args: map[string]any{"batches": p.v[0]}})
	}
	return evs
}

type counterPoint struct {
	t float64
	v []float64
}

func timePoints(ps []TimePoint) []counterPoint {
	out := make([]counterPoint, len(ps))
	for i, p := range ps {
		out[i] = counterPoint{p.T, []float64{p.V}}
	}
	return out
}

// bucketMax merges consecutive points into at most n buckets; each bucket is written at its
// first time with the element-wise maximum of its values, so a peak is never lost.
func bucketMax(ps []counterPoint, n int) []counterPoint {
	if len(ps) <= n {
		return ps
	}
	size := (len(ps) + n - 1) / n
	out := make([]counterPoint, 0, n)
	for i := 0; i < len(ps); i += size {
		b := counterPoint{ps[i].t, slices.Clone(ps[i].v)}
		for _, p := range ps[i+1 : min(i+size, len(ps))] {
			for k := range b.v {
				b.v[k] = max(b.v[k], p.v[k])
			}
		}
		out = append(out, b)
	}
	return out
}
