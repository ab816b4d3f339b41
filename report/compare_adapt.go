package report

// The one place that reads a train.Result into report's own Run: the table, plots, trace and
// HTML report depend only on Run.

import (
	"fmt"
	"io"
	"strings"

	"github.com/gpusim/gpusim/analysis"
	"github.com/gpusim/gpusim/sim"
	"github.com/gpusim/gpusim/train"
)

// FromResult converts a training result into a Run labelled label, with the varied keys
// params. Step-time metrics are left out of a run that ran out of memory: TF raised there, so
// the run has no throughput to compare (the table prints OOM); its memory metrics stay.
func FromResult(label string, params []RunParam, res *train.Result) Run {
	return fromResult(label, params, res, res)
}

// FromAnalysis is FromResult with the run's 80% prediction intervals on its step time,
// throughput and peak memory in use (the worst device's, as the metric).
func FromAnalysis(label string, params []RunParam, res *analysis.Result) Run {
	r := FromResult(label, params, res.Result)
	iv := res.Intervals
	if iv == nil {
		return r
	}
	worst := -1
	for i, d := range res.Devices {
		if i < len(iv.Peak) && (worst < 0 || d.PeakBytesInUse > res.Devices[worst].PeakBytesInUse) {
			worst = i
		}
	}
	for i := range r.Metrics {
		m := &r.Metrics[i]
		switch {
		case m.Key == MetricStepTime && iv.SpeedBasis != "":
			m.Interval = &[2]float64{iv.StepTime[0], iv.StepTime[1]}
		case m.Key == MetricThroughput && iv.SpeedBasis != "":
			m.Interval = &[2]float64{iv.Throughput[0], iv.Throughput[1]}
		case m.Key == MetricPeakInUse && worst >= 0 && iv.PeakBasis != "":
			m.Interval = &[2]float64{iv.Peak[worst][0], iv.Peak[worst][1]}
		}
	}
	return r
}

// SpanSource is what a training result implements to put op-level detail into the trace:
// Result.VisitSpans calls fn for each recorded span, in time order. device is the logical GPU
// index (-1 for the host), track one of the Track constants, step the 0-based optimizer update
// (-1 before the first), start and dur in seconds of virtual time. Report defines the interface
// so that train need not import report; FromResult uses it when *train.Result has the method.
type SpanSource interface {
	VisitSpans(fn func(device int, track, name string, step int, start, dur float64))
}

// SeriesSource is what a training result implements to draw the utilization figure:
// VisitUtilization calls fn for each sample of each GPU's busy fraction (0..1) over an
// interval starting at t seconds; VisitInputBuffer for each sample of the batches waiting in
// the tf.data prefetch buffer.
type SeriesSource interface {
	VisitUtilization(fn func(device int, t, busy float64))
	VisitInputBuffer(fn func(t, batches float64))
}

// fromResult is FromResult with the source of the optional spans and series apart, for tests.
func fromResult(label string, params []RunParam, res *train.Result, extra any) Run {
	r := Run{Label: label, Params: params, OOM: res.OOM != nil}
	if res.OOM != nil {
		r.OOMMessage = res.OOM.Message
	}
	if res.OOM == nil && len(res.StepTimes) > 0 {
		r.Metrics = append(r.Metrics,
			RunMetric{Key: MetricStepTime, Name: "step time", Unit: UnitSeconds, Value: res.StepTime},
			RunMetric{Key: MetricThroughput, Name: "throughput", Unit: UnitSamplesPerSec, Value: res.Throughput},
			RunMetric{Key: MetricUtilization, Name: "GPU utilization", Unit: UnitRatio, Value: res.GPUUtilization},
			RunMetric{Key: MetricInputStall, Name: "input stall", Unit: UnitRatio, Value: res.InputStallFraction},
		)
		if res.Replicas > 1 {
			r.Metrics = append(r.Metrics,
				RunMetric{Key: MetricAllReduce, Name: "all-reduce time", Unit: UnitSeconds, Value: res.AllReduceTime},
				RunMetric{Key: "scaling_efficiency", Name: "scaling efficiency", Unit: UnitRatio, Value: res.ScalingEfficiency},
			)
		}
		if res.XLACompiles > 0 && res.Elapsed > 0 {
			// The median step leaves XLA's compiles out: 1 or 8 input shapes give the same step
			// time; the compiles and the whole run's throughput show what recompiling costs.
			r.Metrics = append(r.Metrics,
				RunMetric{Key: "xla_compiles", Name: "XLA compiles", Unit: UnitCount, Value: float64(res.XLACompiles)},
				RunMetric{Key: "run_throughput", Name: "throughput (run)", Unit: UnitSamplesPerSec, Value: float64(len(res.StepTimes)*res.GlobalBatch) / res.Elapsed},
			)
		}
		r.Metrics = append(r.Metrics, RunMetric{Key: MetricSkippedSteps, Name: "skipped steps", Unit: UnitCount, Value: float64(res.SkippedSteps)})
	}
	// Memory metrics are the worst device: the one that decides whether the run fits.
	if len(res.Devices) > 0 {
		var peak, pool int64
		limit := res.Devices[0].BytesLimit
		for _, d := range res.Devices {
			peak, pool = max(peak, d.PeakBytesInUse), max(pool, d.PeakPoolBytes)
			limit = min(limit, d.BytesLimit)
		}
		r.Metrics = append(r.Metrics,
			RunMetric{Key: MetricPeakInUse, Name: "peak memory in use", Unit: UnitBytes, Value: float64(peak)},
			RunMetric{Key: MetricPeakPool, Name: "peak pool", Unit: UnitBytes, Value: float64(pool)},
			RunMetric{Key: MetricBytesLimit, Name: "memory limit", Unit: UnitBytes, Value: float64(limit)},
		)
	}
	for _, s := range res.Breakdown {
		r.Breakdown = append(r.Breakdown, StepShare{Category: s.Category, Seconds: s.Seconds})
	}
	tl := &Timeline{}
	for i, d := range res.Devices {
		m := MemorySeries{Device: deviceName(d.Name), Limit: d.BytesLimit}
		for _, p := range d.Timeline {
			// MaxInUse, not the value at the interval's end: a downsampled plot must keep peaks.
			m.Points = append(m.Points, MemoryPoint{T: p.Time, InUse: p.MaxInUse, Pool: p.PoolBytes})
		}
		if res.OOM != nil && res.OOM.Device == d.Name {
			m.OOMs = append(m.OOMs, res.OOM.Time)
			if w := res.OOM.Wait; w > 0 {
				// BFC's AllocateRawInternalWithRetry waited for frees before it gave up.
				tl.Spans = append(tl.Spans, TraceSpan{Device: i, Track: TrackAllocator, Name: "OOM retry wait", Step: res.OOM.Step - 1,
					Start: sim.FromSeconds(res.OOM.Time - w), Dur: sim.FromSeconds(w), Args: map[string]string{
						"requested_bytes": fmt.Sprint(res.OOM.Requested), "op": res.OOM.Op}})
			}
			tl.Spans = append(tl.Spans, TraceSpan{Device: i, Track: TrackAllocator, Name: "OOM", Step: res.OOM.Step - 1,
				Start: sim.FromSeconds(res.OOM.Time), Args: map[string]string{
					"message": res.OOM.Message, "op": res.OOM.Op, "tensor": res.OOM.Tensor,
					"requested_bytes": fmt.Sprint(res.OOM.Requested), "fragmentation": fmt.Sprintf("%.4f", res.OOM.Fragmentation)}})
		}
		for _, g := range d.Growth {
			tl.Spans = append(tl.Spans, TraceSpan{Device: i, Track: TrackAllocator, Name: "pool " + FormatBytes(float64(g.PoolBytes)),
				Step: g.Step - 1, Start: sim.FromSeconds(g.Time), Args: map[string]string{
					"pool_bytes": fmt.Sprint(g.PoolBytes), "request_bytes": fmt.Sprint(g.Request)}})
		}
		r.Memory = append(r.Memory, m)
	}
	if src, ok := extra.(SpanSource); ok {
		src.VisitSpans(func(device int, track, name string, step int, start, dur float64) {
			tl.Spans = append(tl.Spans, TraceSpan{Device: device, Track: track, Name: name, Step: step,
				Start: sim.FromSeconds(start), Dur: sim.FromSeconds(dur)})
		})
	}
	if src, ok := extra.(SeriesSource); ok {
		src.VisitUtilization(func(device int, t, busy float64) {
			for len(r.Utilization) <= device {
				name := fmt.Sprintf("GPU:%d", len(r.Utilization))
				if len(r.Utilization) < len(r.Memory) {
					name = r.Memory[len(r.Utilization)].Device
				}
				r.Utilization = append(r.Utilization, TimeSeries{Name: name, Unit: UnitRatio})
			}
			u := &r.Utilization[device]
			u.Points = append(u.Points, TimePoint{T: t, V: busy})
		})
		r.InputBuffer = TimeSeries{Name: "prefetch buffer", Unit: UnitBatches}
		src.VisitInputBuffer(func(t, batches float64) {
			r.InputBuffer.Points = append(r.InputBuffer.Points, TimePoint{T: t, V: batches})
		})
	}
	if len(tl.Spans) > 0 {
		r.Timeline = tl
	}
	return r
}

// deviceName shortens TF's "/device:GPU:0" to "GPU:0" for legends and trace rows.
func deviceName(tf string) string {
	if _, after, ok := strings.Cut(tf, "/device:"); ok {
		return after
	}
	return tf
}

// WriteResultPlots writes the figures of one training result into dir (created if missing):
// memory over time per GPU and the step-time breakdown, as PNG and SVG (or only the formats
// named). It is what `gpusim run --plot DIR` calls. It returns the paths written.
func WriteResultPlots(dir string, res *train.Result, formats ...string) ([]string, error) {
	return WritePlots(dir, []Run{FromResult(resultLabel(res), nil, res)}, formats...)
}

// WriteResultTrace writes one training result as Chrome trace event JSON with the default
// bounds. It is what `gpusim run --trace FILE.json` calls.
func WriteResultTrace(w io.Writer, res *train.Result) error {
	r := FromResult(resultLabel(res), nil, res)
	return WriteTrace(w, &r, TraceOptions{})
}

func resultLabel(res *train.Result) string {
	if res.Scenario != "" {
		return res.Scenario
	}
	return "run"
}
