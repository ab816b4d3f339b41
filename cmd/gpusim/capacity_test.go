package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestCapacityUsageExamples runs every example of gpusim capacity --help.
func TestCapacityUsageExamples(t *testing.T) {
	help, _, code := runCLI(t, "capacity", "--help")
	if code != 0 {
		t.Fatalf("capacity --help: exit %d", code)
	}
	for _, ex := range capacityExamples {
		if !strings.Contains(help, ex) {
			t.Errorf("capacity --help does not show example %q", ex)
		}
		out, errs, code := runCLI(t, strings.Fields(ex)[1:]...)
		if code != 0 {
			t.Errorf("example %q: exit %d: %s", ex, code, errs)
			continue
		}
		if strings.Contains(ex, "-o json") {
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Errorf("example %q: %v", ex, err)
			}
			continue
		}
		for _, want := range []string{"gpusim capacity", "trials"} {
			if strings.Contains(ex, " gpus ") {
				want = strings.Replace(want, "trials", "counts tried", 1)
			}
			if !strings.Contains(out, want) {
				t.Errorf("example %q: output lacks %q:\n%s", ex, want, out)
			}
		}
	}
	for _, sub := range []string{"max-batch", "gpus"} {
		if out, _, code := runCLI(t, "capacity", sub, "--help"); code != 0 || !strings.Contains(out, "Flags of "+sub) {
			t.Errorf("capacity %s --help: exit %d, output %q", sub, code, out)
		}
	}
}

// TestCapacityMaxBatchJSON answers the README's question: ResNet-50 batch 256 on a 24 GB
// RTX 3090 with memory growth fits in float32, and the largest batch is reported with the
// first one that OOMs and TF's message.
func TestCapacityMaxBatchJSON(t *testing.T) {
	out, errs, code := runCLI(t, "capacity", "max-batch", "--set", "hardware.gpu=rtx3090", "--set", "memory.growth=true", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Scenario string `json:"scenario"`
		MaxBatch int    `json:"max_batch"`
		Fit      struct {
			Fits      bool    `json:"fits"`
			PeakBytes int64   `json:"peak_bytes_in_use"`
			Limit     int64   `json:"bytes_limit"`
			Through   float64 `json:"throughput_samples_per_s"`
		} `json:"fit"`
		FirstOOM struct {
			Batch int `json:"batch"`
			OOM   struct {
				Message string `json:"message"`
			} `json:"oom"`
		} `json:"first_oom"`
		Trials []json.RawMessage `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.MaxBatch < 256 || rep.MaxBatch%8 != 0 || !rep.Fit.Fits || rep.Fit.PeakBytes > rep.Fit.Limit || rep.Fit.Through <= 0 {
		t.Errorf("max batch %d, fit %+v: want a multiple of 8 of at least 256 within the limit", rep.MaxBatch, rep.Fit)
	}
	if rep.FirstOOM.Batch != rep.MaxBatch+8 || !strings.HasPrefix(rep.FirstOOM.OOM.Message, "ResourceExhaustedError: OOM when allocating tensor") {
		t.Errorf("first OOM %+v, want batch %d with TF's message", rep.FirstOOM, rep.MaxBatch+8)
	}
}

func TestCapacityBadInputExits2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capacity"}, "want a subcommand"},
		{[]string{"capacity", "size"}, "unknown subcommand"},
		{[]string{"capacity", "max-batch", "--multiple", "0"}, "--multiple 0"},
		{[]string{"capacity", "max-batch", "--min", "0"}, "--min 0"},
		{[]string{"capacity", "max-batch", "--min", "64", "--max", "32"}, "below --min"},
		{[]string{"capacity", "max-batch", "--min", "9", "--max", "15"}, "no multiple of 8"},
		{[]string{"capacity", "max-batch", "--steps", "0"}, "--steps 0"},
		{[]string{"capacity", "max-batch", "-o", "csv"}, `-o "csv"`},
		{[]string{"capacity", "max-batch", "--set", "batch=64"}, "batch is what the search varies"},
		{[]string{"capacity", "max-batch", "--set", "precision=float8"}, "precision"},
		{[]string{"capacity", "max-batch", "no-such-scenario"}, "no-such-scenario"},
		{[]string{"capacity", "max-batch", "a", "b"}, "at most one scenario"},
		{[]string{"capacity", "max-batch", "--bogus"}, "bogus"},
		{[]string{"capacity", "gpus"}, "--throughput is required"},
		{[]string{"capacity", "gpus", "--throughput", "-5"}, "--throughput -5"},
		{[]string{"capacity", "gpus", "--throughput", "100", "--max-gpus", "0"}, "--max-gpus 0"},
		{[]string{"capacity", "gpus", "--throughput", "100", "--per-gpu-batch", "8", "--global-batch", "64"}, "not both"},
		{[]string{"capacity", "gpus", "--throughput", "100", "--global-batch", "0"}, "--global-batch 0"},
		{[]string{"capacity", "gpus", "--throughput", "100", "--set", "hardware.count=4"}, "hardware.count is what the search varies"},
		{[]string{"capacity", "gpus", "--throughput", "100", "--set", "cuda_visible_devices=7"}, "cuda_visible_devices"},
		{[]string{"capacity", "gpus", "--throughput", "100", "--strategy", "ps"}, `--strategy "ps": want mirrored or horovod`},
	} {
		_, errs, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("gpusim %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}

// Searches bounded by a flag past the range of the key they vary are bad input (they looped
// forever: b *= 2 overflowed).
func TestCapacityFlagsShareKeyRanges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"capacity", "max-batch", "--max", "9223372036854775807"}, "capacity max-batch: --max (a batch): too large: 9223372036854775807 (at most 16777216"},
		{[]string{"capacity", "gpus", "--throughput", "1e12", "--max-gpus", "9223372036854775807"}, "capacity gpus: --max-gpus (a hardware.count): too large: 9223372036854775807 (at most 256"},
		{[]string{"capacity", "gpus", "--throughput", "1e12", "--per-gpu-batch", "99999999999"}, "--per-gpu-batch (a batch): too large"},
	} {
		_, stderr, code := allocRun(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// capacity gpus says what input it assumed and, given a dataset and epochs, each count's time
// to train: epochs x ceil(dataset / global batch) x the median step.
func TestCapacityGPUsTimeToTrain(t *testing.T) {
	out, stderr, code := allocRun(t, "capacity", "gpus", "--set", "model=mlp", "--throughput", "1e12", "--max-gpus", "2",
		"--steps", "3", "--dataset-size", "1281167", "--epochs", "90", "-o", "json")
	if code != 0 {
		t.Fatalf("capacity gpus: exit %d: %s", code, stderr)
	}
	var rep struct {
		Input    string `json:"input"`
		Training struct {
			DatasetSize int `json:"dataset_size"`
			Epochs      int `json:"epochs"`
		} `json:"training"`
		Trials []struct {
			GlobalBatch  int     `json:"global_batch"`
			StepTime     float64 `json:"step_time_s"`
			TrainSeconds float64 `json:"train_seconds"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Input, "synthetic") {
		t.Errorf("input = %q, want the synthetic-input assumption stated", rep.Input)
	}
	if rep.Training.DatasetSize != 1281167 || rep.Training.Epochs != 90 || len(rep.Trials) == 0 {
		t.Fatalf("report %+v, want the training job and trials", rep)
	}
	for _, tr := range rep.Trials {
		steps := (1281167 + tr.GlobalBatch - 1) / tr.GlobalBatch
		if want := 90 * float64(steps) * tr.StepTime; math.Abs(tr.TrainSeconds-want) > 1e-9*want || want == 0 {
			t.Errorf("batch %d: train_seconds %v, want 90 x %d x %v = %v", tr.GlobalBatch, tr.TrainSeconds, steps, tr.StepTime, want)
		}
	}
	text, _, _ := allocRun(t, "capacity", "gpus", "--set", "model=mlp", "--throughput", "1", "--max-gpus", "2",
		"--steps", "3", "--dataset-size", "1281167", "--epochs", "90")
	for _, want := range []string{"input: synthetic", "time to train  ", "90 epochs x "} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if _, stderr, code := allocRun(t, "capacity", "gpus", "--throughput", "1", "--epochs", "3"); code != 2 || !strings.Contains(stderr, "--epochs needs --dataset-size") {
		t.Errorf("--epochs alone: exit %d, %q", code, stderr)
	}
}

// TestCapacityGPUsHorovod: --strategy horovod searches Horovod runs, beyond one DGX A100 as
// whole boxes over the network: 60k img/s of ResNet-50 AMP takes 32 GPUs on 4 nodes.
func TestCapacityGPUsHorovod(t *testing.T) {
	out, errs, code := runCLI(t, "capacity", "gpus", "resnet50-8xa100", "--set", "hardware.host.profile=dgx-a100",
		"--set", "precision=mixed_float16", "--set", "xla=true", "--throughput", "60000", "--per-gpu-batch", "256", "--strategy", "horovod")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Horovod", "GPUs needed      32 on 4 nodes of 8 (horovod)"} {
		if !strings.Contains(out, want) {
			t.Errorf("capacity gpus --strategy horovod: output lacks %q:\n%s", want, out)
		}
	}
}

// TestCapacityMaxBatchBERTTF1: BERT-base fine-tuning at sequence 128 (FP32) on a 12 GB Titan X
// as google-research/bert's run_classifier.py runs it under TF 1.x (modeling.py's graph,
// AdamWeightDecayOptimizer as TF ops) fits fewer samples than the Keras-built model with
// Keras's fused Adam: the optimizer's beta_1 * m, beta_2 * v and weight-decay tensors (three
// times the 0.44 GB of variables, about seven samples at 0.17 GiB each) are held from the
// step's start, and the tanh GELU keeps one more feed-forward tensor per token (12% more
// activations). The BERT README's table (TF 1.11) gives 32; its batches at sequences 64 to
// 256 are powers of two.
func TestCapacityMaxBatchBERTTF1(t *testing.T) {
	maxBatch := func(model, opt string, extra ...string) (int, int) {
		args := append([]string{"capacity", "max-batch", "--set", "model=" + model, "--set", "hardware.gpu=titan-x-pascal",
			"--set", "optimizer=" + opt, "--multiple", "1", "-o", "json"}, extra...)
		out, errs, code := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var rep struct {
			MaxBatch int `json:"max_batch"`
			FirstOOM struct {
				Batch int `json:"batch"`
			} `json:"first_oom"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep.MaxBatch, rep.FirstOOM.Batch
	}
	keras, _ := maxBatch("bert-base", "adam")
	tf1, oom := maxBatch("bert-base:impl=google-research", "bert-adamw", "--set", "tf_version=1.11")
	t.Logf("max batch: Keras model with Adam %d, TF 1.x reference %d (the README's table: 32)", keras, tf1)
	if oom != tf1+1 {
		t.Errorf("TF 1.x reference: first OOM at %d, want %d", oom, tf1+1)
	}
	if tf1 >= keras-10 || tf1 < 40 {
		t.Errorf("TF 1.x reference max batch %d, Keras %d: want about 7 fewer for the optimizer's early tensors and 12%% fewer for the GELU's", tf1, keras)
	}
}
