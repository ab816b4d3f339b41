package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

func init() {
	register(command{name: "version", summary: "print the version (also gpusim --version)", run: func(_ context.Context, stdout, _ io.Writer, args []string) error {
		if len(args) > 0 && args[0] != "--help" && args[0] != "-h" {
			return usagef("version takes no arguments, got %s", strings.Join(args, " "))
		}
		info, _ := debug.ReadBuildInfo()
		fmt.Fprintf(stdout, "gpusim %s\n", versionString(version, info))
		return nil
	}})
}

// versionString says which source a binary was built from. An -ldflags version wins; otherwise
// the module version the go command stamped (a tag, or since Go 1.24 a pseudo-version for a
// build inside a checkout; "(devel)" says nothing and is dropped) and the VCS settings
// (vcs.revision, vcs.time, vcs.modified) that `go build` and `go install` record from the
// checkout (cmd/go: -buildvcs=auto). "dev" only when the binary carries none of these, as a
// test binary or a `-buildvcs=false` build.
func versionString(ldflags string, info *debug.BuildInfo) string {
	if ldflags != "" {
		return ldflags
	}
	if info == nil {
		return "dev"
	}
	ver := info.Main.Version
	if ver == "(devel)" {
		ver = ""
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var vcs []string
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		vcs = append(vcs, settings["vcs"]+" "+rev)
		if t := settings["vcs.time"]; t != "" {
			vcs = append(vcs, t)
		}
		if settings["vcs.modified"] == "true" {
			vcs = append(vcs, "modified")
		}
	}
	switch {
	case ver == "" && len(vcs) == 0:
		ver = "dev"
	case ver == "":
		ver = "(" + strings.Join(vcs, ", ") + ")"
	case len(vcs) > 0:
		ver += " (" + strings.Join(vcs, ", ") + ")"
	}
	if info.GoVersion != "" {
		ver += " " + info.GoVersion
	}
	return ver
}
