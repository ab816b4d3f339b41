package calibrate

import (
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/gpusim/gpusim/internal/testcsv"
)

// TestSustainedClockH200Recordings: the NVML traces gpusim calibrate record took around PyTorch
// training on the H200 (testdata/torch-*.json.gz) read 1,980 MHz under load, left out the idle
// 345 MHz samples, and agree with the separate clock recording of the same board
// (testdata/h200/clock/samples.csv.gz: 20 ms NVML samples while three loads trained).
func TestSustainedClockH200Recordings(t *testing.T) {
	var traces []*Trace
	for _, name := range []string{"torch-resnet50-b64", "torch-resnet50-b128", "torch-vgg16-b64", "torch-mobilenet_v2-b64"} {
		tr, err := LoadTrace("testdata/" + name + ".json.gz")
		if err != nil {
			t.Fatal(err)
		}
		r, err := SustainedClock([]*Trace{tr}, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %.0f MHz (p10 %.0f, p90 %.0f) over %d of %d samples, %.0f W", name, r.MedianMHz, r.P10MHz, r.P90MHz, r.Busy, r.Samples, r.MedianPowerW)
		if r.Busy == 0 || r.Busy >= r.Samples {
			t.Errorf("%s: %d busy of %d samples: want the idle ones left out", name, r.Busy, r.Samples)
		}
		traces = append(traces, tr)
	}
	all, err := SustainedClock(traces, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := clockRecordingMedian(t, "../testdata/h200/clock/samples.csv.gz")
	if all.MedianMHz != want {
		t.Errorf("the NVML traces' sustained clock %.0f MHz, the clock recording's under load %.0f MHz", all.MedianMHz, want)
	}
	if w := all.Width(); !(w > 0 && w < 0.01) {
		t.Errorf("width %g of a clock steady at %.0f MHz, want one 15 MHz bin (%g)", w, all.MedianMHz, math.Log1p(15/all.MedianMHz))
	}
	ps := MeasuredClock([]Param{{Name: ParamSustainedClock, Prior: 1.5e9, Width: widthClock}, {Name: "memory", Prior: 0.88, Width: widthMemory}}, all)
	if ps[0].Prior != all.Hz() || ps[0].Width != all.Width() || ps[1].Prior != 0.88 {
		t.Errorf("MeasuredClock: %+v, want the clock at %g Hz with the reading's width, the rest as they were", ps, all.Hz())
	}
}

// clockRecordingMedian is the median SM clock of the clock recording's training loads (its
// rows whose load is not "idle").
func clockRecordingMedian(t *testing.T, path string) float64 {
	_, rows := testcsv.Read(t, path)
	var mhz []float64
	for _, r := range rows {
		if r[0] == "idle" {
			continue
		}
		v, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		mhz = append(mhz, v)
	}
	return median(mhz)
}

// A throttled card: the busy samples' median, not the idle clock nor a moment's dip; a trace
// without a busy sample is an error.
func TestSustainedClockThrottled(t *testing.T) {
	tr := &Trace{}
	for i, c := range []struct{ util, mhz int }{{0, 210}, {0, 210}, {100, 1695}, {98, 1710}, {100, 1710}, {97, 1410}, {100, 1725}, {3, 210}} {
		tr.Samples = append(tr.Samples, Sample{TNS: int64(i), Devices: []DeviceSample{{Index: 0, GPUUtil: c.util, SMClockMHz: c.mhz, PowerW: 250}, {Index: 1, GPUUtil: 100, SMClockMHz: 1000}}})
	}
	r, err := SustainedClock([]*Trace{tr}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.MedianMHz != 1710 || r.Busy != 5 || r.Samples != 8 {
		t.Errorf("reading %+v, want 1710 MHz over 5 busy of 8 samples", r)
	}
	idle := &Trace{Samples: []Sample{{Devices: []DeviceSample{{Index: 0, GPUUtil: 0, SMClockMHz: 210}}}}}
	if _, err := SustainedClock([]*Trace{idle}, 0); !errors.Is(err, ErrNoBusyClock) {
		t.Errorf("an idle trace: %v, want ErrNoBusyClock", err)
	}
}
