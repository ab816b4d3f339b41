//go:build cgo

package calibrate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/google/go-cmp/cmp"
)

// mockGPU is the state behind one mocked device.
type mockGPU struct {
	name, uuid, bus string
	mem             nvml.Memory_v2
	cores           int
	links           []string // remote bus IDs of active NVLink links
	procs           []nvml.ProcessInfo
	unsupported     map[string]bool // query names answering ERROR_NOT_SUPPORTED
	utilTS          []uint64
}

func busID(s string) [32]int8 {
	var b [32]int8
	for i, c := range []byte(s) {
		b[i] = int8(c)
	}
	return b
}

func ret(g *mockGPU, what string) nvml.Return {
	if g.unsupported[what] {
		return nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.SUCCESS
}

// newMockDevice is a go-nvml mock device answering like an H200 SXM (figures from the H200 of
// this project: calibrate/testdata/h200-inventory.yaml).
func newMockDevice(g *mockGPU) *mock.Device {
	return &mock.Device{
		GetNameFunc: func() (string, nvml.Return) { return g.name, nvml.SUCCESS },
		GetUUIDFunc: func() (string, nvml.Return) { return g.uuid, nvml.SUCCESS },
		GetPciInfoFunc: func() (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: busID(g.bus)}, nvml.SUCCESS
		},
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) { return g.mem, ret(g, "mem2") },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: g.mem.Total, Free: g.mem.Free, Used: g.mem.Used}, nvml.SUCCESS
		},
		GetCudaComputeCapabilityFunc: func() (int, int, nvml.Return) { return 9, 0, nvml.SUCCESS },
		GetAttributesFunc: func() (nvml.DeviceAttributes, nvml.Return) {
			return nvml.DeviceAttributes{}, nvml.ERROR_NOT_SUPPORTED // MIG handles only
		},
		GetNumGpuCoresFunc: func() (int, nvml.Return) { return g.cores, ret(g, "cores") },
		GetClockInfoFunc: func(t nvml.ClockType) (uint32, nvml.Return) {
			if t == nvml.CLOCK_SM {
				return 1980, nvml.SUCCESS
			}
			return 3201, nvml.SUCCESS
		},
		GetMaxClockInfoFunc: func(t nvml.ClockType) (uint32, nvml.Return) {
			if t == nvml.CLOCK_SM {
				return 1980, nvml.SUCCESS
			}
			return 3201, nvml.SUCCESS
		},
		GetMemoryBusWidthFunc:         func() (uint32, nvml.Return) { return 6144, nvml.SUCCESS },
		GetCurrPcieLinkGenerationFunc: func() (int, nvml.Return) { return 1, nvml.SUCCESS },
		GetMaxPcieLinkGenerationFunc:  func() (int, nvml.Return) { return 5, nvml.SUCCESS },
		GetCurrPcieLinkWidthFunc:      func() (int, nvml.Return) { return 16, nvml.SUCCESS },
		GetMaxPcieLinkWidthFunc:       func() (int, nvml.Return) { return 16, nvml.SUCCESS },
		GetPowerManagementLimitFunc:   func() (uint32, nvml.Return) { return 700000, nvml.SUCCESS },
		GetNvLinkStateFunc: func(l int) (nvml.EnableState, nvml.Return) {
			if g.unsupported["nvlink"] {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			if l < len(g.links) {
				return nvml.FEATURE_ENABLED, nvml.SUCCESS
			}
			return nvml.FEATURE_DISABLED, nvml.SUCCESS
		},
		GetNvLinkVersionFunc: func(int) (uint32, nvml.Return) { return 6, nvml.SUCCESS },
		GetNvLinkRemotePciInfoFunc: func(l int) (nvml.PciInfo, nvml.Return) {
			return nvml.PciInfo{BusId: busID(g.links[l])}, nvml.SUCCESS
		},
		GetNvLinkRemoteDeviceTypeFunc: func(int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			return nvml.NVLINK_DEVICE_TYPE_GPU, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return g.procs, ret(g, "procs") },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: 97, Memory: 40}, nvml.SUCCESS
		},
		GetPowerUsageFunc: func() (uint32, nvml.Return) { return 512345, nvml.SUCCESS },
		GetPcieThroughputFunc: func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
			if c == nvml.PCIE_UTIL_TX_BYTES {
				return 1000, nvml.SUCCESS
			}
			return 2000, nvml.SUCCESS
		},
		GetSamplesFunc: func(_ nvml.SamplingType, last uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
			var out []nvml.Sample
			for i, ts := range g.utilTS {
				if ts > last {
					var v [8]byte
					v[0] = byte(50 + i)
					out = append(out, nvml.Sample{TimeStamp: ts, SampleValue: v})
				}
			}
			return nvml.VALUE_TYPE_UNSIGNED_INT, out, nvml.SUCCESS
		},
	}
}

func newMockNVML(gpus ...*mockGPU) *mock.Interface {
	devs := make([]nvml.Device, len(gpus))
	for i, g := range gpus {
		devs[i] = newMockDevice(g)
	}
	return &mock.Interface{
		InitFunc:                       func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:                   func() nvml.Return { return nvml.SUCCESS },
		SystemGetDriverVersionFunc:     func() (string, nvml.Return) { return "580.159.04", nvml.SUCCESS },
		SystemGetNVMLVersionFunc:       func() (string, nvml.Return) { return "13.580.159.04", nvml.SUCCESS },
		SystemGetCudaDriverVersionFunc: func() (int, nvml.Return) { return 13000, nvml.SUCCESS },
		SystemGetProcessNameFunc: func(pid int) (string, nvml.Return) {
			return "python3", nvml.SUCCESS
		},
		DeviceGetCountFunc: func() (int, nvml.Return) { return len(devs), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) {
			if i < 0 || i >= len(devs) {
				return nil, nvml.ERROR_INVALID_ARGUMENT
			}
			return devs[i], nvml.SUCCESS
		},
	}
}

// h200Memory is the NVML v2 memory of an idle H200 here (docs/sources.md: total 150,754,820,096 B,
// 644,939,776 B reserved by the driver at idle).
var h200Memory = nvml.Memory_v2{Total: 150754820096, Reserved: 644939776, Free: 150109880320 - 4<<20, Used: 4 << 20}

func TestOpenNVMLNoDriver(t *testing.T) {
	for _, r := range []nvml.Return{nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED} {
		lib := &mock.Interface{InitFunc: func() nvml.Return { return r }}
		_, err := OpenNVML(lib)
		if !errors.Is(err, ErrNoDriver) {
			t.Errorf("OpenNVML(init %v) = %v, want ErrNoDriver", r, err)
		}
	}
	// The real library with a path that does not exist: the production path on a machine
	// without a driver.
	_, err := OpenNVML(nvml.New(nvml.WithLibraryPath("/nonexistent/libnvidia-ml.so.1")))
	if !errors.Is(err, ErrNoDriver) {
		t.Errorf("OpenNVML(missing library) = %v, want ErrNoDriver", err)
	}
	if _, err := OpenSystem("/nonexistent/libnvidia-ml.so.1"); !errors.Is(err, ErrNoDriver) {
		t.Errorf("OpenSystem(missing library) = %v, want ErrNoDriver", err)
	}
}

func TestInventory(t *testing.T) {
	g0 := &mockGPU{name: "NVIDIA H200", uuid: "GPU-0", bus: "00000000:18:00.0", mem: h200Memory, cores: 16896,
		links: []string{"00000000:2A:00.0", "00000000:99:00.0"},
		procs: []nvml.ProcessInfo{{Pid: 42, UsedGpuMemory: 600 << 20}}}
	g1 := &mockGPU{name: "NVIDIA H200", uuid: "GPU-1", bus: "00000000:2a:00.0", mem: h200Memory, cores: 16896,
		unsupported: map[string]bool{"nvlink": true, "procs": true, "cores": true}}
	r, err := OpenNVML(newMockNVML(g0, g1))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inv, err := r.Inventory()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inv.CUDAVersion, "13.0"; got != want {
		t.Errorf("CUDAVersion = %q, want %q", got, want)
	}
	got := inv.GPUs[0]
	want := GPUInfo{
		Index: 0, Name: "NVIDIA H200", UUID: "GPU-0", PCIBusID: "00000000:18:00.0",
		Memory:  MemoryInfo{Total: h200Memory.Total, Reserved: h200Memory.Reserved, Free: h200Memory.Free, Used: h200Memory.Used},
		CCMajor: 9, SMs: 132, SMSource: "cuda cores / 128 per SM", CUDACores: 16896,
		Clocks:             Clocks{SMMHz: 1980, MemoryMHz: 3201, MaxSMMHz: 1980, MaxMemMHz: 3201},
		MemoryBusWidthBits: 6144,
		PCIe:               PCIe{Generation: 1, MaxGeneration: 5, Width: 16, MaxWidth: 16},
		PowerLimitW:        700,
		NVLinks: []NVLink{
			{Link: 0, Version: 6, RemoteBusID: "00000000:2A:00.0", RemoteType: "gpu", PeerIndex: 1},
			{Link: 1, Version: 6, RemoteBusID: "00000000:99:00.0", RemoteType: "gpu", PeerIndex: -1},
		},
		Processes: []Process{{PID: 42, Name: "python3", UsedBytes: 600 << 20}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Inventory().GPUs[0] mismatch (-want +got):\n%s", d)
	}
	// GPU 1 answers NOT_SUPPORTED for some queries: the inventory says so instead of failing.
	wantNotes := []string{"gpu cores: ERROR_NOT_SUPPORTED", "nvlink: ERROR_NOT_SUPPORTED", "processes: ERROR_NOT_SUPPORTED"}
	if d := cmp.Diff(wantNotes, inv.GPUs[1].Notes); d != "" {
		t.Errorf("Inventory().GPUs[1].Notes mismatch (-want +got):\n%s", d)
	}
	if inv.GPUs[1].SMs != 0 {
		t.Errorf("GPUs[1].SMs = %d without a core count, want 0", inv.GPUs[1].SMs)
	}
}

func TestSample(t *testing.T) {
	g := &mockGPU{name: "NVIDIA H200", uuid: "GPU-0", bus: "00000000:18:00.0", mem: h200Memory, cores: 16896,
		procs:  []nvml.ProcessInfo{{Pid: 7, UsedGpuMemory: 1 << 30}},
		utilTS: []uint64{100, 200}}
	r, err := OpenNVML(newMockNVML(g))
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Sample()
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceSample{Index: 0, MemUsed: h200Memory.Used, MemFree: h200Memory.Free, MemReserved: h200Memory.Reserved,
		GPUUtil: 97, MemUtil: 40, SMClockMHz: 1980, PowerW: 512.345, PCIeTxBytesPerSec: 1e6, PCIeRxBytesPerSec: 2e6,
		Processes:   []Process{{PID: 7, UsedBytes: 1 << 30}},
		UtilSamples: []UtilSample{{TimeUnixMicro: 100, Percent: 50}, {TimeUnixMicro: 200, Percent: 51}}}
	if d := cmp.Diff([]DeviceSample{want}, s); d != "" {
		t.Errorf("Sample() mismatch (-want +got):\n%s", d)
	}
	// The next sample returns only NVML samples newer than those already returned.
	g.utilTS = append(g.utilTS, 300)
	s, _ = r.Sample()
	if d := cmp.Diff([]UtilSample{{TimeUnixMicro: 300, Percent: 52}}, s[0].UtilSamples); d != "" {
		t.Errorf("second Sample() util samples mismatch (-want +got):\n%s", d)
	}
}

func TestRecordWithMockNVML(t *testing.T) {
	g := &mockGPU{name: "NVIDIA H200", uuid: "GPU-0", bus: "00000000:18:00.0", mem: h200Memory, cores: 16896,
		procs: []nvml.ProcessInfo{{Pid: 9, UsedGpuMemory: 528 << 20}}}
	r, err := OpenNVML(newMockNVML(g))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Record(context.Background(), r, RecordConfig{Command: []string{"true"}, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Inventory == nil || tr.Inventory.GPUs[0].Name != "NVIDIA H200" || tr.Samples[0].Devices[0].Processes[0].UsedBytes != 528<<20 {
		t.Errorf("Record with mock NVML: inventory %+v, first sample %+v", tr.Inventory, tr.Samples[0])
	}
}
