package validate

import (
	"strconv"
	"strings"
	"testing"
)

// commitOf is the README commit a DLE row's provenance names ("...README.md@415a9aa3, ...").
func commitOf(m Measurement) string {
	_, rest, _ := strings.Cut(m.Version, "@")
	c, _, _ := strings.Cut(rest, ",")
	return c
}

// TestDLERunsAsNVIDIARan: a DLE row's scenario is NVIDIA's setup: the table's box, one
// Horovod process per GPU on several GPUs, float16 all-reduce for BERT under AMP only (and
// not for the two early tables whose optimization.py passes Compression.none), and the
// default strategy on one GPU.
func TestDLERunsAsNVIDIARan(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range shippedDLE(t) {
		c := m.Config
		wantStrategy, wantComp := "default", ""
		if m.GPUs() > 1 {
			wantStrategy = "horovod"
			bertAMP := strings.HasPrefix(m.Model(), "bert") && m.Precision() == "mixed_float16"
			early := commitOf(m) == "ec9eaf73" || commitOf(m) == "fb55bd24"
			if bertAMP && !early {
				wantComp = "fp16"
			}
			if bertAMP && early {
				seen["horovod/bert-amp-uncompressed"] = true
			}
		}
		if c.Strategy != wantStrategy || c.HorovodCompression != wantComp {
			t.Errorf("%s: strategy %q, compression %q; want %q, %q", m.Ref, c.Strategy, c.HorovodCompression, wantStrategy, wantComp)
		}
		if strings.Contains(m.Ref, "DGX-2") && c.Host != "dgx-2" || strings.Contains(m.Ref, "DGX A100") && c.Host != "dgx-a100" {
			t.Errorf("%s: host %q, want the table's box", m.Ref, c.Host)
		}
		seen[c.Strategy+"/"+c.HorovodCompression] = true
	}
	for _, k := range []string{"default/", "horovod/", "horovod/fp16", "horovod/bert-amp-uncompressed"} {
		if !seen[k] {
			t.Errorf("no DLE row runs %s", k)
		}
	}
}

// TestDLEInterOpThreadsFollowTheTablesRunner: each ConvNets table ran with the runner of the
// commit that measured it. b2e7f4a2 re-measured only the DGX A100 table with max(2,
// cpu_count // max(size, 8) - 2) inter-op threads; the DGX-1 and DGX-2 figures at 415a9aa3 date
// from 4eaa4434, whose runner gives a process without Horovod 4 threads and a Horovod rank
// max(2, cpu_count // size - 2).
func TestDLEInterOpThreadsFollowTheTablesRunner(t *testing.T) {
	want := map[string]int{
		"415a9aa3 dgx-a100 1": 30, "415a9aa3 dgx-a100 8": 30, // 256 // 8 - 2
		"415a9aa3 dgx-1 1": 4, "415a9aa3 dgx-1 8": 8, // 80 // 8 - 2
		"415a9aa3 dgx-2 1": 4, "415a9aa3 dgx-2 16": 4, // 96 // 16 - 2
		"e0f399de dgx-2 1": 4, "e0f399de dgx-2 16": 4,
	}
	seen := map[string]bool{}
	for _, m := range shippedDLE(t) {
		if m.Config.Input == nil {
			continue
		}
		k := strings.Join([]string{commitOf(m), m.Config.Host, itoa(m.GPUs())}, " ")
		w, ok := want[k]
		if !ok {
			continue
		}
		seen[k] = true
		if got := m.Config.Input.Pipeline.Threads; got != w {
			t.Errorf("%s: %d inter-op threads, want %d", m.Ref, got, w)
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("no ConvNets row with an input pipeline for %s", k)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestDLEResNetLossAsConvNetsBuildsIt: every ConvNets ResNet-50 row carries the weight decay
// as the graph's L2 penalty (model/resnet.py), and its AMP rows a fixed loss scale where
// training_perf.sh passes one (5d36b4fd, 415a9aa3: --static_loss_scale 128, or
// --use_static_loss_scaling --loss_scale=128); e0f399de's tables ran its README's commands,
// --use_tf_amp alone, and no other model's row has either.
func TestDLEResNetLossAsConvNetsBuildsIt(t *testing.T) {
	seen := map[bool]bool{}
	for _, m := range shippedDLE(t) {
		c := m.Config
		resnet := strings.HasPrefix(m.Model(), "resnet50")
		amp := m.Precision() == "mixed_float16"
		wantStatic := resnet && amp && commitOf(m) != "e0f399de"
		if c.L2Decay != resnet || c.StaticLossScale != wantStatic {
			t.Errorf("%s: L2Decay %v, StaticLossScale %v; want %v, %v", m.Ref, c.L2Decay, c.StaticLossScale, resnet, wantStatic)
		}
		if resnet && amp {
			seen[c.StaticLossScale] = true
		}
	}
	if !seen[true] || !seen[false] {
		t.Errorf("ResNet-50 AMP rows with a fixed and a dynamic loss scale: %v, want both", seen)
	}
}

// TestDLERunMeanRows: the SQuAD tables of the three BERT README versions that give the mean
// of the whole run carry its length, int(87,599 / global batch * 2) updates; the steady-state
// tables (fb55bd24, the same container as ec9eaf73; 9de48bc9) and the pre-training tables of
// the same versions are throughputs.
func TestDLERunMeanRows(t *testing.T) {
	ms := shippedDLE(t)
	for _, c := range []struct {
		commit, gpu string
		gpus, batch int
		model       string
		steps       int
	}{
		{"8749cf39", "v100-sxm3-32gb", 16, 10, "bert-large:seq=384", 1094},
		{"58a3ed6b", "v100-32gb", 8, 10, "bert-large:seq=384", 2189},
		{"ec9eaf73", "v100-sxm3-32gb", 1, 10, "bert-large:seq=384", 17519},
		{"fb55bd24", "v100-sxm3-32gb", 16, 10, "bert-large:seq=384", 0},
		{"9de48bc9", "v100-sxm3-32gb", 16, 24, "bert-large:seq=384", 0},
		{"8749cf39", "v100-sxm3-32gb", 16, 48, "bert-large:seq=128", 0},
	} {
		found := false
		for _, m := range ms {
			if commitOf(m) != c.commit || m.GPU() != c.gpu || m.GPUs() != c.gpus || m.Batch() != c.batch ||
				m.Precision() != "mixed_float16" || !strings.HasPrefix(m.Model(), c.model) {
				continue
			}
			found = true
			wantMetric := Throughput
			if c.steps > 0 {
				wantMetric = RunMean
			}
			if m.RunSteps != c.steps || m.Metric != wantMetric {
				t.Errorf("%s: %s over %d steps, want %s over %d", m.Ref, m.Metric, m.RunSteps, wantMetric, c.steps)
			}
		}
		if !found {
			t.Errorf("no %s %s x%d b%d %s row", c.commit, c.gpu, c.gpus, c.batch, c.model)
		}
	}
}

// TestDLEPretrainingAccumulation holds how the DLE pre-training rows run the LAMB update
// (testdata/dle/README.md): every step for the TF 19.06 and 19.08 tables (8749cf39, 58a3ed6b;
// the 19.08 tables say so, the 19.06 ones repeat their script, batches and figures), every 16
// micro-batches for the 2020-2023 tables, which state thousands.
func TestDLEPretrainingAccumulation(t *testing.T) {
	want := map[string]int{"8749cf39": 1, "58a3ed6b": 1, "9de48bc9": 16, "7ee81a16": 16}
	seen := map[string]int{}
	for _, m := range shippedDLE(t) {
		if !strings.Contains(m.Model(), "head=mlm") {
			continue
		}
		c := commitOf(m)
		w, ok := want[c]
		if !ok {
			t.Errorf("%s: pre-training row of an unexpected README version", m.Ref)
			continue
		}
		seen[c]++
		if m.Accumulation() != w {
			t.Errorf("%s: accumulation %d, want %d", m.Ref, m.Accumulation(), w)
		}
	}
	for c := range want {
		if seen[c] == 0 {
			t.Errorf("no pre-training row from %s", c)
		}
	}
}

// TestKerasMeasuredHost: the later Keras recordings (testdata/h200/keras/host, repeat, split
// and seq) timed fit's gather of each batch during the run, and validate simulates their rows
// on the host that gather measured; the first recording (steps.csv), which measured no host,
// runs on the H200 machine's default. A config that seq ran a second time is its own version,
// so that a ratio pairs it with the float32 twin of its own round only.
func TestKerasMeasuredHost(t *testing.T) {
	ms, err := ReadShipped("../testdata")
	if err != nil {
		t.Fatal(err)
	}
	measured := map[string]int{}
	for _, m := range ms {
		if m.Source != SourceKeras {
			continue
		}
		rate := m.Config.HostGatherRate
		if strings.Contains(m.Ref, "keras/steps.csv") {
			if rate != 0 {
				t.Errorf("%s: HostGatherRate %g, want 0 (no host measured in that recording)", m.Ref, rate)
			}
			continue
		}
		measured[m.Version]++
		if m.Set == SourceKeras+" device-fed" {
			continue
		}
		// gather_ms 8.6-62 ms for 38-154 MB batches: 2.3-4.5 GB/s.
		if rate < 2.3e9 || rate > 4.5e9 {
			t.Errorf("%s: HostGatherRate %.3g B/s, want fit's measured 2.3e9-4.5e9", m.Ref, rate)
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
