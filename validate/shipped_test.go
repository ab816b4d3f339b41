package validate

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
)

// dleCheck is one row of testdata/dle/checks.csv: what a README version's scripts ran, read
// from them beside the row and kept as data, so that no README version is named in Go. Empty
// columns match any row.
type dleCheck struct {
	version, gpu, host, model string
	gpus, batch               int
	want, why                 string
}

// dleChecks returns the checks.csv rows of one check.
func dleChecks(t *testing.T, check string) []dleCheck {
	t.Helper()
	col, recs := testcsv.Read(t, "../testdata/dle/checks.csv")
	atoi := func(s string) int {
		if s == "" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("checks.csv: %q is not a count", s)
		}
		return n
	}
	var out []dleCheck
	for _, r := range recs {
		if r[col["check"]] != check {
			continue
		}
		out = append(out, dleCheck{version: r[col["version"]], gpu: r[col["gpu"]], host: r[col["host"]], model: r[col["model"]],
			gpus: atoi(r[col["gpus"]]), batch: atoi(r[col["batch"]]), want: r[col["want"]], why: r[col["why"]]})
	}
	if len(out) == 0 {
		t.Fatalf("checks.csv has no %s rows", check)
	}
	return out
}

// dleVersions is the set of README versions of one check.
func dleVersions(t *testing.T, check string) map[string]bool {
	t.Helper()
	v := map[string]bool{}
	for _, c := range dleChecks(t, check) {
		v[c.version] = true
	}
	return v
}

// commitOf is the README version a DLE row's provenance names ("...README.md@VERSION, ...").
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
	uncompressed := dleVersions(t, "bert_amp_uncompressed")
	seen := map[string]bool{}
	for _, m := range shippedDLE(t) {
		c := m.Config
		wantStrategy, wantComp := "default", ""
		if m.GPUs() > 1 {
			wantStrategy = "horovod"
			bertAMP := strings.HasPrefix(m.Model(), "bert") && m.Precision() == "mixed_float16"
			early := uncompressed[commitOf(m)]
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
// version that measured it (checks.csv, inter_op_threads: the runner's formula beside each
// table's box and GPU count).
func TestDLEInterOpThreadsFollowTheTablesRunner(t *testing.T) {
	want := map[string]int{}
	for _, c := range dleChecks(t, "inter_op_threads") {
		want[strings.Join([]string{c.version, c.host, itoa(c.gpus)}, " ")], _ = strconv.Atoi(c.want)
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
// training_perf.sh passes one (--static_loss_scale 128, or --use_static_loss_scaling
// --loss_scale=128), a dynamic one in the versions whose tables ran the README's commands
// (checks.csv, resnet_amp_dynamic_loss_scale), and no other model's row has either.
func TestDLEResNetLossAsConvNetsBuildsIt(t *testing.T) {
	dynamic := dleVersions(t, "resnet_amp_dynamic_loss_scale")
	seen := map[bool]bool{}
	for _, m := range shippedDLE(t) {
		c := m.Config
		resnet := strings.HasPrefix(m.Model(), "resnet50")
		amp := m.Precision() == "mixed_float16"
		wantStatic := resnet && amp && !dynamic[commitOf(m)]
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

// TestDLERunMeanRows: the SQuAD tables of the BERT README versions that give the mean of the
// whole run carry its length in updates; the steady-state tables and the pre-training tables
// of the same versions are throughputs (checks.csv, run_steps: 0 for a throughput).
func TestDLERunMeanRows(t *testing.T) {
	ms := shippedDLE(t)
	for _, ck := range dleChecks(t, "run_steps") {
		steps, _ := strconv.Atoi(ck.want)
		c := struct {
			commit, gpu string
			gpus, batch int
			model       string
			steps       int
		}{ck.version, ck.gpu, ck.gpus, ck.batch, ck.model, steps}
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
// (testdata/dle/README.md; checks.csv, accumulation): every step for the TF 19.06 and 19.08
// tables, every 16 micro-batches for the 2020-2023 tables, which state thousands.
func TestDLEPretrainingAccumulation(t *testing.T) {
	want := map[string]int{}
	for _, c := range dleChecks(t, "accumulation") {
		want[c.version], _ = strconv.Atoi(c.want)
	}
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
