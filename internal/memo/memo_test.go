package memo

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestBuildsOnceAndEvictsLeastRecent(t *testing.T) {
	c := New[int, int](3, 1<<30, nil)
	builds := map[int]int{}
	get := func(k int) int {
		v, err := c.Get(k, func() (int, error) { builds[k]++; return k * 10, nil })
		if err != nil || v != k*10 {
			t.Fatalf("Get(%d) = %d, %v, want %d", k, v, err, k*10)
		}
		return v
	}
	get(1)
	get(2)
	get(3)
	get(1) // 1 is now the most recent: 2 goes first
	get(4)
	if c.Len() != 3 {
		t.Errorf("Len = %d, want 3", c.Len())
	}
	get(1)
	get(2)
	if builds[1] != 1 || builds[2] != 2 {
		t.Errorf("builds %v: want 1 built once (kept as recent), 2 twice (evicted)", builds)
	}
}

func TestByteBudget(t *testing.T) {
	c := New[int, []byte](100, 1000, func(b []byte) int64 { return int64(len(b)) })
	for k := range 50 {
		c.Get(k, func() ([]byte, error) { return make([]byte, 300), nil })
		if c.Bytes() > 1000 {
			t.Fatalf("after %d values Bytes = %d, over the budget of 1000", k+1, c.Bytes())
		}
	}
	if c.Len() != 3 || c.Bytes() != 900 {
		t.Errorf("Len, Bytes = %d, %d; want 3, 900", c.Len(), c.Bytes())
	}
	// A value over the whole budget is still returned and kept alone.
	v, _ := c.Get(-1, func() ([]byte, error) { return make([]byte, 5000), nil })
	if len(v) != 5000 || c.Len() != 1 {
		t.Errorf("a 5000-byte value: got %d bytes, Len %d; want it returned and kept alone", len(v), c.Len())
	}
}

func TestConcurrentCallersShareOneBuild(t *testing.T) {
	c := New[string, int](10, 1<<30, nil)
	var builds atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Get("k", func() (int, error) { builds.Add(1); return 7, nil })
		}()
	}
	wg.Wait()
	if builds.Load() != 1 {
		t.Errorf("%d builds for one key, want 1", builds.Load())
	}
	if _, err := c.Get("cut", func() (int, error) { return 0, context.Canceled }); !errors.Is(err, context.Canceled) {
		t.Errorf("Get of a cancelled build = %v, want context.Canceled", err)
	}
	if v, err := c.Get("cut", func() (int, error) { return 3, nil }); v != 3 || err != nil {
		t.Errorf("Get after a cancelled build = %d, %v; want it built again", v, err)
	}
	boom := errors.New("boom")
	if _, err := c.Get("bad", func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("Get of a failing build = %v, want its error", err)
	}
}
