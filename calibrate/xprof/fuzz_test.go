package xprof

import (
	"runtime"
	"testing"
)

// maxLivePerByte bounds the memory a decoded profile holds per byte of input: a Kernel is 112
// bytes, kept for an XEvent of at least 2 bytes (its tag and an empty length) in a slice up to
// twice its length, 112 bytes per input byte; the rest is room for the metadata maps and the
// strings, which are copies of the input's.
const maxLivePerByte = 160

// FuzzDecode: no input panics the decoder or makes it hold more than maxLivePerByte per input
// byte (plus a MiB); every profile it accepts is sorted and its times are in range, and its
// Summary does not panic. `go test` runs the seeds; `go test -fuzz FuzzDecode
// ./calibrate/xprof` explores further.
func FuzzDecode(f *testing.F) {
	good := testSpace()
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add(good[:len(good)/3])
	f.Add([]byte(chromeOf()))
	f.Add([]byte(chromeOf()[:200]))
	f.Add([]byte(`{"traceEvents":[{},{},{"ph":"X","ts":1e400}]}`))
	f.Add([]byte{0x0a, 0x80, 0x80, 0x80, 0x80, 0x08}) // a plane whose length claims 2 GiB
	f.Fuzz(func(t *testing.T, data []byte) {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		p, err := Decode(data)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		if live := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); live > maxLivePerByte*int64(len(data))+1<<20 {
			t.Errorf("Decode of %d bytes holds %d bytes", len(data), live)
		}
		if err != nil {
			if p != nil {
				t.Errorf("Decode returned a profile and the error %v", err)
			}
			return
		}
		for i, k := range p.Kernels {
			if k.Duration < 0 || i > 0 && (k.Device < p.Kernels[i-1].Device || k.Device == p.Kernels[i-1].Device && k.Start < p.Kernels[i-1].Start) {
				t.Fatalf("kernel %d %+v: negative or out of order", i, k)
			}
		}
		if s, err := p.Summary(); err == nil && (s.Steps == 0 || s.StepTime <= 0) {
			t.Errorf("Summary = %+v with no error", s)
		}
		runtime.KeepAlive(p)
	})
}
