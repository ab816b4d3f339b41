package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/gpusim/gpusim"

// row returns the row of pkg (a path below the module) and the top of its tree ("train" for
// train/visibility); ok is false for packages outside the table (tools/...: scripts on top of
// everything).
func row(pkg string) (r int, tree string, ok bool) {
	best := ""
	for p := range Rows {
		prefix := strings.TrimSuffix(p, "/")
		if (pkg == prefix || strings.HasPrefix(pkg, prefix+"/")) && len(p) > len(best) {
			best = p
		}
	}
	if best == "" {
		return 0, "", false
	}
	return Rows[best], strings.TrimSuffix(best, "/"), true
}

// violations returns every import of graph (package -> its imports, paths below the module)
// that does not go down a row: an import of a higher or the same row, except within one tree
// (train importing train/visibility; internal/... leaves among themselves). Packages outside
// the table must not be imported by packages in it. what names the imports in the messages:
// "imports" for a package's own, "test imports" for its tests'.
func violations(graph map[string][]string, what string) []string {
	var out []string
	for pkg, imps := range graph {
		r, tree, ok := row(pkg)
		if !ok {
			continue // tools/...: top of everything, may import anything
		}
		for _, imp := range imps {
			ri, treeI, okI := row(imp)
			switch {
			case !okI:
				out = append(out, fmt.Sprintf("%s (row %d) %s %s, which has no row in docs/design.md's table", pkg, r, what, imp))
			case treeI == tree:
			case ri >= r:
				out = append(out, fmt.Sprintf("%s (row %d) %s %s (row %d): imports must go down a row", pkg, r, what, imp, ri))
			}
		}
	}
	sort.Strings(out)
	return out
}

// importGraphs lists the module's packages with go list and returns each one's imports inside
// the module: those of its own files, and those of its test files (_test.go files of the
// package and of its external test package pkg_test, which imports pkg itself: in its tree).
func importGraphs(t *testing.T) (graph, tests map[string][]string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	touchSources(t)
	graph, tests = map[string][]string{}, map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkg, ok := strings.CutPrefix(p.ImportPath, module+"/")
		if !ok {
			continue
		}
		graph[pkg], tests[pkg] = inModule(p.Imports), inModule(append(p.TestImports, p.XTestImports...))
	}
	return graph, tests
}

// inModule returns the imports of imps inside the module, as paths below it, each once.
func inModule(imps []string) []string {
	var out []string
	for _, imp := range imps {
		if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// touchSources reads every Go file of the module: go test caches a result by the files the
// test process opened, and go list runs in another process, so without this an added import
// would not re-run the test.
func touchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "../.." {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestImportsGoDown fails on any import that goes up (or across) a row of docs/design.md's
// table, a test's import included: a test that needs a higher package (a built-in scenario,
// a fit) belongs to a package on a row above both.
func TestImportsGoDown(t *testing.T) {
	graph, tests := importGraphs(t)
	if _, ok := graph["train"]; !ok || len(graph) < 10 {
		t.Fatalf("go list found %d packages, no train: not the module's graph", len(graph))
	}
	for pkg := range graph {
		if _, _, ok := row(pkg); !ok && !strings.HasPrefix(pkg, "tools/") {
			t.Errorf("package %s has no row in docs/design.md's table (layering.Rows)", pkg)
		}
	}
	for _, v := range violations(graph, "imports") {
		t.Error(v)
	}
	for _, v := range violations(tests, "test imports") {
		t.Error(v)
	}
}

// The checker itself: upward and sideways imports are reported, downward ones, imports within
// a tree and tools' imports are not.
func TestViolations(t *testing.T) {
	graph := map[string][]string{
		"sim":                 {"hw"},                                // up
		"pipeline":            {"sim", "collective"},                 // down, sideways
		"train":               {"train/visibility", "models", "sim"}, // own tree, down
		"train/visibility":    nil,
		"internal/units":      {"internal/atomicfile"},
		"report":              {"analysis", "cmd/gpusim"}, // down, up
		"tools/h200/fit":      {"calibrate/kernelfit", "cmd/gpusim"},
		"calibrate/kernelfit": {"hw"},
	}
	got := violations(graph, "imports")
	want := []string{
		"pipeline (row 1) imports collective (row 1): imports must go down a row",
		"report (row 4) imports cmd/gpusim (row 6): imports must go down a row",
		"sim (row 0) imports hw (row 1): imports must go down a row",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Tests: an external test package imports its own package (its tree); a test reaching up
	// or across fails like the package's own import would.
	tests := map[string][]string{
		"hw":        {"hw", "calibrate/kernelfit", "internal/testcsv"}, // own, up, down
		"report":    {"analysis", "scenarios"},                         // down, across
		"scenarios": {"scenarios", "analysis", "train"},                // own, down, down
	}
	got = violations(tests, "test imports")
	want = []string{
		"hw (row 1) test imports calibrate/kernelfit (row 3): imports must go down a row",
		"report (row 4) test imports scenarios (row 4): imports must go down a row",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("test violations =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
