package hw

import (
	"strings"
	"testing"
)

// A profile value that is not a finite number in its range is an error on its line: a NaN, an
// infinity or a rate of 1e-300 would otherwise reach sim.FromSeconds deep in the cost model
// (which panics), and an SM count of 1e11 would run for hours of simulated time.
func TestParseProfileRanges(t *testing.T) {
	tests := []struct{ line, want string }{
		{"sms: 99999999999", "p.yaml:2: sms: 99999999999: must be in [1, 1024]"},
		{"cc_major: 1000", "p.yaml:2: cc_major: 1000: must be in [3, 99]"},
		{"cc_minor: 10", "p.yaml:2: cc_minor: 10: must be in [0, 9]"},
		{"l2_bytes: -5", "p.yaml:2: l2_bytes: -5: must be in [0,"},
		{"memory_bytes: 1000000000000000000", "p.yaml:2: memory_bytes: 1000000000000000000: must be in [1,"},
		{"mem_bandwidth: .nan", "p.yaml:2: mem_bandwidth: NaN: must be in [1e+06, 1e+18] B/s"},
		{"mem_bandwidth: .inf", "p.yaml:2: mem_bandwidth: +Inf: must be in"},
		{"mem_bandwidth: 1e-300", "p.yaml:2: mem_bandwidth: 1e-300: must be in"},
		{"peak_fp32: .nan", "p.yaml:2: peak_fp32: NaN: must be in"},
		{"peak_fp32: 1e-300", "p.yaml:2: peak_fp32: 1e-300: must be in"},
		{"peak_fp16: .inf", "p.yaml:2: peak_fp16: +Inf: must be in [1e+06, 1e+18] FLOP/s (or 0: none)"},
		{"peak_tf32: 1e30", "p.yaml:2: peak_tf32: 1e+30: must be in"},
		{"peak_bf16_vector: .nan", "p.yaml:2: peak_bf16_vector: NaN: must be in"},
		{"nvlink_bandwidth: .nan", "p.yaml:2: nvlink_bandwidth: NaN: must be in"},
		{"pcie_bandwidth: 1e-300", "p.yaml:2: pcie_bandwidth: 1e-300: must be in"},
		{"launch_overhead: .nan", "p.yaml:2: launch_overhead: NaN: must be in [0, 1] seconds"},
		{"launch_overhead: 1e300", "p.yaml:2: launch_overhead: 1e+300: must be in [0, 1] seconds"},
		{"step_overhead: 1e300", "p.yaml:2: step_overhead: 1e+300: must be in [0, 1] seconds"},
		{"host_dispatch_scale: .inf", "p.yaml:2: host_dispatch_scale: +Inf: must be in [0, 1000]"},
		{"efficiency:\n  kernel_gap: .nan", "p.yaml:3: efficiency.kernel_gap: NaN: must be in [0, 1] seconds"},
		{"efficiency:\n  compute_ramp: .nan", "p.yaml:3: efficiency.compute_ramp: NaN: must be in [0, 1] seconds"},
	}
	profile := func(line string) error {
		_, err := ParseProfile("p.yaml", []byte("base: v100-16gb\n"+line+"\n"))
		return err
	}
	// The edges themselves are profiles.
	checkRanges(t, "ParseProfile", profile, tests, "sms: 1024", "cc_minor: 9", "peak_tf32: 0", "nvlink_bandwidth: 0", "launch_overhead: 1", "host_dispatch_scale: 0")
}

// checkRanges checks that parse fails with one line containing want on each bad line of tests
// and accepts each of the edges.
func checkRanges(t *testing.T, name string, parse func(line string) error, tests []struct{ line, want string }, edges ...string) {
	t.Helper()
	for _, tc := range tests {
		if err := parse(tc.line); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s(%q) error = %v, want one line containing %q", name, tc.line, err, tc.want)
		}
	}
	for _, line := range edges {
		if err := parse(line); err != nil {
			t.Errorf("%s(%q): %v", name, line, err)
		}
	}
}

// A host profile's counts and rates are bounded as the scenario keys that override them are
// (2e9 cores or GPUs, a PCIe link of 1e-300 B/s are errors), and LoadHost reads at most
// maxProfileBytes of a regular file, so /dev/zero as a host profile is an error, not a read
// until memory runs out.
func TestParseHostRanges(t *testing.T) {
	tests := []struct{ line, want string }{
		{"cores: 2000000000", "h.yaml:2: cores: 2000000000: want at most 8192"},
		{"gpus: 2000000000", "h.yaml:2: gpus: 2000000000: want at most 256"},
		{"memory_bytes: 9000000000000000000", "h.yaml:2: memory_bytes: 9000000000000000000: want at most"},
		{"pcie_bandwidth: 1e-300", "h.yaml:2: pcie_bandwidth: 1e-300: want 0 or at least 100000 B/s"},
		{"disk_bandwidth: 1e-300", "h.yaml:2: disk_bandwidth: 1e-300: want 0 or at least"},
		{"nic_bandwidth: 1e-300", "h.yaml:2: nic_bandwidth: 1e-300: want 0 or at least"},
	}
	host := func(line string) error {
		_, err := ParseHost("h.yaml", []byte("base: dgx-a100\n"+line+"\n"))
		return err
	}
	checkRanges(t, "ParseHost", host, tests, "cores: 8192", "gpus: 256", "nic_bandwidth: 0", "disk_bandwidth: 100000")
	if _, err := LoadHost("/dev/zero"); err == nil || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
		t.Errorf("LoadHost(/dev/zero) = %v, want it refused as no regular file", err)
	}
}

// A profile is one YAML document: a second one is an error, not silently ignored.
func TestProfilesAreOneDocument(t *testing.T) {
	const want = "p.yaml:4: a second YAML document: a profile is one document"
	if _, err := ParseProfile("p.yaml", []byte("base: v100-16gb\nname: mine\n---\nsms: 1\n")); err == nil || err.Error() != want {
		t.Errorf("ParseProfile of two documents = %v, want %q", err, want)
	}
	if _, err := ParseHost("p.yaml", []byte("base: dgx-a100\nname: mine\n---\ncores: 8\n")); err == nil || err.Error() != want {
		t.Errorf("ParseHost of two documents = %v, want %q", err, want)
	}
	if _, err := ParseProfile("p.yaml", []byte("base: v100-16gb\nname: mine\n---\n")); err != nil {
		t.Errorf("ParseProfile with a trailing ---: %v", err)
	}
	if _, err := ParseProfile("p.yaml", []byte("")); err == nil || err.Error() != "p.yaml:1: a gpu profile is a mapping of keys to values" {
		t.Errorf("ParseProfile of an empty file = %v", err)
	}
}
