package sim

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// TestEngineMatchesReferenceOrder drives the engine with random schedules, cancellations and
// bounded runs, and checks that events run in exactly the (time, sequence) order of a sort.
func TestEngineMatchesReferenceOrder(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		e := NewEngine()
		type rec struct {
			at  Time
			seq int
		}
		var want, got []rec
		pending := map[EventID]rec{}
		next := 0
		var schedule func(base Time)
		schedule = func(base Time) {
			// Spread times from ties to far apart, as op durations do.
			var d Time
			switch rng.IntN(4) {
			case 0:
				d = 0
			case 1:
				d = Time(rng.IntN(8))
			case 2:
				d = Time(rng.IntN(1000))
			default:
				d = Time(rng.Int64N(1 << 40))
			}
			r := rec{at: base + d, seq: next}
			next++
			var id EventID
			id = e.At(r.at, func() {
				got = append(got, r)
				delete(pending, id)
				if e.Now() != r.at {
					t.Fatalf("seed %d: event for %v ran at %v", seed, r.at, e.Now())
				}
				if rng.IntN(3) > 0 && next < 3000 {
					schedule(e.Now())
				}
			})
			pending[id] = r
		}
		for i := 0; i < 200; i++ {
			schedule(0)
		}
		for e.Pending() > 0 {
			switch rng.IntN(4) {
			case 0:
				// Cancel a random pending event.
				for id := range pending {
					if !e.Cancel(id) {
						t.Fatalf("seed %d: Cancel(%d) of a pending event = false", seed, id)
					}
					delete(pending, id)
					break
				}
			case 1:
				// Run to a bound, then schedule between now and the next event.
				e.Run(e.Now() + Time(rng.IntN(5000)))
				schedule(e.Now())
			default:
				e.Run(e.Now() + Time(rng.Int64N(1<<38)))
			}
		}
		// Reference: everything that ran, sorted by (time, sequence), must equal the run order.
		want = append(want[:0], got...)
		sort.SliceStable(want, func(i, j int) bool {
			if want[i].at != want[j].at {
				return want[i].at < want[j].at
			}
			return want[i].seq < want[j].seq
		})
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d: event %d ran = %+v, want %+v", seed, i, got[i], want[i])
			}
		}
		if len(pending) != 0 {
			t.Fatalf("seed %d: %d events never ran", seed, len(pending))
		}
	}
}
