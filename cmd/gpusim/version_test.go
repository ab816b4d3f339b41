package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionString(t *testing.T) {
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "501894a0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6"},
			{Key: "vcs.time", Value: "2026-12-03T10:00:00Z"}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name    string
		ldflags string
		info    *debug.BuildInfo
		want    string
	}{
		{"no build info", "", nil, "dev"},
		{"ldflags win", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}}, "v1.2.3"},
		{"test binary", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "dev go1.26.8"},
		{"go install from a clean checkout", "", &debug.BuildInfo{GoVersion: "go1.26.8",
			Main: debug.Module{Version: "v0.0.0-20261203100000-501894a0c1d2"}, Settings: vcs("false")},
			"v0.0.0-20261203100000-501894a0c1d2 (git 501894a0c1d2, 2026-12-03T10:00:00Z) go1.26.8"},
		{"edited checkout, no module version", "", &debug.BuildInfo{GoVersion: "go1.26.8",
			Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			"(git 501894a0c1d2, 2026-12-03T10:00:00Z, modified) go1.26.8"},
		{"go install module@tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.0.0"}}, "v1.0.0"},
	} {
		if got := versionString(tc.ldflags, tc.info); got != tc.want {
			t.Errorf("%s: versionString = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// gpusim --version and gpusim version print the same line.
func TestVersionFlag(t *testing.T) {
	a, _, codeA := allocRun(t, "--version")
	b, _, codeB := allocRun(t, "version")
	if codeA != 0 || codeB != 0 || a != b || !strings.HasPrefix(a, "gpusim ") {
		t.Errorf("gpusim --version = %q (exit %d), gpusim version = %q (exit %d); want the same gpusim line", a, codeA, b, codeB)
	}
	if _, _, code := allocRun(t, "version", "extra"); code != 2 {
		t.Errorf("gpusim version extra: exit %d, want 2", code)
	}
}
