package allocator

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestOOMLogGolden pins the whole OOM report of a fragmented growth allocator: TF's warning, the
// dump (bins, chunks per region, in-use summary, stats) and the occupancy map.
func TestOOMLogGolden(t *testing.T) {
	a := NewBFC("GPU_0_bfc", 64<<20, BFCOptions{AllowGrowth: true, AllowRetryOnFailure: true, BackpedalOnce: true}, nil)
	var hs []Handle
	for _, n := range []int64{1000, 1 << 20, 3 << 20, 5 << 20, 7<<20 + 1, 12 << 20, 100} {
		h, ok := a.Allocate(n)
		if !ok {
			t.Fatalf("Allocate(%d) failed", n)
		}
		hs = append(hs, h)
	}
	a.Free(hs[1])
	a.Free(hs[3])
	if _, ok := a.Allocate(40 << 20); ok {
		t.Fatal("Allocate(40MiB) succeeded")
	}
	golden(t, "oom_growth.log", a.LastOOM().Log)
}
