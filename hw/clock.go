package hw

import "math"

// Sustained clocks. The peaks of a profile are the spec sheet's, at the card's boost clock.
// Under a training load a GPU runs at the highest clock its power limit allows: NVIDIA's GPU
// Boost raises the clock "until the graphics card hits its predetermined Power Target" and
// lowers it when the board draws more (nvidia.com, GeForce "GPU Boost" technology page), so a
// board whose power limit is low for its SM count and boost clock trains below that boost.
//
// The rule: the SMs' dynamic power is C V^2 f per SM, and over GPU Boost's range the voltage
// rises with the clock (the voltage-frequency tables of the GPU Boost 4.0 reviews: 0.875-1.081
// V over 1,740-1,965 MHz under a 3D load), so power grows as SMs x f^3. An architecture's
// reference board (sustainedRefs) fixes the power one of its SMs draws at a clock under a
// training load; another board of that architecture holds
//
//	f = min(boost, f_ref x cbrt(P_limit / P_ref x SMs_ref / SMs)).
//
// The reference is a board known to train at its boost: the H200, whose NVML recording
// (testdata/h200/clock) shows 1,980 MHz, its maximum, throughout three training loads at
// 583-607 W of its 700 W limit; for the other architectures the board whose spec defines the
// family's clock at its power target: a GeForce flagship's boost clock is the clock GPU Boost
// holds at its power target under a typical load (the same NVIDIA page), a Tesla SXM board's
// boost clock the application clock its datasheet quotes its peaks at. So the reference boards
// themselves are unchanged, and a blower workstation card with a higher rated boost than its
// GeForce twin at the same power (Quadro RTX 6000: 72 SMs at 1,770 MHz on 260 W, against the
// RTX 2080 Ti's 68 at 1,545 on 250 W) trains near its twin's clock, not at its spec sheet's.
// Memory power, leakage and temperature are left out: they make the real clock of a low-power
// board somewhat lower still, and the voltage curve's steepness (above linear in those
// tables) somewhat higher; no recording of such a board is at hand to tell them apart.

// Cooling classes of a board (GPU.Cooling): how its heat leaves, which is why its power limit
// is what it is (a blower card exhausts through one slot, a passive card needs the server's
// fans). The clock rule reads the power limit only; the class is reported with it.
const (
	CoolingSXM     = "sxm"      // a baseboard module (SXM, OAM) under the server's airflow
	CoolingPassive = "passive"  // a data-centre PCIe card without fans of its own
	CoolingBlower  = "blower"   // a radial fan exhausting out of the case (workstation cards)
	CoolingOpenAir = "open-air" // axial fans blowing into the case (GeForce from the RTX 20 series)
	CoolingLaptop  = "laptop"   // a notebook GPU (Max-Q): the notebook's cooling sets the limit
)

// CoolingClasses lists the values GPU.Cooling may take ("" is unknown).
var CoolingClasses = []string{CoolingSXM, CoolingPassive, CoolingBlower, CoolingOpenAir, CoolingLaptop}

// sustainedRef is what one SM of an architecture draws under a training load at a clock.
type sustainedRef struct {
	sms   int
	hz    float64 // clock, Hz
	watts float64 // board power at that clock
}

// H200TrainingPower is the H200's board power under a training load at its 1,980 MHz maximum
// clock: the highest of the three loads' median power in testdata/h200/clock/loads.csv
// (ResNet-50 bf16 autocast NHWC at batch 256, 606.7 W; FP32 589.7 W, TF32 583.2 W).
const H200TrainingPower = 606.7

// sustainedRefNames names each architecture's reference board (see the rule above). Hopper's is
// the H200 at its recorded training power, the others each at its power limit.
var sustainedRefNames = map[string]string{
	"pascal":          "gtx1080ti",
	"pascal-gp100":    "p100-16gb",
	"volta":           "v100-16gb",
	"turing":          "rtx2080ti",
	"ga100":           "a100-40gb",
	"ga10x":           "rtx3090",
	"ad10x":           "rtx4090",
	"hopper":          "h200",
	"blackwell":       "b200",
	"blackwell-gb20x": "rtx5090",
}

// sustainedRefs is sustainedRefNames resolved once, in init, from the built-in profiles, by
// architecture (archIndex: Cost reads it for every Work).
var sustainedRefs [len(architectures)]sustainedRef

func buildSustainedRefs() {
	for arch, name := range sustainedRefNames {
		for _, g := range builtin {
			if g.Name != name {
				continue
			}
			ref := sustainedRef{sms: g.SMs, hz: g.BoostClock(), watts: g.PowerLimit}
			if name == "h200" {
				ref.watts = H200TrainingPower
			}
			if g.Architecture() != arch || ref.watts <= 0 || ref.hz <= 0 {
				panic("hw: sustained-clock reference " + name + " for " + arch + " has no power limit or clock")
			}
			sustainedRefs[archIndexOf(arch)] = ref
		}
	}
}

// BoostClock is the clock (Hz) the profile's FP32 peak is quoted at: PeakFP32 over two FLOPs
// per FMA, the FP32 lanes per SM and the SMs (13.4 TFLOP/s on 68 SMs of 64 lanes: the RTX
// 2080 Ti's 1,540 MHz reference boost).
func (g GPU) BoostClock() float64 { return g.boostClock() }

func (g *GPU) boostClock() float64 {
	if g.SMs <= 0 {
		return 0
	}
	return g.PeakFP32 / (2 * float64(g.FP32LanesPerSM()) * float64(g.SMs))
}

// SustainedClock is the clock (Hz) the GPU holds under a training load: the measured one
// (SustainedClockHz) where the profile has it, else the boost clock, or less where the board's
// power limit binds (the rule above). A profile without a power limit
// (a calibrated one: its peaks come from the clock it was measured at) or of an architecture
// without a reference is taken at its boost clock.
func (g GPU) SustainedClock() float64 { return g.BoostClock() * g.sustainedScale() }

// clockScale is SustainedClock / BoostClock: the factor on every compute rate. Cost computes it
// once into its own copy of the profile (GPU.clk), where every rate of the Work reads it.
func (g *GPU) clockScale() float64 {
	if g.clk > 0 {
		return g.clk
	}
	return g.sustainedScale()
}

// sustainedScale computes clockScale from the measured clock, else the profile's power limit
// and clock.
func (g *GPU) sustainedScale() float64 {
	if g.SustainedClockHz > 0 {
		if boost := g.boostClock(); boost > 0 {
			return g.SustainedClockHz / boost
		}
	}
	if g.PowerLimit <= 0 || g.SMs <= 0 || g.PeakFP32 <= 0 {
		return 1
	}
	ref := sustainedRefs[g.archIndex()]
	if ref.hz <= 0 {
		return 1
	}
	boost := g.boostClock()
	f := ref.hz * math.Cbrt(g.PowerLimit/ref.watts*float64(ref.sms)/float64(g.SMs))
	return min(f, boost) / boost
}

// boards holds each built-in profile's power limit (W, the board's default: its TDP or TGP)
// and cooling, from the same spec sheets as its other figures (catalog.go's specSources; the
// power figure is the datasheet's "max power consumption", "TDP" or "total graphics power" of
// the reference board). A16: its 250 W board shared by four GPUs.
var boards = map[string]struct {
	watts   float64
	cooling string
}{
	"v100-16gb": {300, CoolingSXM}, "v100-32gb": {300, CoolingSXM}, "v100-sxm3-32gb": {350, CoolingSXM},
	"v100-pcie-16gb": {250, CoolingPassive}, "v100-pcie-32gb": {250, CoolingPassive}, "titan-v": {250, CoolingBlower},
	"a100-40gb": {400, CoolingSXM}, "a100-80gb": {400, CoolingSXM},
	"a100-pcie-40gb": {250, CoolingPassive}, "a100-pcie-80gb": {300, CoolingPassive}, "a30": {165, CoolingPassive},
	"h100-80gb": {700, CoolingSXM}, "h200": {700, CoolingSXM}, "h100-pcie": {350, CoolingPassive}, "h100-nvl": {400, CoolingPassive},
	"b200": {1000, CoolingSXM},
	"t4":   {70, CoolingPassive}, "l4": {72, CoolingPassive}, "a10": {150, CoolingPassive}, "a16": {62.5, CoolingPassive},
	"a40": {300, CoolingPassive}, "l40": {300, CoolingPassive}, "l40s": {350, CoolingPassive},
	"gtx1080ti": {250, CoolingBlower}, "gtx1080": {180, CoolingBlower}, "titan-x-pascal": {250, CoolingBlower}, "titan-xp": {250, CoolingBlower},
	"p100-16gb": {300, CoolingSXM}, "p100-pcie-16gb": {250, CoolingPassive}, "p100-pcie-12gb": {250, CoolingPassive},
	"rtx2070": {175, CoolingOpenAir}, "rtx2080": {215, CoolingOpenAir}, "rtx2080ti": {250, CoolingOpenAir},
	"rtx2070-maxq": {80, CoolingLaptop}, "rtx2080-maxq": {80, CoolingLaptop}, "titan-rtx": {280, CoolingOpenAir},
	"quadro-rtx5000": {230, CoolingBlower}, "quadro-rtx6000": {260, CoolingBlower}, "quadro-rtx8000": {260, CoolingBlower},
	"rtx3060": {170, CoolingOpenAir}, "rtx3060ti": {200, CoolingOpenAir}, "rtx3070": {220, CoolingOpenAir},
	"rtx3070ti": {290, CoolingOpenAir}, "rtx3080": {320, CoolingOpenAir}, "rtx3080-12gb": {350, CoolingOpenAir},
	"rtx3080ti": {350, CoolingOpenAir}, "rtx3090": {350, CoolingOpenAir}, "rtx3090ti": {450, CoolingOpenAir},
	"rtx-a2000": {70, CoolingBlower}, "rtx-a2000-12gb": {70, CoolingBlower}, "rtx-a4000": {140, CoolingBlower},
	"rtx-a4500": {200, CoolingBlower}, "rtx-a5000": {230, CoolingBlower}, "rtx-a5500": {230, CoolingBlower},
	"rtx-a6000": {300, CoolingBlower},
	"rtx4070":   {200, CoolingOpenAir}, "rtx4070ti": {285, CoolingOpenAir}, "rtx4080": {320, CoolingOpenAir},
	"rtx4090": {450, CoolingOpenAir}, "rtx5090": {575, CoolingOpenAir},
}
