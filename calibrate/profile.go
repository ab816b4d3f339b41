package calibrate

import (
	"fmt"
	"io"
	"math"
	"reflect"
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

// PriorParams are the fit parameters a profile starts with: scales of 1 and its own launch
// and step overheads and context size, the convolution efficiencies tied to the compute scale (set
// ConvScale to 1 to fit them apart), the host dispatch scale not fitted (set HostDispatchScale
// to the profile's DispatchScale for a scenario on JAX, whose steps pay it).
func PriorParams(g hw.GPU) Params {
	return Params{ComputeScale: 1, MemoryScale: 1, LaunchOverhead: g.LaunchOverhead, ContextBytes: float64(g.ContextBytes), StepOverhead: g.StepOverhead}
}

// maxEfficiency caps a scaled efficiency: no kernel runs faster than the peak. (hw accepts up
// to 1.5 in a profile file, for peaks a spec sheet understates; a fit must not invent that.)
const maxEfficiency = 1.0

// ApplyParams returns g with p applied: ComputeScale multiplies the compute efficiencies (the
// fractions of a peak FLOP rate: fp32, tf32, half, vector and every conv_* path), MemoryScale
// the memory efficiencies (memory and each memory_by_kind entry), each capped at 1 (the peak);
// a positive ConvScale multiplies the conv_* ones instead of ComputeScale; LaunchOverhead,
// ContextBytes and a positive StepOverhead and HostDispatchScale replace the profile's. Ratios between paths (attention,
// pseudo_half), ramps, gaps and PCIe are left alone.
func ApplyParams(g hw.GPU, p Params) hw.GPU {
	e := g.Efficiency
	sc := func(v, s float64) float64 { return math.Min(v*s, maxEfficiency) }
	// The fields are found by their profile keys, so that the efficiencies hw adds for new
	// paths (conv_tf32, ...) are scaled without a change here.
	v := reflect.ValueOf(&e).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if f.Kind() != reflect.Float64 {
			continue
		}
		switch {
		case strings.HasPrefix(key, "conv_") && p.ConvScale > 0:
			f.SetFloat(sc(f.Float(), p.ConvScale))
		case key == "fp32" || key == "tf32" || key == "half" || key == "vector" || strings.HasPrefix(key, "conv_"):
			f.SetFloat(sc(f.Float(), p.ComputeScale))
		case key == "memory":
			f.SetFloat(sc(f.Float(), p.MemoryScale))
		}
	}
	if e.MemoryByKind != nil {
		m := make(map[string]float64, len(e.MemoryByKind))
		for k, v := range e.MemoryByKind {
			m[k] = sc(v, p.MemoryScale)
		}
		e.MemoryByKind = m
	}
	g.Efficiency = e
	g.LaunchOverhead = p.LaunchOverhead
	if p.StepOverhead > 0 {
		g.StepOverhead = p.StepOverhead
	}
	if p.HostDispatchScale > 0 {
		g.HostDispatchScale = p.HostDispatchScale
	}
	g.ContextBytes = int64(math.Round(p.ContextBytes))
	return g
}
