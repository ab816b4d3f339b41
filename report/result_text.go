package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/gpusim/gpusim/analysis"

	"github.com/gpusim/gpusim/train"
)

// sparkWidth is the number of columns of a memory sparkline.
const sparkWidth = 60

// WriteResultText writes res as a readable report: a summary table, memory per GPU with a
// sparkline of memory over time, the pool's growth, the median step's breakdown and, when the
// run ran out of memory, TF's error and the head of the allocator's log.
func WriteResultText(w io.Writer, res *analysis.Result) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }

	writeRunHeader(p, res)
	for _, r := range summaryRows(res) {
		p("  %-20s %s\n", r[0], r[1])
	}
	if len(res.Devices) > 0 {
		p("\nMemory per GPU\n")
		writeTable(bw, deviceTable(res))
	}
	writeIntervalBasis(p, res.Intervals)
	for i := range res.Devices {
		if d := &res.Devices[i]; len(d.Timeline) > 0 && !d.Idle {
			writeDeviceMemory(p, res, d)
		}
	}
	writeBreakdownText(p, res)
	writeSpeedText(p, res)

	writeInputText(p, res)
	writeMultiGPUText(p, res)

	writeProcessesText(p, res)
	for _, n := range res.Notes {
		p("\nnote: %s\n", n)
	}
	writeWarnings(p, res)
	writeOOMText(p, res)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write result text: %w", err)
	}
	return nil
}

// secText, pctText and bytesText format a duration, a ratio and a size for the text report.
func secText(v float64) string { return FormatValue(v, UnitSeconds) }

func pctText(v float64) string { return FormatValue(v, UnitRatio) }

func bytesText(v int64) string { return FormatBytes(float64(v)) }

// writeRunHeader writes the scenario, the model on its GPUs and the batch.
func writeRunHeader(p func(string, ...any), res *analysis.Result) {
	p("gpusim run: %s\n", res.Scenario)
	batches := ""
	if res.Replicas > 1 {
		batches = fmt.Sprintf(" (per replica %s)", joinInts(res.ReplicaBatches))
	}
	gpus := res.GPUs
	if res.Replicas > 0 && res.Replicas < gpus {
		gpus = res.Replicas // the default strategy uses the first visible GPU
	}
	p("  %s on %d x %s", res.Model, gpus, res.GPU)
	if res.Replicas > gpus {
		p(" (%d replicas on logical GPUs)", res.Replicas)
	}
	p(", global batch %d%s, %s", res.GlobalBatch, batches, res.Precision)
	if res.AccumulationSteps > 1 {
		p(", %d accumulation steps", res.AccumulationSteps)
	}
	p("\n\n")
}

// summaryRows is the summary table: whether the run fits, the steps, speed (with its
// interval), utilization and, with several replicas, the all-reduce.
func summaryRows(res *analysis.Result) [][2]string {
	status := "fits in memory"
	if res.OOM != nil {
		status = fmt.Sprintf("OUT OF MEMORY at step %d", res.OOM.Step)
		if res.OOM.Step == 0 {
			status = "OUT OF MEMORY before step 1 (" + res.OOM.Op + ")"
		}
	}
	rows := [][2]string{{"result", status}, {"steps completed", stepsText(res)}}
	if len(res.StepTimes) > 0 {
		stepTime, throughput := secText(res.StepTime), FormatValue(res.Throughput, UnitSamplesPerSec)
		if iv := res.Intervals; iv != nil && iv.SpeedBasis != "" {
			stepTime += intervalText(iv.Level, iv.StepTime, UnitSeconds)
			throughput += intervalText(iv.Level, iv.Throughput, UnitSamplesPerSec)
		}
		rows = append(rows,
			[2]string{"step time (median)", stepTime},
			[2]string{"throughput", throughput},
		)
		if r := runThroughputRow(res.Result); r[0] != "" {
			rows = append(rows, r)
		}
	}
	// A run that failed before its first update has no training speed: the kernels it ran
	// until the OOM would read as a busy GPU (99.8% for a second process that OOMs in step 1).
	util, stall := pctText(res.GPUUtilization), pctText(res.InputStallFraction)
	if len(res.StepTimes) == 0 {
		util, stall = "- (no step completed)", "-"
	}
	rows = append(rows, [2]string{"GPU utilization", util},
		[2]string{"input stall", stall})
	if res.Replicas > 1 {
		rows = append(rows, [2]string{"all-reduce (median)", secText(res.AllReduceTime)},
			[2]string{"scaling efficiency", pctText(res.ScalingEfficiency)})
	}
	return append(rows, [2]string{"skipped steps", fmt.Sprint(res.SkippedSteps)})
}

// stepsText is the steps completed of those requested, and how many were fast-forwarded.
func stepsText(res *analysis.Result) string {
	steps := fmt.Sprintf("%d of %d", len(res.StepTimes), res.StepsRequested)
	if res.FastForwarded > 0 {
		how := "identical to the step before"
		if len(res.Replayed) > 0 && len(res.Replayed[0].Window) > 0 {
			// The replicas' jitter: a window of simulated steps replayed in turn.
			how = fmt.Sprintf("replaying a window of %d jittered steps", len(res.Replayed[0].Window))
		}
		steps += fmt.Sprintf(" (%d fast-forwarded: %s)", res.FastForwarded, how)
	}
	return steps
}

// deviceTable is the memory per GPU table, a header row first, each peak with its interval.
func deviceTable(res *analysis.Result) [][]string {
	tab := [][]string{{"device", "card", "allocator", "peak in use", "peak pool", "limit", "busy"}}
	for i, d := range res.Devices {
		busy := pctText(d.BusyFraction)
		if len(res.StepTimes) == 0 {
			busy = "-"
		}
		if d.Idle {
			busy = "idle (no replica)"
		}
		peak := bytesText(d.PeakBytesInUse)
		if iv := res.Intervals; iv != nil && i < len(iv.Peak) && !d.Idle {
			peak += intervalText(iv.Level, iv.Peak[i], UnitBytes)
		}
		tab = append(tab, []string{shortDevice(d.Name), fmt.Sprintf("GPU %d", d.Physical), d.Allocator, peak, bytesText(d.PeakPoolBytes), bytesText(d.BytesLimit), busy})
	}
	return tab
}

// writeDeviceMemory writes d's memory in use over the run as a sparkline, its pool's growth
// and its memory within one step.
func writeDeviceMemory(p func(string, ...any), res *analysis.Result, d *train.Device) {
	top := d.BytesLimit
	if top <= 0 {
		top = d.PeakBytesInUse
	}
	end := d.Timeline[len(d.Timeline)-1].Time
	p("\n  %s memory in use over time (0 .. %s, full height = limit %s)\n", shortDevice(d.Name), secText(end), bytesText(top))
	p("  |%s|\n", sparkline(d.Timeline, top, sparkWidth))
	if len(d.Growth) > 0 {
		writePoolGrowth(p, d)
	}
	if n := len(d.StepProfile); n > 0 {
		var peak int64
		for _, pt := range d.StepProfile {
			peak = max(peak, pt.MaxInUse)
		}
		what := "one step"
		if res.OOM != nil && d.StepProfileStep == res.OOM.Step {
			what = "the failing step"
		}
		p("  %s within %s (step %d, 0 .. %s, full height = its peak %s)\n", shortDevice(d.Name), what, d.StepProfileStep,
			secText(d.StepProfile[n-1].Time), bytesText(peak))
		p("  |%s|\n", sparkline(d.StepProfile, peak, sparkWidth))
	}
}

// writePoolGrowth writes the count of d's region changes and the first 12 of them.
func writePoolGrowth(p func(string, ...any), d *train.Device) {
	p("  pool: %d region change(s)", len(d.Growth)+d.GrowthDropped)
	show := d.Growth
	if len(show) > 12 {
		show = show[:12]
	}
	var parts []string
	for _, g := range show {
		if g.RegionBytes >= 0 {
			parts = append(parts, "+"+bytesText(g.RegionBytes))
		} else {
			parts = append(parts, "-"+bytesText(-g.RegionBytes))
		}
	}
	p(": %s", strings.Join(parts, " "))
	if len(d.Growth) > len(show) || d.GrowthDropped > 0 {
		p(" …")
	}
	p("\n")
}

// writeBreakdownText writes the median step's time by category with a bar each.
func writeBreakdownText(p func(string, ...any), res *analysis.Result) {
	if len(res.Breakdown) == 0 {
		return
	}
	var total float64
	for _, s := range res.Breakdown {
		total += s.Seconds
	}
	p("\nMedian step (%s) by category\n", secText(total))
	for _, s := range res.Breakdown {
		frac := 0.0
		if total > 0 {
			frac = s.Seconds / total
		}
		p("  %-10s %10s %6s  %s\n", s.Category, secText(s.Seconds), pctText(frac), strings.Repeat("█", int(frac*40+0.5)))
	}
}

// writeProcessesText writes nvidia-smi's memory per card and what the other processes hold.
func writeProcessesText(p func(string, ...any), res *analysis.Result) {
	if len(res.Physical) > 0 {
		var parts []string
		for _, g := range res.Physical {
			parts = append(parts, fmt.Sprintf("GPU %d %s / %s", g.Index, bytesText(g.UsedBytes), bytesText(g.TotalBytes)))
		}
		p("\nnvidia-smi memory at the end (all processes): %s\n", strings.Join(parts, ", "))
	}
	for _, pr := range res.Processes {
		if pr.Err != "" {
			p("\nprocess %s: %s\n", pr.Name, pr.Err)
			continue
		}
		p("\nprocess %s %s\n", pr.Name, processHolds(pr.PoolBytes))
	}
}

// writeOOMText writes where the run ran out of memory, TF's message and the head of the
// allocator's log (nothing when it fit).
func writeOOMText(p func(string, ...any), res *analysis.Result) {
	o := res.OOM
	if o == nil {
		return
	}
	if o.Tensor == "" {
		p("\nOut of memory at %s on %s\n", o.Op, o.Device)
	} else {
		p("\nOut of memory at step %d", o.Step)
		if res.AccumulationSteps > 1 && o.MicroStep > 0 {
			p(" (micro-step %d)", o.MicroStep)
		}
		p(", op %s, tensor %s (%s requested), fragmentation %s\n", o.Op, o.Tensor, bytesText(o.Requested), pctText(o.Fragmentation))
	}
	p("  %s\n", o.Message)
	if o.Log != "" {
		lines := strings.Split(strings.TrimRight(o.Log, "\n"), "\n")
		head := lines
		if len(head) > 3 {
			head = head[:3]
		}
		p("  allocator log (%d lines, all in -o json):\n", len(lines))
		for _, l := range head {
			p("    %s\n", l)
		}
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, "/")
}

// writeTable writes rows with columns padded to the widest cell, two spaces apart.
func writeTable(w io.Writer, rows [][]string) {
	widths := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], width(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-width(c)+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// sparkline draws the highest bytes in use of each column's share of the timeline, on eight
// levels of top.
func sparkline(ps []train.MemPoint, top int64, cols int) string {
	const levels = "▁▂▃▄▅▆▇█"
	runes := []rune(levels)
	if len(ps) == 0 || top <= 0 {
		return ""
	}
	if len(ps) < cols {
		cols = len(ps)
	}
	var b strings.Builder
	for c := 0; c < cols; c++ {
		lo, hi := c*len(ps)/cols, (c+1)*len(ps)/cols
		var m int64
		for _, p := range ps[lo:hi] {
			m = max(m, p.MaxInUse)
		}
		l := int(float64(m) / float64(top) * float64(len(runes)))
		if l >= len(runes) {
			l = len(runes) - 1
		}
		if l < 0 {
			l = 0
		}
		if m == 0 {
			b.WriteRune(' ')
			continue
		}
		b.WriteRune(runes[l])
	}
	return b.String()
}

// shortDevice shortens TF's "/job:localhost/replica:0/task:0/device:GPU:0" to "GPU:0".
func shortDevice(tf string) string {
	if _, after, ok := strings.Cut(tf, "/device:"); ok {
		return after
	}
	return tf
}

// processHolds says what another process's pools take: "holds 14.33GiB" for one GPU, "holds
// 30.29GiB on each of its 2 GPUs" when equal, else one figure per GPU it uses, in its order.
func processHolds(pools []int64) string {
	switch len(pools) {
	case 0:
		return "holds no GPU memory"
	case 1:
		return "holds " + FormatBytes(float64(pools[0]))
	}
	parts := make([]string, len(pools))
	same := true
	for i, b := range pools {
		parts[i] = FormatBytes(float64(b))
		same = same && b == pools[0]
	}
	if same {
		return fmt.Sprintf("holds %s on each of its %d GPUs", parts[0], len(pools))
	}
	return fmt.Sprintf("holds %s on its %d GPUs (in the order of its gpus list)", strings.Join(parts, ", "), len(pools))
}

// runThroughputRow is the throughput over the whole run (samples of the completed updates over
// the simulated time) when it differs from the median step's by more than 10%: XLA compiles
// (one per new input shape) or a slow start sit outside the median step, so a run that spends
// 97% of its time compiling still shows the compiled step's throughput. Empty otherwise.
func runThroughputRow(res *train.Result) [2]string {
	n := len(res.StepTimes)
	if n == 0 || res.Elapsed <= 0 || res.Throughput <= 0 {
		return [2]string{}
	}
	whole := float64(n*res.GlobalBatch) / res.Elapsed
	if r := whole / res.Throughput; r > 0.9 && r < 1.1 {
		return [2]string{}
	}
	why := ""
	if res.XLACompiles > 0 {
		why = fmt.Sprintf(", %d XLA compile(s) included", res.XLACompiles)
	}
	return [2]string{"throughput (run)", fmt.Sprintf("%s over the whole %s%s", FormatValue(whole, UnitSamplesPerSec), FormatValue(res.Elapsed, UnitSeconds), why)}
}

// intervalText is " (80%: LOW-HIGH)" for a figure's interval at level.
// The low end drops its unit when the high end's is the same: " (80%: 657.3-757.7 samples/s)".
func intervalText(level float64, iv analysis.Interval, unit string) string {
	lo, hi := FormatValue(iv[0], unit), FormatValue(iv[1], unit)
	num := func(s string) int { return strings.LastIndexAny(s, "0123456789") + 1 }
	if a, b := num(lo), num(hi); lo[a:] == hi[b:] {
		lo = lo[:a]
	}
	return fmt.Sprintf(" (%.0f%%: %s-%s)", 100*level, lo, hi)
}

// writeIntervalBasis says what the intervals rest on.
func writeIntervalBasis(p func(string, ...any), iv *analysis.Intervals) {
	if iv == nil || iv.SpeedBasis == "" {
		return
	}
	p("\n%.0f%% intervals: where the real figure fell for %.0f%% of the shipped validation rows like this run; speed from %s", 100*iv.Level, 100*iv.Level, iv.SpeedBasis)
	if iv.PeakBasis != "" {
		p(", peak memory from %s", iv.PeakBasis)
	}
	p("\n")
}
