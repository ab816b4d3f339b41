package xprof

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpusim/gpusim/hw"
)

const (
	ms    = int64(1e9) // picoseconds
	hostT = int64(1_764_600_000_000_000_000)
)

// testSpace is a small XSpace of two marked train steps as jax.profiler.trace writes one: a
// host plane with the step markers (StepTraceAnnotation's "train" with step_num), and a GPU
// plane whose stream line holds a cuDNN filter gradient (its hlo_op a ref stat), a fusion in a
// command buffer, a copy, a GEMM with no hlo_op that an "XLA Ops" event spans, a kernel after
// the last step and an aggregated event.
func testSpace() []byte {
	host := tPlane{id: 1, name: "/host:CPU",
		stats:  map[int64]string{1: "step_num", 2: "_r"},
		events: map[int64]string{1: "train", 2: "PjitFunction(train_step)"},
		lines: []tLine{{id: 7, name: "python3", tsNS: hostT, events: []tEvent{
			{meta: 1, offsetPS: 0, durPS: 10 * ms, stats: []tStat{{id: 1, i64: 0, isInt: true}, {id: 2, i64: 1, isInt: true}}},
			{meta: 2, offsetPS: 1 * ms, durPS: 1 * ms},
			{meta: 1, offsetPS: 12 * ms, durPS: 11 * ms, stats: []tStat{{id: 1, i64: 1, isInt: true}, {id: 2, i64: 1, isInt: true}}},
		}}}}
	dev := tPlane{id: 2, name: "/device:GPU:0",
		stats: map[int64]string{1: "hlo_op", 2: "hlo_module", 3: "correlation_id", 4: "memcpy_details", 5: "cudnn-conv-bw-filter.53"},
		events: map[int64]string{1: "sm90_xmma_wgrad_implicit_gemm_tf32", 2: "loop_add_fusion_3", 3: "MemcpyD2D",
			4: "sm90_xmma_gemm_f32f32_tf32f32_f32_nn", 5: "input_reduce_fusion", 6: "custom-call.7"},
		lines: []tLine{
			{id: 14, name: "Stream #14(Compute,MemcpyD2D)", tsNS: hostT + 1000, events: []tEvent{
				{meta: 1, offsetPS: 1 * ms, durPS: 4 * ms, stats: []tStat{{id: 1, ref: 5}, {id: 2, str: "jit_train_step"}, {id: 3, i64: 77, isInt: true}}},
				{meta: 2, offsetPS: 6 * ms, durPS: 2 * ms, stats: []tStat{{id: 1, str: "command_buffer_12"}, {id: 2, str: "jit_train_step"}}},
				{meta: 3, offsetPS: 8*ms + ms/2, durPS: ms / 2, stats: []tStat{{id: 4, str: "kind_src:device"}}},
				{meta: 4, offsetPS: 13 * ms, durPS: 1 * ms},
				{meta: 5, offsetPS: 30 * ms, durPS: 1 * ms, stats: []tStat{{id: 1, str: "fusion.9"}}},
				{meta: 5, occurrences: 40, durPS: 9 * ms},
			}},
			{id: 1, name: "XLA Ops", tsNS: hostT, events: []tEvent{
				{meta: 6, offsetPS: 13*ms + 1000, durPS: 2 * ms},
			}},
		}}
	return encodeSpace([]string{"h200-box"}, host, dev)
}

// wantKernels are testSpace's GPU operations (picoseconds from the host line's start; the
// stream line starts 1 us after it).
func wantKernels() []Kernel {
	us := int64(1e6)
	s := "Stream #14(Compute,MemcpyD2D)"
	return []Kernel{
		{Device: 0, Stream: s, Name: "sm90_xmma_wgrad_implicit_gemm_tf32", Start: us + 1*ms, Duration: 4 * ms, Op: "cudnn-conv-bw-filter.53", Module: "jit_train_step", Framework: "xla"},
		{Device: 0, Stream: s, Name: "loop_add_fusion_3", Start: us + 6*ms, Duration: 2 * ms, Op: "command_buffer_12", Module: "jit_train_step", Framework: "xla"},
		{Device: 0, Stream: s, Name: "MemcpyD2D", Start: us + 8*ms + ms/2, Duration: ms / 2, Memcpy: true},
		{Device: 0, Stream: s, Name: "sm90_xmma_gemm_f32f32_tf32f32_f32_nn", Start: us + 13*ms, Duration: 1 * ms, Op: "custom-call.7", Framework: "xla"},
		{Device: 0, Stream: s, Name: "input_reduce_fusion", Start: us + 30*ms, Duration: 1 * ms, Op: "fusion.9", Framework: "xla"},
	}
}

func TestDecodeXSpace(t *testing.T) {
	p, err := Decode(testSpace())
	if err != nil {
		t.Fatal(err)
	}
	want := &Profile{Format: FormatXSpace, Kernels: wantKernels(), Hostnames: []string{"h200-box"},
		Steps: []Step{{Name: "train", Num: 0, Start: 0, Duration: 10 * ms}, {Name: "train", Num: 1, Start: 12 * ms, Duration: 11 * ms}}}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("Decode(testSpace) mismatch (-want +got):\n%s", d)
	}
}

func TestSummary(t *testing.T) {
	p, err := Decode(testSpace())
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Summary()
	if err != nil {
		t.Fatal(err)
	}
	// Two steps: 10.5 ms median; per step the filter gradient's 4 ms of conv, the GEMM's
	// 1 ms, the fusion's 2 ms and the copy's 0.5 ms; the fusion at 30 ms is outside.
	want := StepSummary{Marker: "train", Steps: 2, StepTime: 10.5e-3, Outside: 1,
		Groups:    map[string]float64{GroupConv: 2e-3, GroupMatMul: 0.5e-3, GroupMemory: 1.25e-3},
		Kernels:   map[string]float64{GroupConv: 0.5, GroupMatMul: 0.5, GroupMemory: 1},
		KindTimes: map[string]float64{hw.KindConv: 2e-3, hw.KindMatMul: 0.5e-3, hw.KindFusion: 1e-3, hw.KindCopy: 0.25e-3}}
	if d := cmp.Diff(want, s, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 })); d != "" {
		t.Errorf("Summary mismatch (-want +got):\n%s", d)
	}
}

// chromeOf writes testSpace's events as the profiler's Chrome trace JSON of them: microsecond
// timestamps with nanosecond fractions, the planes and lines as process and thread names.
func chromeOf() string {
	us := func(ps int64) string { return fmt.Sprintf("%d.%06d", ps/1e6, ps%1e6) }
	base := hostT / 1000 // us
	ev := func(pid, tid int, name string, startPS, durPS int64, args string) string {
		return fmt.Sprintf(`{"ph":"X","pid":%d,"tid":%d,"name":%q,"ts":%d.%s,"dur":%s,"args":{%s}}`,
			pid, tid, name, base+startPS/1e6, fmt.Sprintf("%06d", startPS%1e6), us(durPS), args)
	}
	evs := []string{
		`{"ph":"M","pid":1,"name":"process_name","args":{"name":"/host:CPU"}}`,
		`{"ph":"M","pid":2,"name":"process_name","args":{"name":"/device:GPU:0"}}`,
		`{"ph":"M","pid":2,"tid":14,"name":"thread_name","args":{"name":"Stream #14(Compute,MemcpyD2D)"}}`,
		`{"ph":"M","pid":2,"tid":1,"name":"thread_name","args":{"name":"XLA Ops"}}`,
		ev(1, 7, "train", 0, 10*ms, `"step_num":"0","_r":"1"`),
		ev(1, 7, "PjitFunction(train_step)", 1*ms, 1*ms, ``),
		ev(1, 7, "train", 12*ms, 11*ms, `"step_num":"1","_r":"1"`),
	}
	for _, k := range wantKernels() {
		var args []string
		if k.Op != "" && k.Op != "custom-call.7" {
			args = append(args, fmt.Sprintf("%q:%q", "hlo_op", k.Op))
		}
		if k.Module != "" {
			args = append(args, fmt.Sprintf("%q:%q", "hlo_module", k.Module))
		}
		if k.Memcpy {
			args = append(args, `"memcpy_details":"kind_src:device"`)
		}
		evs = append(evs, ev(2, 14, k.Name, k.Start, k.Duration, strings.Join(args, ",")))
	}
	evs = append(evs, ev(2, 1, "custom-call.7", 13*ms+1000, 2*ms, ``))
	return `{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[` + strings.Join(evs, ",\n") + `,{}]}`
}

// The Chrome trace of the same events decodes to the same kernels and steps.
func TestDecodeChromeTrace(t *testing.T) {
	p, err := Decode([]byte(chromeOf()))
	if err != nil {
		t.Fatal(err)
	}
	want := &Profile{Format: FormatChromeTrace, Kernels: wantKernels(),
		Steps: []Step{{Name: "train", Num: 0, Start: 0, Duration: 10 * ms}, {Name: "train", Num: 1, Start: 12 * ms, Duration: 11 * ms}}}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("Decode(chromeOf) mismatch (-want +got):\n%s", d)
	}
}

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		k    Kernel
		want string
	}{
		{Kernel{Name: "sm90_xmma_fprop_implicit_gemm_f32f32", Op: "cudnn-conv-bias-activation.198", Framework: "xla"}, hw.KindConv},
		{Kernel{Name: "void cudnn::engines_precompiled::convertTensor_kernel<float>", Op: "cudnn-conv-bw-filter.53", Framework: "xla"}, hw.KindConv},
		{Kernel{Name: "sm90_xmma_dgrad_implicit_gemm", Op: "command_buffer_3", Framework: "xla"}, hw.KindConv},
		{Kernel{Name: "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x", Op: "command_buffer_1156", Framework: "xla"}, hw.KindMatMul},
		{Kernel{Name: "gemm_fusion_dot_12", Op: "command_buffer_7", Framework: "xla"}, hw.KindMatMul},
		{Kernel{Name: "cutlass_80_tensorop_s1688gemm", Op: "cublas-gemm.3", Framework: "xla"}, hw.KindMatMul},
		{Kernel{Name: "input_convert_reduce_fusion", Op: "command_buffer_3", Framework: "xla"}, hw.KindFusion},
		{Kernel{Name: "loop_reduce_window_fusion", Op: "command_buffer_3", Framework: "xla"}, hw.KindPool},
		{Kernel{Name: "input_add_reduce_fusion_45", Op: "command_buffer_1156", Framework: "xla"}, hw.KindFusion},
		{Kernel{Name: "copy", Op: "copy.77", Framework: "xla"}, hw.KindCopy},
		{Kernel{Name: "MemcpyD2D", Memcpy: true}, hw.KindCopy},
		{Kernel{Name: "MemcpyHtoD", Memcpy: true}, hw.KindH2D},
		{Kernel{Name: "implicit_convolve_sgemm", Op: "model/conv1/Conv2D:Conv2D", Framework: "tf"}, hw.KindConv},
		{Kernel{Name: "ampere_sgemm_128x64_nn", Op: "model/dense/MatMul:MatMul", Framework: "tf"}, hw.KindMatMul},
		{Kernel{Name: "bn_fw_tr_1C11_kernel_NCHW", Op: "model/bn/FusedBatchNormV3:FusedBatchNormV3", Framework: "tf"}, hw.KindNorm},
		{Kernel{Name: "EigenMetaKernel", Op: "model/relu/Relu:Relu", Framework: "tf"}, hw.KindElementwise},
		{Kernel{Name: "EigenMetaKernel", Op: "SGD/ResourceApplyKerasMomentum:ResourceApplyKerasMomentum", Framework: "tf"}, hw.KindOptimizer},
		{Kernel{Name: "loop_add_fusion", Op: "cluster_0_1/xla_run:_XlaRun", Framework: "tf"}, hw.KindFusion},
	} {
		if got := Kind(tc.k); got != tc.want {
			t.Errorf("Kind(%+v) = %s, want %s", tc.k, got, tc.want)
		}
	}
}

// A corrupt or truncated profile is one error naming the file; a gzip stream cut short is
// "truncated".
func TestLoadBad(t *testing.T) {
	dir := t.TempDir()
	good := testSpace()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(good)
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"cut.xplane.pb", good[:len(good)/2], "not a valid XSpace (truncated or corrupt)"},
		{"cut.xplane.pb.gz", gz.Bytes()[:gz.Len()-6], "truncated"},
		{"junk.xplane.pb", []byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), "not a valid XSpace"},
		{"empty.xplane.pb", nil, "no GPU kernels"},
		{"cut.trace.json", []byte(chromeOf()[:300]), "not a valid Chrome trace (truncated)"},
		{"nosteps.trace.json", []byte(`{"traceEvents":[]}`), "no GPU kernels"},
		{"list.trace.json", []byte(`{"traceEvents":{}}`), "not a valid Chrome trace"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Load(%s) = %v, want one line starting with the path and holding %q", tc.name, err, tc.want)
		}
	}
	path := filepath.Join(dir, "good.xplane.pb.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("Load(good.xplane.pb.gz) = %v", err)
	}
}

func TestSummaryNoSteps(t *testing.T) {
	p, err := Decode([]byte(strings.Replace(chromeOf(), `"step_num"`, `"stepnum"`, -1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Summary(); !errors.Is(err, ErrNoSteps) {
		t.Errorf("Summary without step markers = %v, want ErrNoSteps", err)
	}
}
