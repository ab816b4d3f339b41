package sim

import (
	"testing"
)

func TestEngineOrdersByTimeThenSequence(t *testing.T) {
	e := NewEngine()
	var got []string
	rec := func(s string) func() { return func() { got = append(got, s) } }
	e.At(30, rec("c"))
	e.At(10, rec("a1"))
	e.At(20, rec("b"))
	e.At(10, rec("a2"))
	e.At(10, rec("a3"))
	if n := e.Run(-1); n != 5 {
		t.Fatalf("Run processed %d events, want 5", n)
	}
	want := []string{"a1", "a2", "a3", "b", "c"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order = %v, want %v", got, want)
		}
	}
	if e.Now() != 30 {
		t.Errorf("Now() = %v, want 30ns", e.Now())
	}
}

func TestEngineAfterCancelAndUntil(t *testing.T) {
	e := NewEngine()
	fired := map[string]Time{}
	e.At(5, func() {
		e.After(10, func() { fired["chained"] = e.Now() })
	})
	id := e.At(7, func() { fired["cancelled"] = e.Now() })
	e.At(100, func() { fired["late"] = e.Now() })
	if !e.Cancel(id) {
		t.Fatal("Cancel of a pending event returned false")
	}
	if e.Cancel(id) {
		t.Error("second Cancel of the same event returned true")
	}
	e.Run(50)
	if _, ok := fired["cancelled"]; ok {
		t.Error("cancelled event ran")
	}
	if fired["chained"] != 15 {
		t.Errorf("chained event at %v, want 15ns", fired["chained"])
	}
	if _, ok := fired["late"]; ok {
		t.Error("event after until ran")
	}
	if e.Now() != 50 {
		t.Errorf("Now() after Run(50) = %v, want 50ns", e.Now())
	}
	e.Run(-1)
	if fired["late"] != 100 {
		t.Errorf("late event at %v, want 100ns", fired["late"])
	}
}

func TestEngineStop(t *testing.T) {
	e := NewEngine()
	count := 0
	for i := 0; i < 10; i++ {
		e.At(Time(i), func() {
			count++
			if count == 3 {
				e.Stop()
			}
		})
	}
	e.Run(-1)
	if count != 3 {
		t.Errorf("ran %d events before Stop took effect, want 3", count)
	}
	e.Run(-1)
	if count != 10 {
		t.Errorf("after resuming, ran %d events, want 10", count)
	}
}

func TestEngineInterrupt(t *testing.T) {
	e := NewEngine()
	count, checks := 0, 0
	var tick func()
	tick = func() { count++; e.After(1, tick) } // never runs out of events on its own
	e.At(0, tick)
	e.SetInterrupt(5, func() bool { checks++; return count >= 20 }) // every 8 events
	e.Run(-1)
	if count != 24 || checks != 3 {
		t.Errorf("interrupt every 8 events stopping at >= 20: ran %d events, %d checks; want 24, 3", count, checks)
	}
	e.SetInterrupt(0, nil)
	if e.Run(100) == 0 {
		t.Errorf("Run after removing the interrupt ran no event")
	}
}

func TestSchedulingInThePastPanics(t *testing.T) {
	e := NewEngine()
	e.At(10, func() {})
	e.Run(-1)
	defer func() {
		if recover() == nil {
			t.Error("At in the past did not panic")
		}
	}()
	e.At(5, func() {})
}

func TestStreamDeterministicAndIndependent(t *testing.T) {
	a1, a2, b := Stream(42, "gpu0"), Stream(42, "gpu0"), Stream(42, "gpu1")
	same := 0
	for i := 0; i < 100; i++ {
		x, y, z := a1.Uint64(), a2.Uint64(), b.Uint64()
		if x != y {
			t.Fatalf("Stream(42, gpu0) differs from itself at draw %d", i)
		}
		if x == z {
			same++
		}
	}
	if same > 0 {
		t.Errorf("streams gpu0 and gpu1 agreed on %d of 100 draws", same)
	}
}

func TestFromSeconds(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want Time
	}{{1, Second}, {0.0015, 1500 * Microsecond}, {1e-9, 1}, {0, 0}} {
		if got := FromSeconds(c.s); got != c.want {
			t.Errorf("FromSeconds(%v) = %v, want %v", c.s, got, c.want)
		}
	}
}

// BenchmarkEngine measures the kernel's hot loop: a steady population of 1,000 pending events,
// each of which schedules its successor, as a training run's replicas do.
func BenchmarkEngine(b *testing.B) {
	e := NewEngine()
	var fn func()
	fn = func() { e.After(Time(1+e.processed%97), fn) }
	for i := 0; i < 1000; i++ {
		e.At(Time(i), fn)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Run(e.Now() + 1000)
	}
	b.ReportMetric(float64(e.Processed())/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEngineSpread is BenchmarkEngine with op-like delays spread from 1 µs to 10 ms (few
// ties), the pattern of a training run's op ends.
func BenchmarkEngineSpread(b *testing.B) {
	e := NewEngine()
	rng := Stream(1, "bench")
	delays := make([]Time, 4096)
	for i := range delays {
		delays[i] = Microsecond + Time(rng.Int64N(int64(10*Millisecond)))
	}
	var fn func()
	fn = func() { e.After(delays[e.processed%4096], fn) }
	for i := 0; i < 1000; i++ {
		e.At(Time(i), fn)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Run(e.Now() + 10*Millisecond)
	}
	b.ReportMetric(float64(e.Processed())/b.Elapsed().Seconds(), "events/s")
}
