package visibility

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func a100(i int) GPU {
	return GPU{
		PCIBusID: fmt.Sprintf("0000:%02x:00.0", 0x07+0x40*i), UUID: fmt.Sprintf("GPU-%d%d%d%d-aaaa", i, i, i, i),
		Name: "NVIDIA A100-SXM4-40GB", CCMajor: 8, CCMinor: 0, SMs: 108, MemoryBytes: 40 << 30,
	}
}

func fourA100() Host {
	h := Host{}
	for i := 0; i < 4; i++ {
		h.GPUs = append(h.GPUs, a100(i))
	}
	h.GPUs[0].MIG = []string{"MIG-1111-x", "MIG-2222-y"}
	h.GPUs[3].UUID = "GPU-2229-bbbb" // shares the prefix "GPU-222" with GPU 2
	return h
}

func str(s string) *string { return &s }

func gpusOf(p Parse) []int {
	var out []int
	for _, d := range p.Devices {
		out = append(out, d.GPU)
	}
	return out
}

func TestParseVisibleDevices(t *testing.T) {
	h := fourA100()
	tests := []struct {
		value *string
		want  []int
	}{
		{nil, []int{0, 1, 2, 3}},                 // unset: all
		{str(""), nil},                           // empty: none
		{str("2,3"), []int{2, 3}},                // the guide's example
		{str("2,1"), []int{2, 1}},                // list order is enumeration order
		{str("0,2,-1,1"), []int{0, 2}},           // CUDA guide: an invalid index ends the list
		{str("-1"), nil},                         // the usual way to hide every GPU
		{str("0,7,1"), []int{0}},                 // out of range ends the list
		{str("1gpu2,2ampere"), []int{1, 2}},      // strtoul reads the leading digits
		{str(" 1 , 0"), []int{1, 0}},             // blanks around entries
		{str("1,abc,2"), []int{1}},               // not a number ends the list
		{str("0,0"), nil},                        // a repeated device empties the list
		{str("3,1,3"), nil},                      // wherever the repeat is
		{str("1,GPU-1111-aaaa"), []int{1}},       // a UUID after integers ends the list
		{str("GPU-1111"), []int{1}},              // UUID prefix
		{str("GPU-3333-aaaa,GPU-0000"), []int{}}, // GPU 3's UUID was changed: no match ends it
		{str("GPU-0000,GPU-1111"), []int{0, 1}},
		{str("GPU-222,GPU-1111"), nil},       // ambiguous prefix ends the list
		{str("GPU-2229,1"), []int{3}},        // an integer after UUIDs ends the list
		{str("GPU-0000,GPU-0000-aaaa"), nil}, // the same GPU twice
		{str("MIG-2222"), []int{0}},
		{str("MIG-GPU-0000-aaaa/0/0"), []int{0}},
	}
	for _, tc := range tests {
		got := gpusOf(ParseVisibleDevices(h, "", tc.value))
		if len(got) == 0 && len(tc.want) == 0 {
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			v := "<unset>"
			if tc.value != nil {
				v = *tc.value
			}
			t.Errorf("ParseVisibleDevices(%q) GPUs (-want +got):\n%s", v, diff)
		}
	}
}

func TestParseVisibleDevicesMIG(t *testing.T) {
	h := fourA100()
	p := ParseVisibleDevices(h, "", str("MIG-1111,MIG-2222"))
	if len(p.Devices) != 1 || p.Devices[0].MIG != "MIG-1111-x" || len(p.Notes) == 0 {
		t.Errorf("two MIG instances: devices %+v notes %q; want only the first, with a note", p.Devices, p.Notes)
	}
}

func TestParseVisibleDevicesNotes(t *testing.T) {
	p := ParseVisibleDevices(fourA100(), "", str("0,2,-1,1"))
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], `entry 2 "-1"`) || !strings.Contains(p.Notes[0], "only the 2 device(s) before it") {
		t.Errorf("notes = %q, want one naming entry 2 and the 2 devices kept", p.Notes)
	}
}

// TestFastestFirst: on a mixed host CUDA's default order puts the fastest card first, so
// CUDA_VISIBLE_DEVICES=0 selects nvidia-smi GPU 1 unless CUDA_DEVICE_ORDER=PCI_BUS_ID.
func TestFastestFirst(t *testing.T) {
	h := Host{GPUs: []GPU{
		{PCIBusID: "0000:01:00.0", Name: "Tesla T4", CCMajor: 7, CCMinor: 5, SMs: 40},
		{PCIBusID: "0000:02:00.0", Name: "NVIDIA A100-PCIE-40GB", CCMajor: 8, CCMinor: 0, SMs: 108},
		{PCIBusID: "0000:03:00.0", Name: "Tesla T4", CCMajor: 7, CCMinor: 5, SMs: 40},
	}}
	tests := []struct {
		order string
		want  []int
	}{{"", []int{1, 0, 2}}, {FastestFirst, []int{1, 0, 2}}, {PCIBusID, []int{0, 1, 2}}}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, CUDAOrder(h, tc.order)); diff != "" {
			t.Errorf("CUDAOrder(%q) (-want +got):\n%s", tc.order, diff)
		}
	}
	if got := gpusOf(ParseVisibleDevices(h, "", str("0"))); !cmp.Equal(got, []int{1}) {
		t.Errorf("CUDA_VISIBLE_DEVICES=0 with FASTEST_FIRST selects nvidia-smi %v, want [1] (the A100)", got)
	}
	if got := gpusOf(ParseVisibleDevices(h, PCIBusID, str("0"))); !cmp.Equal(got, []int{0}) {
		t.Errorf("CUDA_VISIBLE_DEVICES=0 with PCI_BUS_ID selects nvidia-smi %v, want [0]", got)
	}
}

func env(kv ...string) Options {
	o := Options{Env: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.Env[kv[i]] = kv[i+1]
	}
	return o
}

// TestGuideExample is the seed guide's rule: CUDA_VISIBLE_DEVICES=2,3 -> TF GPU:0 is physical
// 2, and code that hard-codes GPU:1 runs on physical 3.
func TestGuideExample(t *testing.T) {
	ctx := NewContext(fourA100(), env("CUDA_VISIBLE_DEVICES", "2,3"))
	phys := ctx.PhysicalDevices()
	if len(phys) != 2 || phys[0].Name != "/physical_device:GPU:0" || phys[0].GPU != 2 {
		t.Fatalf("physical devices = %+v, want two, the first /physical_device:GPU:0 = nvidia-smi 2", phys)
	}
	devs := ctx.LogicalDevices()
	want := []LogicalDevice{
		{Index: 0, Name: "/device:GPU:0", FullName: "/job:localhost/replica:0/task:0/device:GPU:0", Physical: 0, Ordinal: 0, GPU: 2},
		{Index: 1, Name: "/device:GPU:1", FullName: "/job:localhost/replica:0/task:0/device:GPU:1", Physical: 1, Ordinal: 1, GPU: 3},
	}
	if diff := cmp.Diff(want, devs); diff != "" {
		t.Errorf("LogicalDevices (-want +got):\n%s", diff)
	}
	p, err := ctx.Place(Op{Name: "MatMul", Device: "/GPU:1"}, nil, DefaultHostLink())
	if err != nil || p.GPU != 3 || p.Logical != 1 || p.SoftPlaced {
		t.Errorf("tf.device('/GPU:1') = %+v, %v; want logical 1 on nvidia-smi GPU 3", p, err)
	}
}

func TestHardCodedMissingGPU(t *testing.T) {
	ctx := NewContext(fourA100(), env("CUDA_VISIBLE_DEVICES", "1"))
	p, err := ctx.Place(Op{Name: "MatMul", Device: "/GPU:1"}, nil, DefaultHostLink())
	if err != nil || !p.SoftPlaced || p.Logical != 0 || p.GPU != 1 {
		t.Errorf("soft placement of /GPU:1 with one GPU = %+v, %v; want GPU:0 (nvidia-smi 1), soft-placed", p, err)
	}
	off := false
	_, err = ctx.Place(Op{Name: "MatMul", Device: "/GPU:1"}, &off, DefaultHostLink())
	want := "InvalidArgumentError: Could not satisfy device specification '/job:localhost/replica:0/task:0/device:GPU:1'. enable_soft_placement=0. " +
		"Supported device types [GPU, CPU]. All available devices [/job:localhost/replica:0/task:0/device:GPU:0, /job:localhost/replica:0/task:0/device:CPU:0]. [Op:MatMul]"
	if err == nil || err.Error() != want {
		t.Errorf("hard placement error =\n%v\nwant\n%s", err, want)
	}
	var tfe *Error
	if !errors.As(err, &tfe) || tfe.Type != "InvalidArgumentError" {
		t.Errorf("error type = %T, want *Error of type InvalidArgumentError", err)
	}
}

func TestSetVisibleDevicesEmptyLeavesNoGPU(t *testing.T) {
	ctx := NewContext(fourA100(), env("CUDA_VISIBLE_DEVICES", "0,1"))
	if err := ctx.SetVisibleDevices(nil); err != nil {
		t.Fatal(err)
	}
	if n := len(ctx.LogicalDevices()); n != 0 {
		t.Errorf("after set_visible_devices([]): %d logical GPUs, want 0", n)
	}
	if n := len(ctx.PhysicalDevices()); n != 2 {
		t.Errorf("list_physical_devices still lists every CUDA device: got %d, want 2", n)
	}
	p, err := ctx.Place(Op{Name: "MatMul"}, nil, DefaultHostLink())
	if err != nil || p.Logical != -1 || p.Device != "/job:localhost/replica:0/task:0/device:CPU:0" {
		t.Errorf("default placement without GPUs = %+v, %v; want the CPU", p, err)
	}
}

func TestEmptyAndInvalidCUDAVisibleDevices(t *testing.T) {
	for _, v := range []string{"", "-1", "abc", "9"} {
		ctx := NewContext(fourA100(), env("CUDA_VISIBLE_DEVICES", v))
		if n := len(ctx.PhysicalDevices()); n != 0 {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: %d physical GPUs, want 0", v, n)
		}
	}
}

func TestConfigurationAfterInit(t *testing.T) {
	ctx := NewContext(fourA100(), Options{})
	if err := ctx.SetVisibleDevices([]int{1, 0}); err != nil {
		t.Fatal(err)
	}
	devs := ctx.LogicalDevices() // initializes
	if len(devs) != 2 || devs[0].GPU != 0 || devs[1].GPU != 1 {
		t.Errorf("set_visible_devices([gpus[1], gpus[0]]) gave %+v; TF keeps physical order", devs)
	}
	err := ctx.SetVisibleDevices([]int{0})
	if err == nil || err.Error() != "RuntimeError: Visible devices cannot be modified after being initialized" {
		t.Errorf("set_visible_devices after init = %v, want TF's RuntimeError", err)
	}
	if err := ctx.SetVisibleDevices([]int{0, 1}); err != nil {
		t.Errorf("setting the same list after init = %v, want nil (context.py returns early)", err)
	}
	err = ctx.SetLogicalDeviceConfiguration(0, []int64{1024})
	if err == nil || err.Error() != "RuntimeError: Virtual devices cannot be modified after being initialized" {
		t.Errorf("set_logical_device_configuration after init = %v, want TF's RuntimeError", err)
	}
	if err := ctx.SetVisibleDevices([]int{7}); err == nil || !strings.HasPrefix(err.Error(), "ValueError: Unrecognized device") {
		t.Errorf("unknown device = %v, want ValueError", err)
	}
}

func TestLogicalDevicesSplitOneGPU(t *testing.T) {
	ctx := NewContext(fourA100(), env("CUDA_VISIBLE_DEVICES", "3,1"))
	if err := ctx.SetLogicalDeviceConfiguration(0, []int64{2048, 4096}); err != nil {
		t.Fatal(err)
	}
	if err := ctx.SetLogicalDeviceConfiguration(1, []int64{0}); err == nil || !strings.Contains(err.Error(), "memory limit is required") {
		t.Errorf("memory_limit=None = %v, want ValueError", err)
	}
	devs := ctx.LogicalDevices()
	type dev struct {
		name     string
		gpu, vi  int
		limitMiB int64
	}
	var got []dev
	for _, d := range devs {
		got = append(got, dev{d.Name, d.GPU, d.Virtual, d.MemoryLimitMiB})
	}
	want := []dev{{"/device:GPU:0", 3, 0, 2048}, {"/device:GPU:1", 3, 1, 4096}, {"/device:GPU:2", 1, 0, 0}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(dev{})); diff != "" {
		t.Errorf("logical devices (-want +got):\n%s", diff)
	}
}

func TestTFIgnoresWeakGPUs(t *testing.T) {
	h := Host{GPUs: []GPU{a100(0), {PCIBusID: "0000:81:00.0", Name: "GRID K520", CCMajor: 3, CCMinor: 0, SMs: 8}, {PCIBusID: "0000:82:00.0", Name: "Quadro K4000", CCMajor: 3, CCMinor: 5, SMs: 4}}}
	ctx := NewContext(h, Options{})
	if n := len(ctx.LogicalDevices()); n != 1 {
		t.Errorf("%d logical GPUs, want 1 (the K520's capability and the K4000's 4 SMs are below TF's minimums)", n)
	}
	notes := strings.Join(ctx.Notes(), "\n")
	for _, want := range []string{"with Cuda compute capability 3.0. The minimum required Cuda capability is 3.5.", "with core count: 4. The minimum required count is 8."} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	ctx = NewContext(h, env("TF_MIN_GPU_MULTIPROCESSOR_COUNT", "2"))
	if n := len(ctx.LogicalDevices()); n != 2 {
		t.Errorf("TF_MIN_GPU_MULTIPROCESSOR_COUNT=2: %d logical GPUs, want 2", n)
	}
}

func TestSoftPlacementCPUOnlyOp(t *testing.T) {
	ctx := NewContext(fourA100(), Options{})
	link := HostLink{H2D: 16e9, D2H: 12e9, Latency: 10e-6}
	p, err := ctx.Place(Op{Name: "StringUpper", Device: "/GPU:0", NoGPUKernel: true, InputBytes: 12e6, OutputBytes: 16e6}, nil, link)
	if err != nil || p.Logical != -1 || !p.SoftPlaced {
		t.Fatalf("CPU-only op under /GPU:0 = %+v, %v; want soft-placed on the CPU", p, err)
	}
	want := (10e-6 + 12e6/12e9) + (10e-6 + 16e6/16e9)
	if p.CopyBytes != 28e6 || p.CopySeconds != want {
		t.Errorf("copy = %d B, %v s; want 28e6 B, %v s (D2H in, H2D out)", p.CopyBytes, p.CopySeconds, want)
	}
	off := false
	_, err = ctx.Place(Op{Name: "StringUpper", Device: "/GPU:0", NoGPUKernel: true}, &off, link)
	if err == nil || !strings.Contains(err.Error(), "Supported device types [CPU]") {
		t.Errorf("hard placement of a CPU-only op = %v, want 'Supported device types [CPU]'", err)
	}
}

func TestParseDevice(t *testing.T) {
	tests := []struct {
		in   string
		typ  string
		id   int
		full string
	}{
		{"/GPU:1", "GPU", 1, "/job:localhost/replica:0/task:0/device:GPU:1"},
		{"/gpu:0", "GPU", 0, "/job:localhost/replica:0/task:0/device:GPU:0"},
		{"GPU:2", "GPU", 2, "/job:localhost/replica:0/task:0/device:GPU:2"},
		{"/device:GPU:3", "GPU", 3, "/job:localhost/replica:0/task:0/device:GPU:3"},
		{"/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, "/job:localhost/replica:0/task:0/device:CPU:0"},
		{"/cpu:0", "CPU", 0, "/job:localhost/replica:0/task:0/device:CPU:0"},
		{"/GPU:*", "GPU", -1, "/job:localhost/replica:0/task:0/device:GPU:*"},
	}
	for _, tc := range tests {
		d, err := ParseDevice(tc.in)
		if err != nil || d.Type != tc.typ || d.ID != tc.id || d.String() != tc.full {
			t.Errorf("ParseDevice(%q) = %+v (%s), %v; want %s %d (%s)", tc.in, d, d, err, tc.typ, tc.id, tc.full)
		}
	}
	for _, bad := range []string{"/gpu:x", "/device:GPU:-1", "/foo:1", "/device"} {
		if _, err := ParseDevice(bad); err == nil || !strings.HasPrefix(err.Error(), "ValueError") {
			t.Errorf("ParseDevice(%q) = %v, want a ValueError", bad, err)
		}
	}
}

func TestSplitBatch(t *testing.T) {
	tests := []struct {
		global, n int
		want      []int
	}{
		{256, 8, []int{32, 32, 32, 32, 32, 32, 32, 32}},
		{10, 4, []int{3, 3, 2, 2}},
		{3, 4, []int{1, 1, 1, 0}},
		{64, 1, []int{64}},
	}
	for _, tc := range tests {
		got, err := SplitBatch(tc.global, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("SplitBatch(%d, %d) (-want +got):\n%s", tc.global, tc.n, diff)
		}
	}
	if _, err := SplitBatch(8, 0); err == nil {
		t.Error("SplitBatch(8, 0) = nil error, want one")
	}
}

// TestTableGolden prints the mapping table of a run with every kind of row.
func TestTableGolden(t *testing.T) {
	h := fourA100()
	h.GPUs = append(h.GPUs, GPU{PCIBusID: "0000:c1:00.0", UUID: "GPU-9999", Name: "GRID K520", CCMajor: 3, CCMinor: 0, SMs: 8})
	ctx := NewContext(h, env("CUDA_VISIBLE_DEVICES", "3,1,0,4"))
	if err := ctx.SetVisibleDevices([]int{0, 1, 3}); err != nil { // hides nvidia-smi GPU 0
		t.Fatal(err)
	}
	if err := ctx.SetLogicalDeviceConfiguration(1, []int64{8192, 8192}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, ctx.Table()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("table differs from %s:\n%s", path, buf.String())
	}
}

func FuzzParseVisibleDevices(f *testing.F) {
	for _, s := range []string{"", "0", "2,3", "0,2,-1,1", "GPU-1111", "MIG-2222", "1gpu2,2", "0,0", " 3 ,1"} {
		f.Add(s)
	}
	h := fourA100()
	f.Fuzz(func(t *testing.T, v string) {
		p := ParseVisibleDevices(h, "", &v)
		seen := map[string]bool{}
		for i, d := range p.Devices {
			if d.Ordinal != i || d.GPU < 0 || d.GPU >= len(h.GPUs) {
				t.Fatalf("%q: device %d = %+v: ordinals must count from 0 and GPUs exist", v, i, d)
			}
			k := fmt.Sprint(d.GPU, d.MIG)
			if seen[k] {
				t.Fatalf("%q: device %+v listed twice", v, d)
			}
			seen[k] = true
		}
	})
}

func ExampleContext_Place() {
	host := Host{}
	for i := 0; i < 4; i++ {
		host.GPUs = append(host.GPUs, GPU{Name: "A100", CCMajor: 8, SMs: 108})
	}
	ctx := NewContext(host, Options{Env: map[string]string{"CUDA_VISIBLE_DEVICES": "2,3"}})
	for _, d := range ctx.LogicalDevices() {
		fmt.Printf("%s is nvidia-smi GPU %d\n", d.Name, d.GPU)
	}
	p, _ := ctx.Place(Op{Name: "MatMul", Device: "/GPU:1"}, nil, DefaultHostLink())
	fmt.Println(p.Reason)
	// Output:
	// /device:GPU:0 is nvidia-smi GPU 2
	// /device:GPU:1 is nvidia-smi GPU 3
	// tf.device("/GPU:1"): logical GPU:1 is nvidia-smi GPU 3
}

func TestUniformHost(t *testing.T) {
	h := UniformHost(8, GPU{Name: "NVIDIA H100 80GB HBM3", CCMajor: 9, SMs: 132})
	if len(h.GPUs) != 8 || h.GPUs[7].UUID != "GPU-00000007-0000-4000-8000-000000000007" || h.GPUs[1].PCIBusID != "0000:17:00.0" {
		t.Errorf("UniformHost = %+v", h.GPUs)
	}
	got := gpusOf(ParseVisibleDevices(h, "", str("GPU-00000005,GPU-00000002")))
	if !cmp.Equal(got, []int{5, 2}) {
		t.Errorf("UUID prefixes on a uniform host select %v, want [5 2]", got)
	}
}

func TestUsedPhysicalAndLimits(t *testing.T) {
	ctx := NewContext(fourA100(), env("CUDA_VISIBLE_DEVICES", "3,1,2"))
	if err := ctx.SetVisibleDevices([]int{0, 2}); err != nil { // nvidia-smi 3 and 2
		t.Fatal(err)
	}
	if err := ctx.SetLogicalDeviceConfiguration(2, []int64{1024, 2048}); err != nil {
		t.Fatal(err)
	}
	var gpus []int
	for _, p := range ctx.UsedPhysical() {
		gpus = append(gpus, p.GPU)
	}
	if !cmp.Equal(gpus, []int{3, 2}) {
		t.Errorf("UsedPhysical GPUs = %v, want [3 2]", gpus)
	}
	if diff := cmp.Diff(map[int][]int64{1: {1024, 2048}}, ctx.LogicalLimits()); diff != "" {
		t.Errorf("LogicalLimits (-want +got):\n%s", diff)
	}
}
