package analysis

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/train"
)

// fakeRun predicts a throughput of 100 samples/s per GPU for float32, 300 for half precision,
// times 1.2 with XLA: rows and ratios with known answers.
func fakeRun(_ context.Context, c train.Config) (*train.Result, error) {
	t := 100.0 * float64(c.GPUCount)
	if c.Precision != "float32" {
		t *= 3
	}
	if c.XLA {
		t *= 1.2
	}
	return &train.Result{Throughput: t, StepTime: float64(c.Batch) / t}, nil
}

func TestValidateGroupsAndRatios(t *testing.T) {
	m := func(gpu, label, prec string, xla bool, value float64) Measurement {
		return Measurement{Source: SourceDLE, Model: "resnet50-v1.5", GPU: gpu, GPUs: 1, Batch: 256, Label: label,
			Precision: prec, XLA: xla, Value: value, Version: "readme@1", Optimizer: "momentum"}
	}
	ms := []Measurement{
		m("a100-40gb", "tf32", "float32", false, 100),          // predicted 100: +0%
		m("a100-40gb", "tf32", "float32", true, 100),           // predicted 120: +20%
		m("a100-40gb", "amp_fp16", "mixed_float16", true, 400), // predicted 360: -10%
		m("v100-16gb", "fp32", "float32", true, 150),           // predicted 120: -20%
	}
	v, err := Validate(context.Background(), ms, ValidateOptions{Run: fakeRun, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		by, key   string
		mae, bias float64
	}{
		{"all", "", 0.125, -0.025},
		{"gpu", "a100-40gb", 0.1, 0.1 / 3},
		{"xla", "on", 0.5 / 3, -0.1 / 3},
		{"precision", "tf32", 0.1, 0.1},
	} {
		g, ok := v.Group("dle 1-GPU", tc.by, tc.key)
		if !ok || !near(g.MAE, tc.mae) || !near(g.Bias, tc.bias) {
			t.Errorf("Group(%s=%s) = %+v (found %v), want MAE %.4f bias %.4f", tc.by, tc.key, g, ok, tc.mae, tc.bias)
		}
	}
	got := map[string]Ratio{}
	for _, r := range v.Ratios {
		got[r.Kind] = r
	}
	if len(v.Ratios) != 2 {
		t.Errorf("ratios = %+v, want xla on/off and amp/tf32 on a100-40gb only", v.Ratios)
	}
	// XLA on/off: measured 100/100, predicted 1.2: +20%. AMP/TF32 (XLA on): 4 measured, 3 predicted.
	if r := got["xla on/off"]; !near(r.Measured, 1) || !near(r.Predicted, 1.2) {
		t.Errorf("xla on/off = %+v, want measured 1, predicted 1.2", r)
	}
	if r := got["amp/tf32"]; !near(r.Measured, 4) || !near(r.Predicted, 3) || !near(r.Err, -0.25) {
		t.Errorf("amp/tf32 = %+v, want measured 4, predicted 3", r)
	}
	// Leave-one-GPU-out without a refit: the held-out MAE is the plain prediction's.
	for _, h := range v.HoldOuts {
		if h.By == "gpu" && h.Held == "v100-16gb" && (!near(h.HeldMAE, 0.2) || h.N != 1 || h.Train != 3) {
			t.Errorf("hold-out v100-16gb = %+v, want held MAE 0.2 over 1 row, 3 training rows", h)
		}
	}
	if len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "no cost-model constant is fitted") {
		t.Errorf("notes = %q, want the no-refit note", v.Notes)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestReadDLEErrors(t *testing.T) {
	head := "source_path,commit,framework_version,system,num_gpus,precision,xla,xla_source,batch_per_gpu,value,data,model,gpu,gpusim_precision,optimizer,table_heading\n"
	for _, tc := range []struct{ body, want string }{
		{"a,b,c,d,1,fp32,maybe,stated,128,412,real,resnet50-v1.5,v100-16gb,float32,momentum,h\n", "x.csv:2: xla"},
		{"a,b,c,d,1,fp32,yes,stated,0,412,real,resnet50-v1.5,v100-16gb,float32,momentum,h\n", "x.csv:2: batch_per_gpu"},
		{"a,b,c,d,1,fp32,yes,stated,128,fast,real,resnet50-v1.5,v100-16gb,float32,momentum,h\n", "x.csv:2: value"},
	} {
		dir := t.TempDir()
		path := dir + "/x.csv"
		if err := writeFile(path, head+tc.body); err != nil {
			t.Fatal(err)
		}
		_, err := readDLE(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readDLE(%q) error = %v, want it to name %q", tc.body, err, tc.want)
		}
	}
	if _, err := parseTable("y.csv", strings.NewReader("model,prec\n"), "model", "step_s"); err == nil || !strings.Contains(err.Error(), "y.csv:1: step_s: missing column") {
		t.Errorf("missing column error = %v", err)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// TestModelGroup: a row's model group drops only the impl option, so the Model Garden's BERT
// rows count with keras_hub's in the per-model figures and leave-one-model-out.
func TestModelGroup(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"resnet50-v1.5", "resnet50-v1.5"},
		{"bert-large:seq=384", "bert-large:seq=384"},
		{"bert-large:seq=384,impl=model-garden", "bert-large:seq=384"},
		{"bert-large:impl=model-garden,seq=128,head=mlm", "bert-large:seq=128,head=mlm"},
		{"bert-large:impl=model-garden", "bert-large"},
	} {
		if got := modelGroup(c.spec); got != c.want {
			t.Errorf("modelGroup(%q) = %q, want %q", c.spec, got, c.want)
		}
	}
}

// shippedDLE reads the repository's DLE rows (testdata/dle/dle_tf.csv).
func shippedDLE(t *testing.T) []Measurement {
	t.Helper()
	ms, err := readDLE("../testdata/dle/dle_tf.csv")
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestDLERunsAsNVIDIARan: a DLE row's scenario is NVIDIA's setup: the table's box, one
// Horovod process per GPU on several GPUs, float16 all-reduce for BERT under AMP only (and
// not for the two early tables whose optimization.py passes Compression.none), and the
// default strategy on one GPU.
func TestDLERunsAsNVIDIARan(t *testing.T) {
	ms := shippedDLE(t)
	seen := map[string]bool{}
	for _, m := range ms {
		c := m.Config(10)
		wantStrategy, wantComp := "default", ""
		if m.GPUs > 1 {
			wantStrategy = "horovod"
			bertAMP := strings.HasPrefix(m.Model, "bert") && m.Precision == "mixed_float16"
			early := strings.Contains(m.Ref, "@ec9eaf73,") || strings.Contains(m.Ref, "@fb55bd24,")
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
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", m.Ref, err)
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
	for _, c := range []struct {
		commit, host string
		gpus, want   int
	}{
		{"415a9aa3", "dgx-a100", 1, 30}, // 256 // 8 - 2
		{"415a9aa3", "dgx-a100", 8, 30},
		{"415a9aa3", "dgx-1", 1, 4},
		{"415a9aa3", "dgx-1", 8, 8}, // 80 // 8 - 2
		{"415a9aa3", "dgx-2", 1, 4},
		{"415a9aa3", "dgx-2", 16, 4}, // 96 // 16 - 2
		{"e0f399de", "dgx-2", 1, 4},
		{"e0f399de", "dgx-2", 16, 4},
		{"415a9aa3", "", 1, 0},
	} {
		m := Measurement{Source: SourceDLE, Commit: c.commit, Host: c.host, GPUs: c.gpus}
		if got := m.dleInterOpThreads(); got != c.want {
			t.Errorf("%s %s x%d: %d inter-op threads, want %d", c.commit, c.host, c.gpus, got, c.want)
		}
	}
}

// TestDLEResNetLossAsConvNetsBuildsIt: every ConvNets ResNet-50 row carries the weight decay
// as the graph's L2 penalty (model/resnet.py), and its AMP rows a fixed loss scale where
// training_perf.sh passes one (5d36b4fd, 415a9aa3: --static_loss_scale 128, or
// --use_static_loss_scaling --loss_scale=128); e0f399de's tables ran its README's commands,
// --use_tf_amp alone, and no other model's row has either.
func TestDLEResNetLossAsConvNetsBuildsIt(t *testing.T) {
	ms := shippedDLE(t)
	seen := map[string]bool{}
	for _, m := range ms {
		c := m.Config(10)
		resnet := strings.HasPrefix(m.Model, "resnet50")
		wantStatic := resnet && m.Commit != "e0f399de"
		if c.L2Decay != resnet || c.StaticLossScale != wantStatic {
			t.Errorf("%s: L2Decay %v, StaticLossScale %v; want %v, %v", m.Ref, c.L2Decay, c.StaticLossScale, resnet, wantStatic)
		}
		if resnet && m.Precision == "mixed_float16" {
			seen[strconv.FormatBool(c.StaticLossScale)] = true
		}
	}
	if !seen["true"] || !seen["false"] {
		t.Errorf("ResNet-50 AMP rows with a fixed and a dynamic loss scale: %v, want both", seen)
	}
}
