package allocator

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// syntheticTrace is a 100k-op trace like record_bfc_trace.py's random mode (42% frees, sizes
// log-uniform below 2^maxLog, 30% of them multiples of 256), as CSV.
func syntheticTrace(nops int, maxLog float64, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0))
	var b bytes.Buffer
	b.WriteString("op,id,bytes\n")
	var live []int
	id := 0
	for k := 0; k < nops; k++ {
		if len(live) > 0 && rng.Float64() < 0.42 {
			i := rng.IntN(len(live))
			fmt.Fprintf(&b, "free,%d,0\n", live[i])
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
			continue
		}
		n := int64(pow2(rng.Float64() * maxLog))
		if rng.Float64() < 0.3 {
			n = max(n/256*256, 256)
		}
		fmt.Fprintf(&b, "alloc,%d,%d\n", id, max(n, 1))
		live = append(live, id)
		id++
	}
	return b.Bytes()
}

func pow2(x float64) float64 {
	r := 1.0
	for ; x >= 1; x-- {
		r *= 2
	}
	return r * (1 + x*0.6931471805599453*(1+x*0.6931471805599453/2))
}

// BenchmarkReplay replays a 100k-op trace (allocator work plus the statistics after every op,
// as `gpusim alloc replay` computes them) and reports ops/s. The limit is high enough that
// nothing fails: about 16k allocations are live at the end.
func BenchmarkReplay(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  ReplayConfig
	}{
		{"growth", ReplayConfig{Growth: true, Limit: 1 << 40}},
		{"preallocate", ReplayConfig{Limit: 1 << 40}},
		{"xla-spatial", ReplayConfig{Limit: 1 << 40, Variant: XLASpatial}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tr, err := ReadTrace(bytes.NewReader(syntheticTrace(100_000, 26, 1)), "synthetic")
			if err != nil {
				b.Fatal(err)
			}
			var sink int64
			emit := func(r ReplayRow) { sink += r.Stats.LargestFreeBlockBytes }
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := Replay(tr, bc.cfg, emit); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(tr.Ops)*b.N)/b.Elapsed().Seconds(), "ops/s")
			_ = sink
		})
	}
}

// BenchmarkReplayCSV includes writing the CSV output.
func BenchmarkReplayCSV(b *testing.B) {
	tr, err := ReadTrace(bytes.NewReader(syntheticTrace(100_000, 26, 1)), "synthetic")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := WriteReplay(io.Discard, tr, ReplayConfig{Growth: true, Limit: 1 << 40}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(tr.Ops)*b.N)/b.Elapsed().Seconds(), "ops/s")
}
