package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpusim/gpusim/internal/datadriven"
	"github.com/gpusim/gpusim/scenarios"
)

// TestScenarioData runs the data-driven scenario tests in testdata/scenarios/*.txt (rewrite
// them with go test ./cmd/gpusim -run TestScenarioData -update and review the diff). Commands:
//
//	set               input lines key=value: --set overrides for the rest of the file
//	reset             forgets them
//	run [SCENARIO]    gpusim run SCENARIO with the file's and the input's --set lines; the
//	                  output is what gpusim prints (o=json or o=csv for the other formats)
//	metrics [SCENARIO] the same run's headline figures from -o json, one per line
//	validate data=FILE [rows]  gpusim validate --data FILE (a path from the repository root),
//	                  its percentages rounded to whole percents
func TestScenarioData(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no data files: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var sets []string
			datadriven.RunFile(t, f, *update, func(t *testing.T, c *datadriven.Case) string {
				switch c.Cmd {
				case "set":
					sets = append(sets, inputLines(c)...)
					return ""
				case "reset":
					sets = nil
					return ""
				case "validate":
					return validateReport(t, c)
				case "run", "metrics":
					args := []string{"run"}
					for _, a := range c.Args {
						if !strings.Contains(a, "=") {
							args = append(args, a)
						}
					}
					for _, s := range append(append([]string{}, sets...), inputLines(c)...) {
						args = append(args, "--set", s)
					}
					format, _ := c.Arg("o")
					if c.Cmd == "metrics" {
						format = "json"
					}
					if format != "" {
						args = append(args, "-o", format)
					}
					out, errs, code := runCLI(t, args...)
					if code != 0 {
						return fmt.Sprintf("exit %d: %s", code, errs)
					}
					if c.Cmd == "metrics" {
						return metrics(t, c.Pos, out)
					}
					return out
				}
				t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
				return ""
			})
		})
	}
}

func inputLines(c *datadriven.Case) []string {
	var out []string
	for _, l := range strings.Split(c.Input, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// metrics prints the headline figures of a gpusim run -o json object.
func metrics(t *testing.T, pos, js string) string {
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("%s: %v", pos, err)
	}
	var b bytes.Buffer
	for _, k := range []string{"oom", "steps_completed", "step_time_s", "throughput_samples_per_s", "gpu_utilization",
		"input_stall_fraction", "allreduce_time_s", "scaling_efficiency", "skipped_steps"} {
		if v, ok := m[k]; ok {
			fmt.Fprintf(&b, "%s: %v\n", k, sig4(v))
		}
	}
	if d, ok := m["diagnosis"].(map[string]any); ok {
		fmt.Fprintf(&b, "diagnosis: %v\n", d["bound"])
	}
	devs, _ := m["devices"].([]any)
	for _, d := range devs {
		d := d.(map[string]any)
		fmt.Fprintf(&b, "%v: peak %v, pool %v, limit %v\n", d["name"], d["peak_bytes_in_use"], d["peak_pool_bytes"], d["bytes_limit"])
	}
	if ps, ok := m["precision_memory_saving"].(map[string]any); ok {
		fmt.Fprintf(&b, "precision saving: %v\n", sig4(ps["saving"]))
	}
	return b.String()
}

// validateReport is gpusim validate's text report of a measurement file, every percentage
// rounded to a whole percent: a golden diff then reads as a change of meaning, not of the
// third digit.
func validateReport(t *testing.T, c *datadriven.Case) string {
	data, ok := c.Arg("data")
	if !ok {
		t.Fatalf("%s: validate needs data=FILE", c.Pos)
	}
	args := []string{"validate", "--data", filepath.Join("..", "..", data)}
	if slices.Contains(c.Args, "rows") {
		args = append(args, "--rows")
	}
	out, errs, code := runCLI(t, args...)
	if code != 0 {
		return fmt.Sprintf("exit %d: %s", code, errs)
	}
	out = strings.ReplaceAll(out, filepath.Join("..", "..")+string(filepath.Separator), "")
	return percent.ReplaceAllStringFunc(out, func(p string) string {
		v, err := strconv.ParseFloat(strings.TrimSuffix(p, "%"), 64)
		if err != nil {
			return p
		}
		if strings.HasPrefix(p, "+") || strings.HasPrefix(p, "-") {
			return fmt.Sprintf("%+.0f%%", v)
		}
		return fmt.Sprintf("%.0f%%", v)
	})
}

// percent is a percentage as gpusim validate prints it ("8.8%", "+0.5%", "-2.2%").
var percent = regexp.MustCompile(`[+-]?[0-9]+\.[0-9]+%`)

// sig4 writes a JSON number that is not an integer to 4 significant figures, so that a golden
// diff reads as a change of meaning, not of the 17th digit; integers (steps, bytes: the
// allocator is byte-exact) and other values stay as they are.
func sig4(v any) any {
	n, ok := v.(json.Number)
	if !ok || !strings.ContainsAny(n.String(), ".eE") {
		return v
	}
	f, err := n.Float64()
	if err != nil {
		return v
	}
	// Rounded in 'g' to 4 digits, then written without an exponent (16290, not 1.629e+04).
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 4, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Every built-in scenario has its figures in testdata/scenarios/builtins.txt.
func TestScenarioDataCoversBuiltins(t *testing.T) {
	b, err := os.ReadFile("testdata/scenarios/builtins.txt")
	if err != nil {
		t.Fatal(err)
	}
	data := string(b)
	for _, n := range scenarios.Names() {
		if !strings.Contains(data, "\nmetrics "+n+"\n") && !strings.HasPrefix(data, "metrics "+n+"\n") {
			t.Errorf("built-in %s has no metrics case in testdata/scenarios/builtins.txt", n)
		}
	}
}
