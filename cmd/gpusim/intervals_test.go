package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunIntervals: gpusim run -o json gives each figure a sibling <figure>_interval, the 80%
// interval around it (the simulated figure lies within the range the residuals give, which for
// the shipped table brackets it), and the text prints it after the figure.
func TestRunIntervals(t *testing.T) {
	m := runJSON(t, "run", "--set", "steps=3")
	for _, k := range []string{"step_time_s", "throughput_samples_per_s"} {
		iv, ok := m[k+"_interval"].([]any)
		if !ok || len(iv) != 2 {
			t.Fatalf("%s_interval = %v, want [low, high]", k, m[k+"_interval"])
		}
		lo, hi, v := iv[0].(float64), iv[1].(float64), m[k].(float64)
		if !(lo < v && v < hi) {
			t.Errorf("%s %g: interval [%g, %g], want it around the figure", k, v, lo, hi)
		}
	}
	d := m["devices"].([]any)[0].(map[string]any)
	iv, ok := d["peak_bytes_in_use_interval"].([]any)
	if !ok || len(iv) != 2 || !(iv[0].(float64) < d["peak_bytes_in_use"].(float64) && d["peak_bytes_in_use"].(float64) < iv[1].(float64)) {
		t.Errorf("devices[0] peak %v: interval %v, want [low, high] around it", d["peak_bytes_in_use"], d["peak_bytes_in_use_interval"])
	}
	if b, _ := m["interval_basis"].(string); !strings.Contains(b, "speed rows") {
		t.Errorf("interval_basis = %q, want the residuals named", b)
	}
	out, _, code := runCLI(t, "run", "--set", "steps=3")
	if code != 0 || !strings.Contains(out, "samples/s (80%: ") || !strings.Contains(out, "80% intervals: ") {
		t.Errorf("text: exit %d, no 80%% interval after the throughput:\n%s", code, out)
	}
	// An OOM has no step time to bound.
	m = runJSON(t, append([]string{"run"}, strings.Fields(t4OOM)...)...)
	if _, ok := m["step_time_s_interval"]; ok {
		t.Errorf("OOM run has step_time_s_interval %v", m["step_time_s_interval"])
	}
}

// TestCapacityConfidence: at 90% confidence a count reaches the target only when the 10th
// percentile of its throughput does, so it needs at least as many GPUs as the simulated
// figure alone; the answer says at which confidence.
func TestCapacityConfidence(t *testing.T) {
	type trial struct {
		GPUs       int        `json:"gpus"`
		Throughput float64    `json:"throughput_samples_per_s"`
		Interval   [2]float64 `json:"throughput_samples_per_s_interval"`
		AtConf     float64    `json:"throughput_at_confidence"`
		Reaches    bool       `json:"reaches"`
		ReachConf  float64    `json:"reach_confidence"`
	}
	type report struct {
		GPUs       int     `json:"gpus"`
		Confidence float64 `json:"confidence"`
		Trials     []trial `json:"trials"`
	}
	get := func(extra ...string) report {
		args := append([]string{"capacity", "gpus", "--set", "model=resnet50", "--per-gpu-batch", "64", "--steps", "3", "--throughput", "2000", "--max-gpus", "8", "-o", "json"}, extra...)
		out, stderr, code := allocRun(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain, conf := get(), get("--confidence", "0.9")
	if plain.GPUs == 0 || conf.GPUs < plain.GPUs || conf.Confidence != 0.9 {
		t.Fatalf("GPUs %d plain, %d at confidence %v: want an answer, no fewer at 90%%", plain.GPUs, conf.GPUs, conf.Confidence)
	}
	for _, tr := range conf.Trials {
		if tr.AtConf >= tr.Throughput || tr.Reaches != (tr.AtConf >= 2000) || tr.Interval[0] >= tr.Interval[1] {
			t.Errorf("trial %+v: want the 90%% bound below the figure, reaches iff it passes 2000, an interval", tr)
		}
		// The confidence a count holds at and the answer at a confidence are one
		// distribution read both ways: a count reaches at 90% iff it holds at 90% or more.
		if tr.Reaches != (tr.ReachConf >= 0.9-1e-9) {
			t.Errorf("trial %+v: reaches at 90%% but holds at %.3f", tr, tr.ReachConf)
		}
	}
	// Without --confidence the answer is the simulated one and says what confidence it holds at.
	for _, tr := range plain.Trials {
		if !(tr.ReachConf > 0 && tr.ReachConf < 1) || tr.GPUs == plain.GPUs && tr.ReachConf >= 0.9 && conf.GPUs > plain.GPUs {
			t.Errorf("plain trial %+v: want a confidence in (0, 1), below 90%% where --confidence 0.9 needs more GPUs", tr)
		}
	}
	if text, _, _ := allocRun(t, "capacity", "gpus", "--set", "model=resnet50", "--per-gpu-batch", "64", "--steps", "3", "--throughput", "2000", "--max-gpus", "8"); !strings.Contains(text, "reaches 2000 samples/s with ") {
		t.Errorf("plain text lacks the confidence it holds at:\n%s", text)
	}
	text, _, _ := allocRun(t, "capacity", "gpus", "--set", "model=resnet50", "--per-gpu-batch", "64", "--steps", "3", "--throughput", "2000", "--max-gpus", "8", "--confidence", "0.9")
	if !strings.Contains(text, "at 90% confidence") {
		t.Errorf("text lacks the confidence:\n%s", text)
	}
	if _, stderr, code := allocRun(t, "capacity", "gpus", "--throughput", "1", "--confidence", "90"); code != 2 || !strings.Contains(stderr, "--confidence") {
		t.Errorf("--confidence 90: exit %d, %q; want 2 naming the flag", code, stderr)
	}
}

// TestMaxBatchConfidence: the simulated max batch says the confidence it fits at; at 90% the
// answer is a batch no larger whose peak, raised to the 90th percentile of the peak
// residuals, stays within the limit, while the next multiple's does not.
func TestMaxBatchConfidence(t *testing.T) {
	type trial struct {
		Batch      int     `json:"batch"`
		Fits       bool    `json:"fits"`
		Peak       int64   `json:"peak_bytes_in_use"`
		Limit      int64   `json:"bytes_limit"`
		FitConf    float64 `json:"fit_confidence"`
		PeakAtConf int64   `json:"peak_bytes_at_confidence"`
	}
	type report struct {
		Batch      int     `json:"max_batch"`
		Fit        *trial  `json:"fit"`
		Confidence float64 `json:"confidence"`
		ConfBatch  int     `json:"max_batch_at_confidence"`
		ConfFit    *trial  `json:"fit_at_confidence"`
		Trials     []trial `json:"trials"`
	}
	args := []string{"capacity", "max-batch", "--set", "hardware.gpu=h200", "--set", "memory.growth=true", "--multiple", "16", "--steps", "2", "-o", "json"}
	get := func(extra ...string) report {
		out, stderr, code := allocRun(t, append(args, extra...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain, conf := get(), get("--confidence", "0.9")
	if plain.Fit == nil || !(plain.Fit.FitConf > 0 && plain.Fit.FitConf < 1) || plain.ConfBatch != 0 {
		t.Fatalf("plain: %+v: want a fit with its confidence, no answer at a confidence", plain)
	}
	if conf.Batch != plain.Batch || conf.ConfFit == nil || conf.ConfBatch > conf.Batch || conf.ConfBatch == 0 || conf.Confidence != 0.9 {
		t.Fatalf("at 90%%: max %d (plain %d), at confidence %d: want the same simulated answer and one no larger", conf.Batch, plain.Batch, conf.ConfBatch)
	}
	if c := conf.ConfFit; !(c.PeakAtConf > c.Peak && c.PeakAtConf <= c.Limit && c.FitConf >= 0.9-1e-9) {
		t.Errorf("fit at 90%%: %+v: want its 90%% peak above the simulated one, within the limit, holding at 90%% or more", c)
	}
	for _, tr := range conf.Trials {
		if tr.Batch == conf.ConfBatch+16 && tr.Fits && tr.PeakAtConf <= tr.Limit {
			t.Errorf("batch %d fits at 90%% too (peak %d at 90%%, limit %d): the answer is not the largest", tr.Batch, tr.PeakAtConf, tr.Limit)
		}
	}
	text, _, _ := allocRun(t, append(args[:len(args)-2], "--confidence", "0.9")...)
	if !strings.Contains(text, "at 90% confidence: peak") || !strings.Contains(text, "fits with ") {
		t.Errorf("text lacks the answers at a confidence:\n%s", text)
	}
	if _, stderr, code := allocRun(t, "capacity", "max-batch", "--confidence", "1"); code != 2 || !strings.Contains(stderr, "--confidence") {
		t.Errorf("--confidence 1: exit %d, %q; want 2 naming the flag", code, stderr)
	}
}
