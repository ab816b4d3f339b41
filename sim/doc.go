// Package sim is gpusim's discrete-event kernel.
//
// Virtual time is an int64 count of nanoseconds (Time). An Engine holds a heap of events ordered
// by (time, insertion sequence), so events scheduled for the same instant run in the order they
// were scheduled and every run is deterministic. The kernel has no goroutines: Run pops events
// and calls them in a plain loop. Concurrency belongs outside, where sweeps run independent
// engines side by side.
//
// Randomness comes from Stream, which derives one independent generator per component (a GPU,
// an input worker) from the scenario seed and the component's name; there is no global source.
package sim
