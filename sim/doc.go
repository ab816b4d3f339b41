// Package sim is gpusim's discrete-event kernel.
//
// Virtual time is an int64 count of nanoseconds (Time). An Engine runs its events in (time,
// insertion sequence) order, so events scheduled for the same instant run in the order they
// were scheduled and every run is deterministic. Because virtual time never goes back, the
// pending events are kept in a radix heap (monotone integer keys, FIFO buckets) rather than a
// comparison heap; BenchmarkEngine reports the rate in events/s. The kernel has no goroutines: Run pops events
// and calls them in a plain loop. Concurrency belongs outside, where sweeps run independent
// engines side by side.
//
// Randomness comes from Stream, which derives one independent generator per component (a GPU,
// an input worker) from the scenario seed and the component's name; there is no global source.
//
// FormatSeconds is the one way gpusim prints a duration (583.9ms, 818.1µs, 1.204s: four
// significant digits, the unit that keeps the value at or above one); it lives here so that
// pipeline, train and the commands print what report's FormatValue prints.
package sim
