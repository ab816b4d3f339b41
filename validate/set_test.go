package validate

import (
	"strings"
	"testing"
)

// TestParseSetRunsTheOverrides: a row's key columns and its set column reach the run as the
// same keys of gpusim run --set would: the global batch, the GPU, Horovod and its
// compression, a host, the input section, the loss's L2 decay and a fixed loss scale.
func TestParseSetRunsTheOverrides(t *testing.T) {
	ms := parse(t, "dir/fleet.csv", `source,provenance,metric,value,model,hardware.gpu,hardware.count,hardware.host.profile,batch,precision,env,set,set_reason,my_notes
,run 7,throughput,7000,resnet50-v1.5,a100-40gb,8,dgx-a100,2048,mixed_float16,{TF_ENABLE_AUTO_MIXED_PRECISION: 1},strategy.name=horovod; input.map.threads=30; input.drop_remainder=true; l2_decay=true; static_loss_scale=128,why,anything
`)
	m := ms[0]
	c := m.Config
	if m.Set != "fleet multi-GPU" || m.Source != "fleet" || m.Ref != "dir/fleet.csv:2 (run 7)" || m.Version != "run 7" || m.Label != "mixed_float16" {
		t.Errorf("set %q, source %q, ref %q, version %q, label %q", m.Set, m.Source, m.Ref, m.Version, m.Label)
	}
	if c.GPU != "a100-40gb" || c.GPUCount != 8 || c.Batch != 2048 || m.Batch() != 256 || c.Host != "dgx-a100" || c.Strategy != "horovod" {
		t.Errorf("config %s x%d batch %d (%d per GPU) host %q strategy %q", c.GPU, c.GPUCount, c.Batch, m.Batch(), c.Host, c.Strategy)
	}
	if c.Input == nil || c.Input.Pipeline.Threads != 30 || !c.Input.Pipeline.DropRemainder || !c.L2Decay || !c.StaticLossScale {
		t.Errorf("input %+v, l2 %v, static %v", c.Input, c.L2Decay, c.StaticLossScale)
	}
	if c.Env["TF_ENABLE_AUTO_MIXED_PRECISION"] != "1" {
		t.Errorf("env %v", c.Env)
	}
}

// TestParseSetErrors: a bad file is one error line naming the file, the line and the column
// (or the override), never a run of the defaults.
func TestParseSetErrors(t *testing.T) {
	head := "metric,value,model,hardware.gpu,batch,set\n"
	for _, tc := range []struct{ name, data, want string }{
		{"cut mid-row", head + "throughput,100,resnet50,a100-40gb,64,\nthroughput,100,resn", "f.csv:3: hardware.gpu: truncated row: 3 of the header's 6 fields"},
		{"extra field", head + "throughput,100,resnet50,a100-40gb,64,,9\n", "f.csv:2: 7 fields, more than the header's 6"},
		{"header only", head, "f.csv:2: no rows after the header: the file is cut short"},
		{"empty", "", "f.csv:1: no header: the file is empty"},
		{"cut mid-value", head + "throughput,100,resnet50,a100-40gb,64,l2_decay=tr", "f.csv:2: no newline at the end: the file is cut short"},
		{"bad quote", head + "throughput,1\"00,resnet50,a100-40gb,64,\n", "f.csv:2: column 13: bare \" in non-quoted-field"},
		{"no value column", "metric,model\nthroughput,resnet50\n", "f.csv:1: value: missing column"},
		{"metric", head + "samples,100,resnet50,a100-40gb,64,\n", "f.csv:2: metric: \"samples\": want throughput, step_time, run_mean or time_to_train"},
		{"value", head + "throughput,fast,resnet50,a100-40gb,64,\n", "f.csv:2: value: \"fast\" is not a positive number"},
		{"run_steps", head + "run_mean,100,resnet50,a100-40gb,64,\n", "f.csv:2: run_steps: \"\" is not a positive integer"},
		{"model", head + "throughput,100,resnet5O,a100-40gb,64,\n", "f.csv:2: model: "},
		{"batch", head + "throughput,100,resnet50,a100-40gb,-4,\n", "f.csv:2: batch: "},
		{"gpu", head + "throughput,100,resnet50,a100-4gb,64,\n", "f.csv:2: hardware.gpu: "},
		{"set key", head + "throughput,100,resnet50,a100-40gb,64,strategy.nme=horovod\n", "f.csv:2: set: strategy.nme=horovod: strategy.nme: unknown key"},
		{"set value", head + "throughput,100,resnet50,a100-40gb,64,xla=maybe\n", "f.csv:2: set: xla=maybe: xla: want true or false"},
		{"cross-key check", head + "throughput,100,resnet50,a100-40gb,64,strategy.compression=fp16\n", "f.csv:2: set: strategy.compression=fp16: strategy.compression: fp16 casts the gradients"},
		{"misspelled column", "metric,value,model,gpu\nthroughput,100,resnet50,a100-40gb\n", "f.csv:1: gpu: not a scenario key or a column of a measurement set (did you mean hardware.gpu?)"},
		{"near a key", "metric,value,model,bach\nthroughput,100,resnet50,64\n", "f.csv:1: bach: not a scenario key or a column of a measurement set (did you mean batch?)"},
		{"duplicate column", "metric,value,model,model\nthroughput,100,resnet50,vgg16\n", "f.csv:1: model: column 4 repeats column 3"},
	} {
		_, err := ParseSet("f.csv", strings.NewReader(tc.data))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line starting %q", tc.name, err, tc.want)
		}
	}
}
