package calibrate

import (
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/gpusim/gpusim/hw"
)

// ProfileFromInventory builds the GPU profile of inventory GPU i. When the NVML name matches a
// built-in profile ("NVIDIA H200" -> h200), that profile's spec-sheet peaks and efficiency are
// kept and what NVML measures replaces the rest: total memory, compute capability, SM count,
// the PCIe link and the NVLink links. Otherwise the peaks are derived from the SM count and
// clocks (see derivePeaks).
func ProfileFromInventory(inv *Inventory, i int) (hw.GPU, error) {
	if i < 0 || i >= len(inv.GPUs) {
		return hw.GPU{}, fmt.Errorf("gpu %d: the inventory has %d", i, len(inv.GPUs))
	}
	gi := inv.GPUs[i]
	g, matched := builtinFor(gi.Name)
	if !matched {
		if err := derivePeaks(&g, gi); err != nil {
			return hw.GPU{}, fmt.Errorf("gpu %d (%s): %w", i, gi.Name, err)
		}
		g.Name = profileName(gi.Name)
	}
	g.Description = fmt.Sprintf("%s (NVML inventory of %s, driver %s)", gi.Name, gi.UUID, inv.DriverVersion)
	if gi.Memory.Total > 0 {
		g.MemoryBytes = int64(gi.Memory.Total)
	}
	if gi.CCMajor > 0 {
		g.CCMajor, g.CCMinor = gi.CCMajor, gi.CCMinor
	}
	if gi.SMs > 0 {
		g.SMs = gi.SMs
	}
	if bw := pcieBandwidth(gi.PCIe); bw > 0 {
		g.PCIeBandwidth = bw
	}
	if !hasNote(gi.Notes, "nvlink") {
		g.NVLinkBandwidth = nvlinkBandwidth(gi.NVLinks)
	}
	if g.ContextBytes == 0 || g.ContextBytes >= g.MemoryBytes {
		g.ContextBytes = contextPrior
	}
	if g.LaunchOverhead == 0 {
		g.LaunchOverhead = hw.DefaultLaunchOverhead
	}
	if err := g.WriteProfile(io.Discard); err != nil { // validates
		return hw.GPU{}, err
	}
	return g, nil
}

// contextPrior is the context size assumed for an unknown GPU: docs/sources.md, "CUDA context per
// process: measured on H200: JAX 528 MiB".
const contextPrior = 528 << 20

func builtinFor(nvmlName string) (hw.GPU, bool) {
	key := profileName(nvmlName)
	for _, k := range []string{key, strings.TrimSuffix(key, "-sxm"), strings.TrimSuffix(key, "-pcie")} {
		if g, err := hw.LookupGPU(k); err == nil {
			return g, true
		}
	}
	// Fall back to the built-ins' descriptions ("NVIDIA H100 80GB HBM3 (SXM5)" for "NVIDIA H100 80GB HBM3").
	for _, n := range hw.GPUNames() {
		g, err := hw.LookupGPU(n)
		if err == nil && strings.HasPrefix(strings.ToLower(g.Description), strings.ToLower(nvmlName)) {
			return g, true
		}
	}
	return hw.GPU{Efficiency: hw.DefaultEfficiency()}, false
}

// profileName turns an NVML name into a profile name: "NVIDIA H200" -> "h200",
// "Tesla V100-SXM2-16GB" -> "v100-sxm2-16gb".
func profileName(nvmlName string) string {
	s := strings.ToLower(strings.TrimSpace(nvmlName))
	for _, p := range []string{"nvidia ", "tesla ", "geforce "} {
		s = strings.TrimPrefix(s, p)
	}
	return strings.Join(strings.Fields(s), "-")
}

func hasNote(notes []string, prefix string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// pcieGTps is the per-lane data rate of each PCIe generation in GB/s per direction after line
// encoding (PCI-SIG base specifications: 2.5/5 GT/s with 8b/10b; 8/16/32 GT/s with 128b/130b;
// 64 GT/s PAM4 with FLIT, 242/256).
var pcieGTps = map[int]float64{1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}

// pcieBandwidth is the host link's bandwidth per direction. The generation is the maximum the
// GPU supports: GPUs drop to a lower generation when idle to save power, and the inventory is
// usually taken idle.
func pcieBandwidth(p PCIe) float64 {
	gen := max(p.MaxGeneration, p.Generation)
	w := p.Width
	if w == 0 {
		w = p.MaxWidth
	}
	return pcieGTps[gen] * 1e9 * float64(w)
}

// nvlinkBandwidth is the total NVLink bandwidth per direction: 25 GB/s per link for NVLink 2
// to 4 (V100 6 links = 150 GB/s, A100 12 = 300, H100 18 = 450; NVIDIA datasheets), 50 GB/s per
// link for NVLink 5 (B200 18 links = 900 GB/s). NVML reports NVLink 5 links as version 7
// (nvml.h, NVML_NVLINK_VERSION_5_0).
func nvlinkBandwidth(links []NVLink) float64 {
	bw := 0.0
	for _, l := range links {
		if l.Version >= 7 {
			bw += 50e9
		} else {
			bw += 25e9
		}
	}
	return bw
}

// derivePeaks fills the rates of a GPU no built-in profile describes from NVML's facts:
// FP32 = SMs x FP32 lanes x 2 (FMA) x max SM clock; Tensor Core rates from the dense FLOP per
// clock per SM of each architecture (NVIDIA architecture whitepapers: Volta/Turing 1024 FP16;
// GA100 1024 TF32 and 2048 FP16/BF16; GA10x/AD10x 512 TF32 and 1024 FP16/BF16 with FP32
// accumulate; Hopper 2048 TF32 and 4096 FP16/BF16); memory bandwidth = max memory clock x 2
// (double data rate) x bus width / 8.
func derivePeaks(g *hw.GPU, gi GPUInfo) error {
	lanes := FP32LanesPerSM(gi.CCMajor, gi.CCMinor)
	if gi.SMs == 0 || gi.Clocks.MaxSMMHz == 0 || lanes == 0 {
		return fmt.Errorf("no built-in profile and NVML gave no SM count, SM clock or known compute capability %d.%d", gi.CCMajor, gi.CCMinor)
	}
	if gi.Clocks.MaxMemMHz == 0 || gi.MemoryBusWidthBits == 0 {
		return fmt.Errorf("no built-in profile and NVML gave no memory clock or bus width")
	}
	perClock := float64(gi.SMs) * float64(gi.Clocks.MaxSMMHz) * 1e6
	g.PeakFP32 = perClock * float64(lanes) * 2
	var tf32, half float64
	switch cc := gi.CCMajor*10 + gi.CCMinor; {
	case cc >= 90:
		tf32, half = 2048, 4096
	case cc == 80:
		tf32, half = 1024, 2048
	case cc > 80:
		tf32, half = 512, 1024
	case cc >= 70:
		half = 1024
	}
	g.PeakTF32, g.PeakFP16 = perClock*tf32, perClock*half
	if gi.CCMajor >= 8 {
		g.PeakBF16 = g.PeakFP16
	}
	if g.PeakFP16 == 0 {
		g.PeakFP16 = g.PeakFP32
	}
	g.MemBandwidth = float64(gi.Clocks.MaxMemMHz) * 1e6 * 2 * float64(gi.MemoryBusWidthBits) / 8
	return nil
}

// Prior widths of the parameters (PriorParams): the standard deviation of log(value/prior)
// before a fit. For an efficiency it is the root mean square of log(predicted/measured) over
// the H200 micro-benchmarks of its op kind and path, priced with the built-in h200 profile and
// the shape mechanisms of hw.Cost (hw's TestMicroShapeAccuracy and TestXLAMemoryKinds rows,
// testdata/h200): how far one kind's kernels sit from the profile's one value for the kind. A
// model's kernels are a few such shapes, so its kind can sit that far off. These hold for the
// GPU they were measured on; a profile that carries them to another GPU (every built-in but
// h200) or recordings of another framework's kernels need them wider (FitOptions'
// WidthScale, `--prior-width-scale`).
const (
	// widthConv: convolutions, 0.28-0.39 per path (TF32 NHWC 0.32 over 9 shapes, TF32 NCHW
	// 0.28 over 11, FP32 NCHW 0.39 over 11, FP16/BF16 NHWC 0.35 over 18; micro.csv and
	// nchw/micro.csv).
	widthConv = 0.32
	// widthGEMMFP32, widthGEMMTF32, widthGEMMHalf: cuBLAS GEMMs of micro.csv (12, 10 and 12
	// shapes): 0.07, 0.32, 0.05.
	widthGEMMFP32 = 0.07
	widthGEMMTF32 = 0.32
	widthGEMMHalf = 0.05
	// widthVector: math on the CUDA cores, read from the depthwise convolutions hw prices on
	// that path (micro.csv's convolutions with as many groups as channels: 0.16 over 6
	// shapes).
	widthVector = 0.16
	// widthMemory: XLA's loop fusions of 64M elements and more against the streaming
	// efficiency (memkinds/micro.csv add, relu, chain8_fused and casts, float32 and
	// bfloat16: 0.087 over 16 rows, bfloat16 relu's 0.69-0.70 of peak the farthest).
	widthMemory = 0.087
	// widthMemoryKind: a per-kind memory efficiency (memory_by_kind), from Keras's batch norm
	// under XLA (memkinds/micro.csv bn_fwd: 0.063 over 12 float32 shapes, 0.115 over 15
	// half-precision ones): the wider.
	widthMemoryKind = 0.115
	// widthLaunch: the launch overhead is not measured (hw.DefaultLaunchOverhead): it is
	// placed between the H200's device floor of 0.96 us and PyTorch eager's 11.2 us per op,
	// a log range of 2.46, half of it either side.
	widthLaunch = 1.23
	// widthHost: the host costs (step overhead, Keras on JAX's dispatch scale) are properties
	// of the host that ran the recording, which the profile does not describe: a width of a
	// factor e, so that the recordings decide.
	widthHost = 1.0
	// widthContext: the CUDA context differs by framework and driver (528 MiB under JAX,
	// 621 MiB under PyTorch on the H200, docs/sources.md): a factor e, the recordings decide.
	widthContext = 1.0
	// widthClock: the SM clock under a training load, against hw's power-limit rule (or the
	// boost clock). GPU Boost moves it over its voltage-frequency table with the board's power
	// and temperature, 1,740-1,965 MHz under a 3D load in the GPU Boost 4.0 reviews the rule
	// cites (hw/clock.go): a log range of 0.12. One parameter for every compute rate of the
	// card, so two step times in different precisions both inform it.
	widthClock = 0.12
)

// efficiencyParams are the efficiency keys a fit may adjust, one per math path of the cost
// model's matrix and vector kernels, with their widths; "memory" and each memory_by_kind entry
// come on top. Ratios between paths (attention, pseudo_half), ramps, gaps and PCIe are left
// alone.
var efficiencyParams = []struct {
	key    string
	width  float64
	source string
}{
	{"fp32", widthGEMMFP32, "H200 GEMM micro-benchmarks, FP32"},
	{"tf32", widthGEMMTF32, "H200 GEMM micro-benchmarks, TF32"},
	{"half", widthGEMMHalf, "H200 GEMM micro-benchmarks, FP16/BF16"},
	{"conv_fp32", widthConv, "H200 convolution micro-benchmarks"},
	{"conv_tf32", widthConv, "H200 convolution micro-benchmarks"},
	{"conv_half", widthConv, "H200 convolution micro-benchmarks"},
	{"vector", widthVector, "H200 depthwise micro-benchmarks"},
	{"memory", widthMemory, "H200 loop-fusion micro-benchmarks (XLA)"},
}

// PriorParams are the parameters a fit may adjust on profile g, at g's values, with their prior
// widths (see widthConv and the others): every efficiency of a math path and of memory
// (memory and each memory_by_kind entry), the launch and step overheads, Keras on JAX's host
// dispatch scale, the CUDA context and the sustained SM clock (one factor on every compute rate,
// from hw's power-limit rule). widthScale multiplies the efficiencies' widths (1: as
// measured on the H200). Fit leaves out those its observations do not identify.
func PriorParams(g hw.GPU, widthScale float64) []Param {
	if !(widthScale > 0) {
		widthScale = 1
	}
	e := efficiencyValues(g.Efficiency)
	var ps []Param
	for _, k := range efficiencyParams {
		if v := e[k.key]; v > 0 {
			ps = append(ps, Param{Name: k.key, Prior: v, Width: k.width * widthScale, Source: k.source, Min: v * 0.05, Max: maxEfficiency})
		}
	}
	kinds := make([]string, 0, len(g.Efficiency.MemoryByKind))
	for k := range g.Efficiency.MemoryByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		if v := g.Efficiency.MemoryByKind[k]; v > 0 {
			ps = append(ps, Param{Name: "memory_by_kind." + k, Prior: v, Width: widthMemoryKind * widthScale, Source: "H200 batch-norm micro-benchmarks (XLA)", Min: v * 0.05, Max: maxEfficiency})
		}
	}
	launch := g.LaunchOverhead
	if launch <= 0 {
		launch = hw.DefaultLaunchOverhead
	}
	if clk := g.SustainedClock(); clk > 0 {
		ps = append(ps, Param{Name: ParamSustainedClock, Prior: clk, Width: widthClock, Source: "hw's power-limit rule; GPU Boost's V/f range", Min: clk / 2, Max: clk * 1.5})
	}
	ps = append(ps, Param{Name: ParamLaunchOverhead, Prior: launch, Width: widthLaunch, Source: "between the H200's device floor and PyTorch eager", Min: 1e-7, Max: 1e-3})
	if g.StepOverhead > 0 {
		ps = append(ps, Param{Name: ParamStepOverhead, Prior: g.StepOverhead, Width: widthHost, Source: "the host's: uninformative", Min: 1e-6, Max: 1})
	}
	ps = append(ps, Param{Name: ParamHostDispatchScale, Prior: g.DispatchScale(), Width: widthHost, Source: "the host's: uninformative", Min: 0.05, Max: 10})
	ctx := float64(g.ContextBytes)
	if ctx <= 0 {
		ctx = contextPrior
	}
	ps = append(ps, Param{Name: ParamContextBytes, Prior: ctx, Width: widthContext, Source: "by framework and driver: uninformative", Min: 16 << 20, Max: 8 << 30})
	return ps
}

// maxEfficiency caps a fitted efficiency: no kernel runs faster than the peak. (hw accepts up
// to 1.5 in a profile file, for peaks a spec sheet understates; a fit must not invent that.)
const maxEfficiency = 1.0

// efficiencyValues are e's float fields by their profile keys.
func efficiencyValues(e hw.Efficiency) map[string]float64 {
	out := map[string]float64{}
	v := reflect.ValueOf(e)
	for i := 0; i < v.NumField(); i++ {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if f := v.Field(i); f.Kind() == reflect.Float64 {
			out[key] = f.Float()
		}
	}
	return out
}

// ApplyParams returns g with p's values in place of its own: an efficiency key ("conv_tf32",
// "memory") sets that efficiency, "memory_by_kind.K" that kind's memory efficiency, and
// launch_overhead_s, step_overhead_s, host_dispatch_scale and context_bytes the profile's
// fields. The fields are found by their profile keys, so that the efficiencies hw adds for new
// paths are reached without a change here. g itself is not changed.
func ApplyParams(g hw.GPU, p Params) hw.GPU {
	e := g.Efficiency
	if e.MemoryByKind != nil {
		m := make(map[string]float64, len(e.MemoryByKind))
		for k, v := range e.MemoryByKind {
			m[k] = v
		}
		e.MemoryByKind = m
	}
	v := reflect.ValueOf(&e).Elem()
	keys := map[string]int{}
	for i := 0; i < v.NumField(); i++ {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if v.Field(i).Kind() == reflect.Float64 {
			keys[key] = i
		}
	}
	for _, name := range p.Names() {
		val := p[name]
		switch {
		case name == ParamLaunchOverhead:
			g.LaunchOverhead = val
		case name == ParamStepOverhead:
			g.StepOverhead = val
		case name == ParamHostDispatchScale:
			if val != g.DispatchScale() { // 0 in a profile reads as 1: keep it so
				g.HostDispatchScale = val
			}
		case name == ParamContextBytes:
			g.ContextBytes = int64(math.Round(val))
		case name == ParamSustainedClock:
			if val != g.SustainedClock() { // the rule's own value: keep the rule
				g.SustainedClockHz = val
			}
		case strings.HasPrefix(name, "memory_by_kind."):
			if e.MemoryByKind == nil {
				e.MemoryByKind = map[string]float64{}
			}
			e.MemoryByKind[strings.TrimPrefix(name, "memory_by_kind.")] = val
		default:
			if i, ok := keys[name]; ok {
				v.Field(i).SetFloat(val)
			}
		}
	}
	g.Efficiency = e
	return g
}
