package allocator

import (
	"math"
	"testing"
)

// Requests near int64's maximum, after a small one, fail as OOMs and leave the statistics
// untouched (no sum wraps negative): TF rounds in size_t, where 9223372036854775553 rounds to
// 2^63, more than any pool holds.
func TestHugeRequestsAreOOMs(t *testing.T) {
	huge := []int64{math.MaxInt64, math.MaxInt64 - 254, 9223372036854775553}
	for _, limit := range []int64{750780416, math.MaxInt64} {
		allocs := map[string]Allocator{
			"bfc growth":      NewBFC("GPU_0_bfc", limit, BFCOptions{AllowGrowth: true}, nil),
			"bfc preallocate": NewBFC("GPU_0_bfc", limit, BFCOptions{}, nil),
			"async":           NewAsync("GPU_0_async", "/device:GPU:0", limit, nil),
			"platform":        NewPlatform("GPU_0_platform", "/device:GPU:0", limit, nil),
		}
		for name, a := range allocs {
			if _, ok := a.Allocate(4096); !ok {
				t.Fatalf("%s limit %d: Allocate(4096) failed", name, limit)
			}
			before := a.Stats()
			for _, n := range huge {
				if _, ok := a.Allocate(n); ok {
					t.Errorf("%s limit %d: Allocate(%d) ok, want an OOM", name, limit, n)
				}
				if got := a.Stats(); got.BytesInUse != before.BytesInUse || got.PoolBytes < 0 || got.LargestFreeBlockBytes < 0 {
					t.Errorf("%s limit %d: after Allocate(%d) stats %+v, want them as before: %+v", name, limit, n, got, before)
				}
			}
		}
	}
}
