package hw

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The rule's reference for Hopper is the H200's NVML recording while training: the profile's
// power limit and boost clock are the board's, the training power the recording's highest
// median, and the rule gives the clock every load held (1,980 MHz at 583-607 W of 700 W).
func TestSustainedClockMatchesH200Recording(t *testing.T) {
	g, _ := LookupGPU("h200")
	raw, err := os.ReadFile("../testdata/h200/clock/device.json")
	if err != nil {
		t.Fatal(err)
	}
	var dev struct {
		PowerLimit float64 `json:"default_power_limit_w"`
		MaxSMMHz   float64 `json:"max_sm_mhz"`
	}
	if err := json.Unmarshal(raw, &dev); err != nil {
		t.Fatal(err)
	}
	if g.PowerLimit != dev.PowerLimit || math.Abs(g.BoostClock()/1e6-dev.MaxSMMHz) > 1 {
		t.Errorf("h200 profile: %g W, boost %.1f MHz; NVML: %g W, %g MHz", g.PowerLimit, g.BoostClock()/1e6, dev.PowerLimit, dev.MaxSMMHz)
	}
	f, err := os.Open("../testdata/h200/clock/loads.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("loads.csv: %v (%d rows)", err, len(rows))
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	maxPower := 0.0
	for _, r := range rows[1:] {
		p, _ := strconv.ParseFloat(r[col("power_w_median")], 64)
		mhz, _ := strconv.ParseFloat(r[col("sm_mhz_median")], 64)
		maxPower = max(maxPower, p)
		if got := g.SustainedClock() / 1e6; math.Abs(got-mhz) > 1 {
			t.Errorf("%s: the rule gives %.1f MHz, NVML read %g MHz", r[col("load")], got, mhz)
		}
	}
	if math.Abs(maxPower-H200TrainingPower) > 0.05 {
		t.Errorf("H200TrainingPower %g W, the recording's highest median %g W", H200TrainingPower, maxPower)
	}
}

// Every built-in board carries its power limit and cooling class; no board trains above its
// boost clock; each architecture's reference board trains at it; and a board whose power
// limit is low for its SMs and rated boost trains below it: the Quadro RTX 6000 and 8000
// (blower, 260 W, 72 SMs at 1,770 MHz) near the RTX 2080 Ti's 1,540 MHz (250 W, 68 SMs), so
// their spec sheets' 22% more FP32 than the 2080 Ti's is about 4% at the clocks they train at.
func TestSustainedClocks(t *testing.T) {
	for _, n := range GPUNames() {
		g, _ := LookupGPU(n)
		if g.PowerLimit <= 0 || !slices.Contains(CoolingClasses, g.Cooling) {
			t.Errorf("%s: power limit %g W, cooling %q", n, g.PowerLimit, g.Cooling)
		}
		if s := g.SustainedClock() / g.BoostClock(); !(s > 0.5 && s <= 1) {
			t.Errorf("%s: sustained clock %.3f of boost", n, s)
		}
	}
	for arch, n := range sustainedRefNames {
		g, _ := LookupGPU(n)
		if g.SustainedClock() != g.BoostClock() {
			t.Errorf("%s reference %s: sustained %.0f MHz, boost %.0f", arch, n, g.SustainedClock()/1e6, g.BoostClock()/1e6)
		}
	}
	ti, _ := LookupGPU("rtx2080ti")
	for _, n := range []string{"quadro-rtx6000", "quadro-rtx8000"} {
		q, _ := LookupGPU(n)
		if r := q.SustainedClock() / q.BoostClock(); r > 0.9 {
			t.Errorf("%s: trains at %.2f of its boost clock, want under 0.9", n, r)
		}
		fp32 := q.PeakFP32 * q.SustainedClock() / q.BoostClock() / (ti.PeakFP32 * ti.SustainedClock() / ti.BoostClock())
		if !(fp32 > 1 && fp32 < 1.08) {
			t.Errorf("%s: %.3f x the RTX 2080 Ti's FP32 rate at the clocks they train at, want 1-1.08", n, fp32)
		}
	}
	// Low-power data-centre boards of a family run below the SXM reference's clock.
	for _, n := range []string{"t4", "a10", "l4", "a100-pcie-40gb"} {
		g, _ := LookupGPU(n)
		if !(g.SustainedClock() < 0.95*g.BoostClock()) {
			t.Errorf("%s (%g W): sustained %.0f MHz, boost %.0f: want the power limit to bind", n, g.PowerLimit, g.SustainedClock()/1e6, g.BoostClock()/1e6)
		}
	}
}

// The clock scales a compute-bound kernel's time and leaves a memory-bound one alone.
func TestSustainedClockScalesCompute(t *testing.T) {
	q, _ := LookupGPU("quadro-rtx6000")
	boost := q
	boost.PowerLimit = 0 // unknown: the boost clock
	gemm := Work{Kind: KindMatMul, FLOPs: 2 * 8192 * 8192 * 8192, Bytes: 3 * 8192 * 8192 * 4}
	copyW := Work{Kind: KindCopy, Bytes: 1 << 30}
	s := q.SustainedClock() / q.BoostClock()
	gt, bt := q.Time(gemm), boost.Time(gemm)
	if r := bt / gt; math.Abs(r-s) > 0.02 {
		t.Errorf("GEMM at the sustained clock runs %.3f as fast as at the boost clock, want about %.3f", r, s)
	}
	if q.Time(copyW) != boost.Time(copyW) {
		t.Errorf("a copy's time moved with the SM clock: %g against %g", q.Time(copyW), boost.Time(copyW))
	}
}

// A measured clock (an NVML recording's, or a calibration's fit) replaces the rule, above the
// rated boost too (GPU Boost runs a cool GeForce board there), and a profile file checks it.
func TestMeasuredSustainedClock(t *testing.T) {
	g, _ := LookupGPU("rtx2080ti")
	gemm := Work{Kind: KindMatMul, FLOPs: 2 * 8192 * 8192 * 8192, Bytes: 3 * 8192 * 8192 * 4}
	m := g
	m.SustainedClockHz = 1.2 * g.BoostClock()
	if got := m.SustainedClock(); got != m.SustainedClockHz {
		t.Errorf("SustainedClock %g with a measured %g", got, m.SustainedClockHz)
	}
	if r := g.Time(gemm) / m.Time(gemm); math.Abs(r-m.SustainedClockHz/g.SustainedClock()) > 0.02 {
		t.Errorf("a GEMM at the measured clock runs %.3f times as fast as at the rule's, want %.3f", r, m.SustainedClockHz/g.SustainedClock())
	}
	var b bytes.Buffer
	if err := m.WriteProfile(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ParseProfile("m.yaml", b.Bytes())
	if err != nil || back.SustainedClockHz != m.SustainedClockHz {
		t.Fatalf("round trip: %v, clock %g want %g", err, back.SustainedClockHz, m.SustainedClockHz)
	}
	bad := strings.Replace(b.String(), "sustained_clock_hz:", "sustained_clock_hz: 5 #", 1)
	if _, err := ParseProfile("m.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "sustained_clock_hz") {
		t.Errorf("a 5 Hz clock: %v, want an error naming sustained_clock_hz", err)
	}
}
