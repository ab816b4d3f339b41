package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Every index runs once, on at most jobs goroutines at a time.
func TestRunRunsEachIndexOnce(t *testing.T) {
	for _, jobs := range []int{0, 1, 3, 100} {
		var mu sync.Mutex
		var ran []int
		var now, most atomic.Int32
		err := Run(context.Background(), 50, jobs, func(i int) error {
			n := now.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			mu.Lock()
			ran = append(ran, i)
			mu.Unlock()
			now.Add(-1)
			return nil
		})
		if err != nil {
			t.Fatalf("jobs %d: %v", jobs, err)
		}
		slices.Sort(ran)
		for i, r := range ran {
			if r != i || len(ran) != 50 {
				t.Fatalf("jobs %d: ran %v, want 0..49 once each", jobs, ran)
			}
		}
		if limit := int32(max(jobs, 1)); most.Load() > limit {
			t.Errorf("jobs %d: %d calls at once", jobs, most.Load())
		}
	}
	if err := Run(context.Background(), 0, 4, func(int) error { panic("called") }); err != nil {
		t.Errorf("n 0: %v", err)
	}
}

// The error is the lowest failing index's, whatever order the calls end in: here index 7
// fails at once and index 3 only after 7 has failed, and 3 is reported; no index is handed
// out after the first failure is seen.
func TestRunReportsLowestFailure(t *testing.T) {
	for range 20 {
		sevenFailed := make(chan struct{})
		var mu sync.Mutex
		var ran []int
		err := Run(context.Background(), 100, 8, func(i int) error {
			mu.Lock()
			ran = append(ran, i)
			mu.Unlock()
			switch i {
			case 7:
				close(sevenFailed)
				return errors.New("seven")
			case 3:
				<-sevenFailed
				return errors.New("three")
			}
			if i > 7 {
				// Indices past the failure are slow, as real work is: the failing worker
				// records its error while they run, so the hand-out has something to stop.
				// (Instant ones could all be handed out before the failure is recorded.)
				<-sevenFailed
				time.Sleep(time.Millisecond)
			}
			return nil
		})
		var pe *Error
		if !errors.As(err, &pe) || pe.Index != 3 || err.Error() != "three" {
			t.Fatalf("err %v (%#v), want index 3's", err, pe)
		}
		if len(ran) == 100 {
			t.Errorf("every index ran after the failure: want the hand-out to stop")
		}
	}
}

// An ended context stops the hand-out: the indices before the reported one ran, none from it
// on, and it is reported with the cause. (The index handed out as ctx ends may still run: a
// free worker and the ended ctx are both ready then.)
func TestRunStopsOnContext(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := fmt.Errorf("ctrl-c")
	var mu sync.Mutex
	ran := map[int]bool{}
	err := Run(ctx, 10, 1, func(i int) error {
		mu.Lock()
		ran[i] = true
		mu.Unlock()
		if i == 4 {
			cancel(cause)
		}
		return nil
	})
	var pe *Error
	if !errors.As(err, &pe) || pe.Index < 5 || pe.Index > 6 || !errors.Is(err, cause) || err.Error() != "not run: ctrl-c" {
		t.Fatalf("err %v, want index 5 or 6 not run: ctrl-c", err)
	}
	for i := range 10 {
		if ran[i] != (i < pe.Index) {
			t.Errorf("index %d ran=%v with index %d reported not run", i, ran[i], pe.Index)
		}
	}
}
