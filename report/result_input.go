package report

// The input pipeline's part of a run's report: tf.data statistics, epochs, the nvidia-smi
// utilization samples and the diagnosis with its re-simulated remedies, in text and JSON.

import (
	"fmt"
	"math"

	"github.com/gpusim/gpusim/analysis"
)

// InputJSON is the tf.data pipeline's statistics (pipeline.Stats).
type InputJSON struct {
	Batches                 int             `json:"batches"`
	BufferEmptyFraction     float64         `json:"buffer_empty_fraction"`
	BufferEmptyTimeFraction float64         `json:"buffer_empty_time_fraction"`
	ConsumerWaitS           float64         `json:"consumer_wait_s"`
	H2DTimeS                float64         `json:"h2d_time_s"`
	MapCPUTimeS             float64         `json:"map_cpu_time_s"`
	WorkerBusyFraction      float64         `json:"worker_busy_fraction"`
	CoreBusyFraction        float64         `json:"core_busy_fraction"`
	Parallelism             int             `json:"map_parallelism"`
	PrefetchLimit           int             `json:"prefetch_buffer"`
	Autotune                []TuneEventJSON `json:"autotune,omitempty"`
	PeakHostBytes           int64           `json:"peak_host_bytes"`
	CacheBytes              int64           `json:"cache_bytes"`
	CacheComplete           bool            `json:"cache_complete"`
	HostOOM                 bool            `json:"host_oom"`
	Notes                   []string        `json:"notes,omitempty"`
}

// TuneEventJSON is one AUTOTUNE decision.
type TuneEventJSON struct {
	TimeS float64 `json:"time_s"`
	Param string  `json:"param"`
	Value int     `json:"value"`
	Why   string  `json:"why"`
}

// EpochJSON is one epoch as the training loop saw it.
type EpochJSON struct {
	Index     int     `json:"epoch"`
	Steps     int     `json:"steps"`
	Seconds   float64 `json:"time_s"`
	StepTimeS float64 `json:"step_time_s"`
	FromCache bool    `json:"from_cache"`
}

// UtilSeriesJSON is one GPU's utilization as nvidia-smi samples it.
type UtilSeriesJSON struct {
	Device  int       `json:"device"`
	PeriodS float64   `json:"period_s"`
	Samples []float64 `json:"samples"`
}

// DiagnosisJSON says what limits the run, why, and what helps most.
type DiagnosisJSON struct {
	Bound string `json:"bound"`
	// UtilizationLabel says which utilization the utilization_* keys are: nvidia-smi's
	// (analysis.UtilizationLabel), not the summary's gpu_utilization.
	UtilizationLabel    string       `json:"utilization_label"`
	UtilizationMean     float64      `json:"utilization_mean"`
	UtilizationStddev   float64      `json:"utilization_stddev"`
	UtilizationMin      float64      `json:"utilization_min"`
	UtilizationMax      float64      `json:"utilization_max"`
	InputShare          float64      `json:"input_share"`
	CommunicationShare  float64      `json:"communication_share"`
	CompileShare        float64      `json:"compile_share"`
	LowUtilization      bool         `json:"low_utilization"`
	Swinging            bool         `json:"swinging"`
	Evidence            []string     `json:"evidence"`
	Remedies            []RemedyJSON `json:"remedies,omitempty"`
	BestChange          string       `json:"best_change,omitempty"`
	BestChangeSetValues []string     `json:"best_change_set,omitempty"`
}

// RemedyJSON is one change re-simulated.
type RemedyJSON struct {
	Change                string   `json:"change"`
	Set                   []string `json:"set"`
	ThroughputSamplesPerS float64  `json:"throughput_samples_per_s"`
	// RunThroughputSamplesPerS is over the whole run (analysis.RunThroughput): what gain and
	// the order compare.
	RunThroughputSamplesPerS float64 `json:"run_throughput_samples_per_s"`
	GPUUtilization           float64 `json:"gpu_utilization"`
	Gain                     float64 `json:"gain"`
	OOM                      bool    `json:"oom"`
}

// inputJSON fills the input pipeline's keys of j.
func inputJSON(j *ResultJSON, res *analysis.Result) {
	if s := res.Input; s != nil {
		in := &InputJSON{Batches: s.Batches, BufferEmptyFraction: finite(s.BufferEmptyFraction),
			BufferEmptyTimeFraction: finite(s.BufferEmptyTimeFraction), ConsumerWaitS: s.ConsumerWait.Seconds(),
			H2DTimeS: s.H2DTime.Seconds(), MapCPUTimeS: s.MapCPUTime.Seconds(), WorkerBusyFraction: finite(s.WorkerBusyFraction),
			CoreBusyFraction: finite(s.CoreBusyFraction), Parallelism: s.Parallelism, PrefetchLimit: s.PrefetchLimit,
			PeakHostBytes: s.PeakHostBytes, CacheBytes: s.CacheBytes, CacheComplete: s.CacheComplete, HostOOM: s.HostOOM, Notes: s.Notes}
		for _, e := range s.Autotune {
			in.Autotune = append(in.Autotune, TuneEventJSON{TimeS: e.T.Seconds(), Param: e.Param, Value: e.Value, Why: e.Why})
		}
		j.Input = in
	}
	for _, e := range res.Epochs {
		j.Epochs = append(j.Epochs, EpochJSON{Index: e.Index, Steps: e.Steps, Seconds: e.Seconds, StepTimeS: e.StepTime, FromCache: e.FromCache})
	}
	for _, u := range res.GPUSeries {
		j.UtilizationSamples = append(j.UtilizationSamples, UtilSeriesJSON{Device: u.Device, PeriodS: u.Period, Samples: u.Samples})
	}
	if d := res.Diagnosis; d != nil {
		dj := &DiagnosisJSON{Bound: string(d.Bound), UtilizationLabel: analysis.UtilizationLabel, CompileShare: finite(d.CompileShare), UtilizationMean: d.Utilization.Mean, UtilizationStddev: d.Utilization.Stddev,
			UtilizationMin: d.Utilization.Min, UtilizationMax: d.Utilization.Max, InputShare: finite(d.InputShare),
			CommunicationShare: finite(d.CommShare), LowUtilization: d.LowUtilization, Swinging: d.Swinging, Evidence: d.Evidence}
		for _, r := range res.Remedies {
			dj.Remedies = append(dj.Remedies, RemedyJSON{Change: r.Name, Set: r.Set, ThroughputSamplesPerS: finite(r.Throughput),
				RunThroughputSamplesPerS: finite(r.RunThroughput), GPUUtilization: finite(r.GPUUtilization), Gain: finite(r.Gain), OOM: r.OOM})
		}
		if b, ok := bestRemedy(res.Remedies); ok {
			dj.BestChange, dj.BestChangeSetValues = b.Name, b.Set
		}
		j.Diagnosis = dj
	}
}

// bestRemedy is the first remedy (they come best first) that ran and improved throughput.
func bestRemedy(rs []analysis.Remedy) (analysis.Remedy, bool) {
	for _, r := range rs {
		if !r.OOM && r.Gain > 0 {
			return r, true
		}
	}
	return analysis.Remedy{}, false
}

// writeInputText writes the pipeline, epochs and diagnosis sections of the text report.
func writeInputText(p func(string, ...any), res *analysis.Result) {
	pct := func(v float64) string { return FormatValue(v, UnitRatio) }
	sec := func(v float64) string { return FormatValue(v, UnitSeconds) }
	if s := res.Input; s != nil {
		par := "sequential"
		if s.Parallelism > 0 {
			par = fmt.Sprintf("%d parallel calls", s.Parallelism)
		}
		p("\nInput pipeline (tf.data)\n")
		p("  map: %s, cores busy %s; prefetch buffer %d batch(es), found empty at %s of requests\n",
			par, pct(s.CoreBusyFraction), s.PrefetchLimit, pct(s.BufferEmptyFraction))
		if s.CacheBytes > 0 || s.CacheComplete {
			done := "filling"
			if s.CacheComplete {
				done = "complete"
			}
			p("  cache: %s, %s\n", FormatBytes(float64(s.CacheBytes)), done)
		}
		for _, n := range s.Notes {
			p("  note: %s\n", n)
		}
	}
	if len(res.Epochs) > 1 || (len(res.Epochs) == 1 && res.Epochs[0].FromCache) {
		p("\nEpochs\n")
		for _, e := range res.Epochs {
			from := ""
			if e.FromCache {
				from = "  from cache"
			}
			p("  epoch %-3d %5d steps  %10s  mean step %s%s\n", e.Index, e.Steps, sec(e.Seconds), sec(e.StepTime), from)
		}
	}
	if u := res.GPUSeries; res.Input != nil && len(u) > 0 && len(u[0].Samples) > 1 {
		// One column per window, so that a starving GPU's swings show; a long run shows its
		// first sparkWidth windows (averaging would flatten the swings into the mean).
		xs, what := u[0].Samples, fmt.Sprintf("%d windows", len(u[0].Samples))
		if len(xs) > sparkWidth {
			xs, what = xs[:sparkWidth], fmt.Sprintf("the first %d of %d windows", sparkWidth, len(xs))
		}
		p("\n  %s utilization as nvidia-smi samples it (%s of %s, 0 .. 100%%)\n", shortDevice(res.Devices[0].Name), what, sec(u[0].Period))
		p("  |%s|\n", utilSparkline(xs, sparkWidth))
	}
	d := res.Diagnosis
	if d == nil {
		return
	}
	p("\nDiagnosis: %s\n", d.Bound)
	for _, e := range d.Evidence {
		p("  - %s\n", e)
	}
	if len(res.Remedies) > 0 {
		p("  re-simulated changes, best first (samples over the whole run's time):\n")
		for _, r := range res.Remedies {
			res := fmt.Sprintf("%s (%+.0f%%), GPU utilization %s", FormatValue(r.RunThroughput, UnitSamplesPerSec), 100*r.Gain, pct(r.GPUUtilization))
			if math.Abs(r.Throughput-r.RunThroughput) > 0.05*r.RunThroughput {
				// Epochs differ (a cache filled in the first): the median step alone misleads.
				res += fmt.Sprintf("; %s at the median step", FormatValue(r.Throughput, UnitSamplesPerSec))
			}
			if r.OOM {
				res = "out of memory"
			}
			p("    %-56s %s\n", r.Name, res)
		}
		if b, ok := bestRemedy(res.Remedies); ok {
			p("  helps most: %s", b.Name)
			for _, s := range b.Set {
				p(" --set %s", s)
			}
			p("\n")
		}
	}
}

// utilSparkline draws a 0..1 series in cols columns (the mean of the samples in each).
func utilSparkline(xs []float64, cols int) string {
	levels := []rune(" ▁▂▃▄▅▆▇█")
	cols = min(cols, len(xs))
	out := make([]rune, cols)
	for c := range cols {
		lo, hi := c*len(xs)/cols, (c+1)*len(xs)/cols
		var m float64
		for _, x := range xs[lo:hi] {
			m += x
		}
		m /= float64(hi - lo)
		out[c] = levels[min(len(levels)-1, max(0, int(m*float64(len(levels)-1)+0.5)))]
	}
	return string(out)
}
