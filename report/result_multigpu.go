package report

// This file renders the multi-GPU parts of a train.Result: the device mapping table, the
// all-reduce, the scaling over one GPU, gradient accumulation and the warnings.

import (
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/analysis"

	"github.com/gpusim/gpusim/train"
	"github.com/gpusim/gpusim/train/visibility"
)

// DeviceRowJSON is one row of the device mapping: how nvidia-smi's GPU became a TF device.
type DeviceRowJSON struct {
	NvidiaSMI      int    `json:"nvidia_smi"`
	PCIBusID       string `json:"pci_bus_id"`
	UUID           string `json:"uuid"`
	Name           string `json:"name"`
	CUDAOrdinal    int    `json:"cuda_ordinal"` // -1: hidden from CUDA
	PhysicalDevice string `json:"physical_device,omitempty"`
	TFDevice       string `json:"tf_device,omitempty"`
	MemoryLimitMiB int64  `json:"memory_limit_mib,omitempty"`
	Status         string `json:"status"`
}

// AllReduceJSON is the gradient all-reduce of one optimizer update.
type AllReduceJSON struct {
	Impl                   string  `json:"impl"`
	Topology               string  `json:"topology"`
	NumPacks               int     `json:"num_packs"`
	Calls                  int     `json:"nccl_calls"`
	GradientBytes          int64   `json:"gradient_bytes"`
	Seconds                float64 `json:"seconds"`
	BusBW                  float64 `json:"busbw_bytes_per_s"`
	PackBufferBytes        int64   `json:"pack_buffer_bytes"`
	ReduceDeviceExtraBytes int64   `json:"reduce_device_extra_bytes"`
	BucketBytes            int64   `json:"bucket_bytes,omitempty"`
	BucketedSeconds        float64 `json:"bucketed_seconds,omitempty"`
	BucketedExposedSeconds float64 `json:"bucketed_exposed_seconds,omitempty"`
	LaunchSeconds          float64 `json:"nccl_launch_seconds"`
	Overlapped             bool    `json:"overlapped"`
	ExposedSeconds         float64 `json:"exposed_seconds,omitempty"`
	OverlappedSeconds      float64 `json:"overlapped_seconds,omitempty"`
	NCCLBufferBytes        int64   `json:"nccl_buffer_bytes"`
	// Horovod is set for a Horovod run: its fusion buckets.
	Horovod *HorovodJSON `json:"horovod,omitempty"`
}

// HorovodJSON is Horovod's all-reduce of one step (train.HorovodAllReduce).
type HorovodJSON struct {
	FusionThresholdBytes int64               `json:"fusion_threshold_bytes"`
	Compression          string              `json:"compression"`
	WireBytes            int64               `json:"wire_bytes"`
	NCCLSeconds          float64             `json:"nccl_seconds"`
	CopySeconds          float64             `json:"fusion_copy_seconds"`
	PostReduceSeconds    float64             `json:"post_reduce_seconds"`
	CycleSeconds         float64             `json:"cycle_seconds"`
	Buckets              []HorovodBucketJSON `json:"buckets"`
}

// HorovodBucketJSON is one fused response.
type HorovodBucketJSON struct {
	Bytes     int64   `json:"bytes"`
	Gradients int     `json:"gradients"`
	Seconds   float64 `json:"seconds"`
}

// ScalingJSON compares the run with one replica alone on one GPU.
type ScalingJSON struct {
	SingleBatch      int         `json:"single_gpu_batch"`
	SingleStepTimeS  float64     `json:"single_gpu_step_time_s"`
	SingleThroughput float64     `json:"single_gpu_throughput_samples_per_s"`
	Speedup          float64     `json:"speedup"`
	Efficiency       float64     `json:"efficiency"`
	SingleBreakdown  []ShareJSON `json:"single_gpu_breakdown"`
}

// MultiGPUJSON holds the multi-GPU keys of ResultJSON.
type MultiGPUJSON struct {
	DeviceTable []DeviceRowJSON `json:"device_table,omitempty"`
	AllReduce   *AllReduceJSON  `json:"allreduce,omitempty"`
	Scaling     *ScalingJSON    `json:"scaling,omitempty"`
	Warnings    []string        `json:"warnings"`
}

// multiGPUJSON fills j's multi-GPU keys and the per-device accumulation and all-reduce bytes.
func multiGPUJSON(j *ResultJSON, res *analysis.Result) {
	m := &j.MultiGPUJSON
	m.Warnings = append([]string{}, res.Warnings...)
	for _, r := range res.DeviceTable {
		m.DeviceTable = append(m.DeviceTable, DeviceRowJSON{NvidiaSMI: r.NvidiaSMI, PCIBusID: r.PCIBusID, UUID: r.UUID, Name: r.Name,
			CUDAOrdinal: r.CUDAOrdinal, PhysicalDevice: r.PhysicalDevice, TFDevice: r.TFDevice, MemoryLimitMiB: r.MemoryLimitMiB, Status: r.Status})
	}
	if a := res.AllReduce; a != nil {
		m.AllReduce = &AllReduceJSON{Impl: a.Impl, Topology: a.Topology, NumPacks: a.NumPacks, Calls: a.Calls, GradientBytes: a.GradientBytes,
			Seconds: a.Seconds, BusBW: finite(a.BusBW), PackBufferBytes: a.PackBufferBytes, ReduceDeviceExtraBytes: a.ReduceDeviceExtraBytes,
			BucketBytes: a.BucketBytes, BucketedSeconds: a.BucketedSeconds, BucketedExposedSeconds: a.BucketedExposedSeconds,
			LaunchSeconds: a.LaunchSeconds, Overlapped: a.Overlapped, ExposedSeconds: a.ExposedSeconds, OverlappedSeconds: a.OverlappedSeconds,
			NCCLBufferBytes: a.NCCLBufferBytes}
		if h := a.Horovod; h != nil {
			hj := &HorovodJSON{FusionThresholdBytes: h.FusionThresholdBytes, Compression: h.Compression, WireBytes: h.WireBytes,
				NCCLSeconds: h.NCCLSeconds, CopySeconds: h.CopySeconds, PostReduceSeconds: h.PostReduceSeconds, CycleSeconds: h.CycleSeconds,
				Buckets: []HorovodBucketJSON{}}
			for _, b := range h.Buckets {
				hj.Buckets = append(hj.Buckets, HorovodBucketJSON{Bytes: b.Bytes, Gradients: b.Gradients, Seconds: b.Seconds})
			}
			m.AllReduce.Horovod = hj
		}
	}
	if s := res.Scaling; s != nil {
		m.Scaling = &ScalingJSON{SingleBatch: s.SingleBatch, SingleStepTimeS: s.SingleStepTime, SingleThroughput: finite(s.SingleThroughput),
			Speedup: finite(s.Speedup), Efficiency: finite(s.Efficiency), SingleBreakdown: []ShareJSON{}}
		for _, sh := range s.Single {
			m.Scaling.SingleBreakdown = append(m.Scaling.SingleBreakdown, ShareJSON{Category: sh.Category, Seconds: sh.Seconds})
		}
	}
	for i := range j.Devices {
		if i < len(res.Devices) {
			d := res.Devices[i]
			j.Devices[i].AccumulatorBytes = d.AccumulatorBytes
			j.Devices[i].AllReduceStartBytes = d.AllReduceStartBytes
			j.Devices[i].AllReducePeakBytes = d.AllReducePeakBytes
		}
	}
}

// showDeviceTable reports whether the mapping says more than "GPU 0 is GPU:0": several GPUs,
// a GPU hidden or ignored, renumbering, or logical devices.
func showDeviceTable(rows []visibility.Row) bool {
	if len(rows) > 1 {
		return true
	}
	for _, r := range rows {
		if r.Status != "used" || r.NvidiaSMI != r.CUDAOrdinal || r.TFDevice != fmt.Sprintf("/device:GPU:%d", r.NvidiaSMI) {
			return true
		}
	}
	return false
}

// writeMultiGPUText writes the device mapping, the all-reduce, the scaling over one GPU and
// the accumulation buffers, when the run has them.
func writeMultiGPUText(p func(string, ...any), res *analysis.Result) {
	sec := func(v float64) string { return FormatValue(v, UnitSeconds) }
	bytes := func(v int64) string { return FormatBytes(float64(v)) }
	if showDeviceTable(res.DeviceTable) {
		var b strings.Builder
		if err := visibility.WriteTable(&b, res.DeviceTable); err == nil {
			p("\nDevices (nvidia-smi numbering vs TF's)\n")
			for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
				p("  %s\n", l)
			}
		}
	}
	if a := res.AllReduce; a != nil && a.Horovod != nil {
		writeHorovod(p, a)
	} else if a != nil {
		p("\nAll-reduce per update: %s over %s, %s of gradients per replica", a.Impl, a.Topology, bytes(a.GradientBytes))
		if a.Impl == "nccl" {
			p(", num_packs=%d (%d NCCL call(s))", a.NumPacks, a.Calls)
		}
		p("\n  time %s, bus bandwidth %s (nccl-tests busbw), NCCL kernel launches %s\n", sec(a.Seconds), FormatValue(a.BusBW, UnitBytesPerSecond), sec(a.LaunchSeconds))
		if a.Overlapped {
			p("  overlapped with backward (Horovod fusion buckets): %s hidden, %s after the slowest backward pass (median)\n", sec(a.OverlappedSeconds), sec(a.ExposedSeconds))
		}
		if a.NCCLBufferBytes > 0 {
			p("  NCCL buffers: %s per GPU outside TF's allocator (ring and tree connections' buffers)\n", bytes(a.NCCLBufferBytes))
		}
		p("  pack buffers: %s per GPU on top of what the GPU holds when the all-reduce starts", bytes(a.PackBufferBytes))
		if a.ReduceDeviceExtraBytes > 0 {
			p(", plus %s on the reducing GPU:0", bytes(a.ReduceDeviceExtraBytes))
		}
		p("\n")
		if a.BucketBytes > 0 {
			p("  overlapped alternative (%s buckets during backward, not what Keras fit does): %s of communication, %s exposed\n",
				bytes(a.BucketBytes), sec(a.BucketedSeconds), sec(a.BucketedExposedSeconds))
		}
	}
	if s := res.Scaling; s != nil {
		writeScaling(p, res, s)
	}
	if res.AccumulationSteps > 1 && len(res.Devices) > 0 && res.Devices[0].AccumulatorBytes > 0 {
		micro := 0
		if len(res.ReplicaBatches) > 0 {
			micro = (res.ReplicaBatches[0] + res.AccumulationSteps - 1) / res.AccumulationSteps
		}
		p("\nGradient accumulation: %d micro-batches of %d per replica per update; accumulators hold %s per GPU for the whole run\n",
			res.AccumulationSteps, micro, bytes(res.Devices[0].AccumulatorBytes))
	}
}

// writeScaling explains the speedup over one GPU category by category: compute (forward,
// backward, optimizer, launch), input wait, all-reduce and waiting for the slowest replica.
func writeScaling(p func(string, ...any), res *analysis.Result, s *analysis.Scaling) {
	sec := func(v float64) string { return FormatValue(v, UnitSeconds) }
	group := func(sh []train.Share) (compute, input, allreduce, sync float64) {
		for _, x := range sh {
			switch x.Category {
			case train.CatInput:
				input += x.Seconds
			case train.CatAllReduce:
				allreduce += x.Seconds
			case train.CatSync:
				sync += x.Seconds
			default:
				compute += x.Seconds
			}
		}
		return
	}
	c1, i1, a1, s1 := group(s.Single)
	cn, in, an, sn := group(res.Breakdown)
	p("\nScaling: %d replicas vs one GPU alone with batch %d\n", s.Replicas, s.SingleBatch)
	tab := [][]string{{"", "1 GPU", fmt.Sprintf("%d replicas", s.Replicas), "delta"}}
	row := func(name string, a, b float64) {
		tab = append(tab, []string{name, sec(a), sec(b), signed(b - a)})
	}
	row("compute", c1, cn)
	row("input wait", i1, in)
	row("all-reduce", a1, an)
	row("slowest replica", s1, sn)
	row("step", s.SingleStepTime, res.StepTime)
	tab = append(tab, []string{"throughput", FormatValue(s.SingleThroughput, UnitSamplesPerSec), FormatValue(res.Throughput, UnitSamplesPerSec), ""})
	var b strings.Builder
	writeTable(&b, tab)
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		p("%s\n", strings.TrimRight(l, " "))
	}
	p("  speedup %.2fx on %d replicas: scaling efficiency %s", s.Speedup, s.Replicas, FormatValue(s.Efficiency, UnitRatio))
	var why []string
	if d := an - a1; d > 0 {
		why = append(why, fmt.Sprintf("the all-reduce adds %s", sec(d)))
	}
	if d := in - i1; d > 0 {
		why = append(why, fmt.Sprintf("waiting for input adds %s (one host feeds %d replicas)", sec(d), s.Replicas))
	}
	if d := sn - s1; d > 0 {
		why = append(why, fmt.Sprintf("waiting for the slowest replica adds %s", sec(d)))
	}
	if d := cn - c1; d > 0 {
		why = append(why, fmt.Sprintf("compute takes %s longer (one runtime dispatching every replica's ops, each replica's own kernel speed, replicas sharing a GPU or a larger share)", sec(d)))
	}
	if len(why) > 0 {
		p("; per step %s", strings.Join(why, ", "))
	}
	p("\n")
}

func signed(v float64) string {
	if v < 0 {
		return "-" + FormatValue(-v, UnitSeconds)
	}
	return "+" + FormatValue(v, UnitSeconds)
}

// writeWarnings writes the run's warnings.
func writeWarnings(p func(string, ...any), res *analysis.Result) {
	for _, w := range res.Warnings {
		p("\nwarning: %s\n", w)
	}
}

// writeHorovod writes Horovod's all-reduce: its fusion buckets, not MirroredStrategy's packs.
func writeHorovod(p func(string, ...any), a *train.AllReduceInfo) {
	sec := func(v float64) string { return FormatValue(v, UnitSeconds) }
	bytes := func(v int64) string { return FormatBytes(float64(v)) }
	h := a.Horovod
	p("\nAll-reduce per update: Horovod (NCCL) over %s, %s of gradients per replica", a.Topology, bytes(a.GradientBytes))
	if h.Compression != "none" {
		p(", %s on the wire (Compression.%s)", bytes(h.WireBytes), h.Compression)
	}
	p("\n  %d fusion bucket(s) of at most %s (HOROVOD_FUSION_THRESHOLD), one ncclAllReduce each:", len(h.Buckets), bytes(h.FusionThresholdBytes))
	for i, b := range h.Buckets {
		if i == 6 {
			p(" ... (%d more)", len(h.Buckets)-i)
			break
		}
		p(" %s (%d tensors) %s;", bytes(b.Bytes), b.Gradients, sec(b.Seconds))
	}
	p("\n  NCCL %s, bus bandwidth %s (nccl-tests busbw), fusion-buffer copies %s, NCCL kernel launches %s\n",
		sec(h.NCCLSeconds), FormatValue(a.BusBW, UnitBytesPerSecond), sec(h.CopySeconds), sec(a.LaunchSeconds))
	if h.PostReduceSeconds > 0 {
		p("  per-gradient ops after the all-reduce (average, decompression; no XLA): %s\n", sec(h.PostReduceSeconds))
	}
	p("  overlapped with backward (background thread every %s): %s hidden, %s after the slowest backward pass (median)\n",
		sec(h.CycleSeconds), sec(a.OverlappedSeconds), sec(a.ExposedSeconds))
	if a.NCCLBufferBytes > 0 {
		p("  NCCL buffers: %s per GPU outside TF's allocator (ring and tree connections' buffers)\n", bytes(a.NCCLBufferBytes))
	}
	p("  fusion buffer: %s per GPU, allocated once through TF's allocator\n", bytes(h.FusionThresholdBytes))
}
