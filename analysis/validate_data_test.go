package analysis

import (
	"context"
	"strings"
	"testing"
)

// TestValidateShippedMeasurements runs every measurement under testdata through train.Run, as
// `gpusim validate` does, and holds each group's mean absolute error to a ceiling just above
// what the code gives, so that a change that widens one fails; a change that narrows one
// lowers its ceiling here. Issue 13's stated targets are the DLE 1-GPU MAE <= 10%, XLA on and
// XLA off alike, the AMP/TF32 and XLA on/off ratios <= 10% and leave-one-GPU-out <= 15%; the
// XLA-on group's ceiling is that 10% (its largest misses: the 2019 epoch-averaged SQuAD AMP
// tables, the 20.06 SQuAD FP32 batch-10 rows and the pre-training rows that ran grappler's
// swapping, testdata/dle/README.md).
// The DLE rows are real TensorFlow on DGX-1/DGX-2/DGX A100 (testdata/dle); no cost-model
// constant is fitted on them. The h200-keras rows are real Keras 3 model.fit on the H200
// (testdata/h200/keras): the first recording measured no host speed, so its three host-fed
// ResNet-50 half-precision rows at batch 128-256 (-16% to -20%) are rows of a host slow at the
// time (its sequence run again with the host's counters, testdata/h200/keras/seq, showed no
// page-fault or huge-page mechanism and a VM whose CPU speed moves by itself); the later
// recordings run on the gather rate fit itself measured. The host-fed ceilings hold that VM's
// noise too: testdata/h200/keras/rep ran ResNet-50 batch 64 in three precisions three times
// over on one machine, and one config's host-fed step moved by up to 1.44x between rounds
// minutes apart (bfloat16: 34.2, 23.7, 30.3 ms), the host work beyond the gather from 7.1 to
// 14.5 ms. h200-jax and h200-pytorch are proxies
// (pure-JAX steps; PyTorch eager, whose host time and op inventory gpusim does not model).
func TestValidateShippedMeasurements(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every shipped measurement (seconds)")
	}
	ms, err := ReadMeasurements("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	v, err := Validate(context.Background(), ms, ValidateOptions{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set, by, key string
		minN         int
		ceiling      float64
	}{
		{"dle 1-GPU", "all", "", 106, 0.095},
		{"dle 1-GPU", "xla", "off", 29, 0.08},
		{"dle 1-GPU", "xla", "on", 77, 0.10},
		{"dle 1-GPU", "model", "resnet50-v1.5", 12, 0.09},
		{"dle 1-GPU", "model", "bert-large:seq=384", 47, 0.12},
		{"dle 1-GPU", "model", "bert-large:seq=128,head=mlm", 23, 0.075},
		{"dle 1-GPU", "model", "bert-large:seq=512,head=mlm", 24, 0.095},
		{"dle 1-GPU", "ratio", "amp/fp32", 12, 0.125},
		{"dle 1-GPU", "ratio", "amp/tf32", 7, 0.085},
		{"dle 1-GPU", "ratio", "xla on/off", 2, 0.09},
		{"dle 1-GPU", "leave-one-gpu-out", "mean of folds", 5, 0.10},
		{"dle multi-GPU", "all", "", 226, 0.135},
		{"dle multi-GPU", "model", "bert-large:seq=384", 106, 0.21},
		{"dle multi-GPU", "model", "resnet50-v1.5", 12, 0.06},
		{SourceKeras + " device-fed", "all", "", 50, 0.03},
		{SourceKeras + " host-fed", "all", "", 50, 0.065},
		{SourceKeras + " host-fed", "precision", "float32", 19, 0.04},
		{SourceJAX, "all", "", 3, 0.155},
		{SourcePyTorch, "all", "", 34, 0.365},
	} {
		g, ok := v.Group(c.set, c.by, c.key)
		if !ok {
			t.Errorf("%s %s %s: no such group", c.set, c.by, c.key)
			continue
		}
		t.Logf("%s %s %s: n %d, MAE %.1f%%, bias %+.1f%%, max %.1f%%", c.set, c.by, c.key, g.N, 100*g.MAE, 100*g.Bias, 100*g.Max)
		if g.N < c.minN {
			t.Errorf("%s %s %s: %d rows, want at least %d", c.set, c.by, c.key, g.N, c.minN)
		}
		if g.Failed > 0 {
			t.Errorf("%s %s %s: %d runs predicted OOM or rejected", c.set, c.by, c.key, g.Failed)
		}
		if g.MAE > c.ceiling {
			t.Errorf("%s %s %s: MAE %.1f%%, want <= %.1f%%", c.set, c.by, c.key, 100*g.MAE, 100*c.ceiling)
		}
	}
}

// TestKerasMeasuredHost: the later Keras recordings (testdata/h200/keras/host, repeat, split
// and seq) timed fit's gather of each batch during the run, and validate simulates their rows
// on the host that gather measured; the first recording (steps.csv), which measured no host,
// runs on the H200 machine's default. A config that seq ran a second time is its own version,
// so that a ratio pairs it with the float32 twin of its own round only.
func TestKerasMeasuredHost(t *testing.T) {
	ms, err := ReadMeasurements("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]int{}
	for _, m := range ms {
		if m.Source != SourceKeras {
			continue
		}
		cfg := m.Config(5)
		if cfg.HostGatherRate != m.HostGatherRate {
			t.Errorf("%s: Config HostGatherRate %g, want the measurement's %g", m.Ref, cfg.HostGatherRate, m.HostGatherRate)
		}
		if strings.Contains(m.Ref, "keras/steps.csv") {
			if m.HostGatherRate != 0 {
				t.Errorf("%s: HostGatherRate %g, want 0 (no host measured in that recording)", m.Ref, m.HostGatherRate)
			}
			continue
		}
		measured[m.Version]++
		// gather_ms 8.6-62 ms for 38-154 MB batches: 2.3-4.5 GB/s.
		if m.HostGatherRate < 2.3e9 || m.HostGatherRate > 4.5e9 {
			t.Errorf("%s: HostGatherRate %.3g B/s, want fit's measured 2.3e9-4.5e9", m.Ref, m.HostGatherRate)
		}
	}
	// host and repeat: 4 configs each; split: 9; seq: the first recording's 9 and 2 of them
	// again; rep: 3 configs in 3 rounds; each config device- and host-fed.
	for v, n := range map[string]int{SourceKeras + " host": 8, SourceKeras + " repeat": 8, SourceKeras + " split": 18,
		SourceKeras + " seq": 18, SourceKeras + " seq round 2": 4,
		SourceKeras + " rep": 6, SourceKeras + " rep round 2": 6, SourceKeras + " rep round 3": 6} {
		if measured[v] != n {
			t.Errorf("%s: %d rows on a measured host, want %d", v, measured[v], n)
		}
	}
}

// TestDLEPretrainingAccumulation holds how the DLE pre-training rows run the LAMB update
// (testdata/dle/README.md): every step for the TF 19.06 and 19.08 tables (8749cf39, 58a3ed6b;
// the 19.08 tables say so, the 19.06 ones repeat their script, batches and figures), every 16
// micro-batches for the 2020-2023 tables, which state thousands.
func TestDLEPretrainingAccumulation(t *testing.T) {
	ms := shippedDLE(t)
	want := map[string]int{"8749cf39": 1, "58a3ed6b": 1, "9de48bc9": 16, "7ee81a16": 16}
	seen := map[string]int{}
	for _, m := range ms {
		if !strings.Contains(m.Model, "head=mlm") {
			continue
		}
		commit := ""
		for c := range want {
			if strings.Contains(m.Ref, "@"+c+",") {
				commit = c
			}
		}
		if commit == "" {
			t.Errorf("%s: pre-training row of an unexpected README version", m.Ref)
			continue
		}
		seen[commit]++
		if m.Accumulation != want[commit] {
			t.Errorf("%s: accumulation %d, want %d", m.Ref, m.Accumulation, want[commit])
		}
	}
	for c := range want {
		if seen[c] == 0 {
			t.Errorf("no pre-training row from %s", c)
		}
	}
}
