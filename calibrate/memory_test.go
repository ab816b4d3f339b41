package calibrate

import (
	"errors"
	"testing"
)

const mb = 1 << 20

// curveTrace is a trace of one device whose job holds curve[i] MiB at sample i (through a
// process with pid 100, or through the device's used memory when noProcs), on a GPU with
// freeMiB free at the start and 300 MiB used by someone else (pid 1).
func curveTrace(freeMiB int64, noProcs bool, curve ...int64) *Trace {
	other := Process{PID: 1, UsedBytes: 300 * mb}
	t := &Trace{Version: TraceVersion, Baseline: []DeviceSample{{Index: 0, MemUsed: 300 * mb, MemFree: uint64(freeMiB * mb), Processes: []Process{other}}}}
	for i, c := range curve {
		d := DeviceSample{Index: 0, MemUsed: uint64((300 + c) * mb)}
		if !noProcs {
			d.Processes = []Process{other}
			if c > 0 {
				d.Processes = append(d.Processes, Process{PID: 100, UsedBytes: uint64(c * mb)})
			}
		}
		t.Samples = append(t.Samples, Sample{TNS: int64(i) * 50e6, Devices: []DeviceSample{d}})
	}
	return t
}

func TestAnalyzeMemory(t *testing.T) {
	const free = 140000
	tests := []struct {
		name    string
		trace   *Trace
		mode    Mode
		context int64
		plateau int64
	}{
		{
			// JAX default: context and 75% of free memory arrive together.
			name:  "preallocate with the context",
			trace: curveTrace(free, false, 0, 0, 105528, 105528, 105530, 105530, 105530, 0),
			mode:  ModePreallocate, context: 0, plateau: 105530 * mb,
		},
		{
			// TF default: context first, then the pool (free minus 1800 MiB) at the first op.
			name:  "preallocate after the context",
			trace: curveTrace(free, false, 0, 528, 528, 528, 138728, 138728, 138728),
			mode:  ModePreallocate, context: 528 * mb, plateau: 138728 * mb,
		},
		{
			// BFC growth: regions of 2, 4, 8, ... MiB are summed inside one sample; what shows
			// is a staircase of rising steps.
			name:  "growth",
			trace: curveTrace(free, false, 528, 528, 528, 592, 592, 720, 720, 720, 1488, 1488, 3536, 3536, 3536, 0),
			mode:  ModeGrowth, context: 528 * mb, plateau: 3536 * mb,
		},
		{
			name:  "limit: one jump to a cap, flat",
			trace: curveTrace(free, false, 0, 528, 528, 4624, 4624, 4624, 4624),
			mode:  ModeLimit, context: 528 * mb, plateau: 4624 * mb,
		},
		{
			name:  "growth read from device memory when NVML lists no processes",
			trace: curveTrace(free, true, 0, 600, 600, 1600, 1600, 5600, 5600),
			mode:  ModeGrowth, context: 600 * mb, plateau: 5600 * mb,
		},
		{
			name:  "context only",
			trace: curveTrace(free, false, 0, 528, 528, 530, 0),
			mode:  ModeUnknown, context: 530 * mb, plateau: 530 * mb,
		},
		{
			name:  "a one-sample spike is not a level",
			trace: curveTrace(free, false, 528, 528, 9000, 528, 528),
			mode:  ModeUnknown, context: 528 * mb, plateau: 528 * mb,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AnalyzeMemory(tt.trace)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mode != tt.mode || got.ContextBytes != tt.context || got.PlateauBytes != tt.plateau {
				t.Errorf("AnalyzeMemory = mode %s, context %d MiB, plateau %d MiB (%s); want %s, %d MiB, %d MiB",
					got.Mode, got.ContextBytes/mb, got.PlateauBytes/mb, got.Reason, tt.mode, tt.context/mb, tt.plateau/mb)
			}
		})
	}
}

func TestAnalyzeMemoryPicksTheJobsDevice(t *testing.T) {
	tr := curveTrace(140000, false, 528, 528, 2000, 2000, 4000, 4000)
	// GPU 1 is busy with another process that was there before the job.
	busy := DeviceSample{Index: 1, MemUsed: 50000 * mb, Processes: []Process{{PID: 2, UsedBytes: 50000 * mb}}}
	tr.Baseline = append(tr.Baseline, busy)
	for i := range tr.Samples {
		tr.Samples[i].Devices = append([]DeviceSample{busy}, tr.Samples[i].Devices...)
	}
	got, err := AnalyzeMemory(tr)
	if err != nil {
		t.Fatal(err)
	}
	if got.Device != 0 || got.Mode != ModeGrowth {
		t.Errorf("AnalyzeMemory picked GPU %d (%s), want GPU 0 (growth)", got.Device, got.Mode)
	}
}

func TestAnalyzeMemoryEmpty(t *testing.T) {
	if _, err := AnalyzeMemory(&Trace{}); !errors.Is(err, ErrNoMemory) {
		t.Errorf("AnalyzeMemory(empty) = %v, want ErrNoMemory", err)
	}
}

// Any curve gives a mode, levels in time order, and a plateau no lower than the context.
func FuzzAnalyzeMemory(f *testing.F) {
	f.Add([]byte{0, 5, 5, 90, 90, 90, 0}, uint16(140))
	f.Add([]byte{5, 5, 6, 6, 10, 10, 20, 20}, uint16(140))
	f.Fuzz(func(t *testing.T, curve []byte, freeGiB uint16) {
		mib := make([]int64, len(curve))
		for i, c := range curve {
			mib[i] = int64(c) * 1024 // 0..255 GiB in MiB
		}
		a, err := AnalyzeMemory(curveTrace(int64(freeGiB)*1024, false, mib...))
		if err != nil {
			if len(curve) == 0 && errors.Is(err, ErrNoMemory) {
				return
			}
			t.Fatalf("AnalyzeMemory(%v): %v", curve, err)
		}
		switch a.Mode {
		case ModePreallocate, ModeGrowth, ModeLimit, ModeUnknown:
		default:
			t.Errorf("mode %q", a.Mode)
		}
		if a.PlateauBytes < a.ContextBytes {
			t.Errorf("plateau %d < context %d", a.PlateauBytes, a.ContextBytes)
		}
		for i := 1; i < len(a.Levels); i++ {
			if a.Levels[i].StartNS <= a.Levels[i-1].EndNS {
				t.Errorf("levels out of order: %+v", a.Levels)
			}
		}
	})
}
