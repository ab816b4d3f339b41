package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocs: every command block a doc marks prints what the doc shows, and every figure the
// prose around it quotes is one those commands print (docs_check_test.go says how blocks are
// marked). A model change that moves a figure fails here until the docs are regenerated:
//
//	go test ./cmd/gpusim -run TestDocs -update
//
// rewrites the output blocks; figures in prose the test names by line, with the nearest
// figure printed, and those are edited by hand.
func TestDocs(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	t.Setenv("COLUMNS", "")
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{"README.md"}, docs...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sections, blocks, err := parseDoc(string(b))
		if err != nil {
			t.Errorf("%s:%v", name, err)
			continue
		}
		// The commands run from the repository root, which they must leave as it is.
		for _, sec := range sections {
			for _, c := range sec.cmds {
				if strings.Contains(c.cmd, "--plot") || strings.Contains(c.cmd, "--trace") {
					t.Errorf("%s:%d: a checked command writes no files: %s", name, c.line, c.cmd)
				}
			}
		}
		lines := strings.Split(string(b), "\n")
		problems, lines := docProblems(context.Background(), sections, blocks, lines, externalFigures[filepath.ToSlash(name)], *update)
		for _, p := range problems {
			t.Errorf("%s:%s", name, p)
		}
		if out := strings.Join(lines, "\n"); *update && out != string(b) {
			if err := os.WriteFile(name, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", name)
		}
	}
}

// externalFigures are the figures a doc quotes next to gpusim's from elsewhere, by file, as
// the doc writes them; each names its source in the doc.
var externalFigures = map[string][]string{
	// NVIDIA DeepLearningExamples' ResNet-50 v1.5 README, "Training performance", DGX A100.
	"scenarios/builtin/horovod-dgx-a100.yaml": {"17,400 img/s", "7.32x"},
	// TF 1.x gpu_device.cc MinSystemMemory: max(300 MiB, 5% of the card) left free.
	"docs/capacity.md": {"5%"},
	// How delta_vs_base encodes a change (0.0127 is +1.27%); the PNGs read at 100% zoom.
	"docs/compare.md": {"+1.27%", "100%"},
	// The goal the reader gives gpusim capacity gpus (--throughput 10000), not a result.
	"README.md": {"10,000 img/s"},
	// The Keras 3 recording testdata/h200/keras/rep (kseq.csv, round 1, bf16 batch 64).
	"scenarios/builtin/keras3-host-fed-h200.yaml": {"14.5 ms", "34.2 ms", "18.1 ms"},
}

// TestDocsScenarioComments: the figures a built-in scenario's comment and description quote
// are ones `gpusim run NAME` or the commands the comment names (lines "#   gpusim ...") print.
func TestDocsScenarioComments(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	files, err := filepath.Glob(filepath.Join("scenarios", "builtin", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no built-in scenarios (%v)", err)
	}
	cmdRE := regexp.MustCompile(`^#\s+(gpusim .*)$`)
	texts := make([][]byte, len(files))
	for i, name := range files {
		if texts[i], err = os.ReadFile(name); err != nil {
			t.Fatal(err)
		}
	}
	// The comments' commands name built-ins only; what they write (--plot DIR) goes here.
	t.Chdir(t.TempDir())
	for fi, name := range files {
		b := texts[fi]
		scen := strings.TrimSuffix(filepath.Base(name), ".yaml")
		sec := docSection{cmds: []docCmd{{line: 1, cmd: "gpusim run " + scen}}}
		for i, l := range strings.Split(string(b), "\n") {
			if m := cmdRE.FindStringSubmatch(l); m != nil {
				cmd, comment := splitComment(m[1])
				sec.cmds = append(sec.cmds, docCmd{line: i + 1, cmd: strings.TrimSpace(cmd)})
				sec.prose = append(sec.prose, docLine{i + 1, comment})
			} else if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "description:") {
				sec.prose = append(sec.prose, docLine{i + 1, l})
			}
		}
		problems, _ := docProblems(context.Background(), []docSection{sec}, nil, nil, externalFigures[filepath.ToSlash(name)], false)
		for _, p := range problems {
			t.Errorf("%s:%s", name, p)
		}
	}
}

// TestDocsCheckerCatchesEdits: on a small doc, the checker passes what gpusim printed, fails a
// hand-edited figure in an output block or in the prose, accepts a figure rounded to fewer
// digits, and -update restores an edited block.
func TestDocsCheckerCatchesEdits(t *testing.T) {
	ctx := context.Background()
	check := func(doc string, update bool) ([]string, string) {
		t.Helper()
		sections, blocks, err := parseDoc(doc)
		if err != nil {
			t.Fatal(err)
		}
		problems, lines := docProblems(ctx, sections, blocks, strings.Split(doc, "\n"), nil, update)
		return problems, strings.Join(lines, "\n")
	}
	const cmd = `gpusim run input-bound | grep -E 'GPU utilization|input stall'`
	_, doc := check("# Fixture\n\n<!-- gpusim-doc -->\n```\n$ "+cmd+"\n```\n", true)
	util := regexp.MustCompile(`GPU utilization\s+([0-9.]+%)`).FindStringSubmatch(doc)
	if util == nil {
		t.Fatalf("-update wrote no GPU utilization line:\n%s", doc)
	}
	doc += "\nThe GPU is busy " + util[1] + " of the time.\n"
	if problems, _ := check(doc, false); len(problems) > 0 {
		t.Fatalf("the regenerated doc fails:\n%s\n%s", strings.Join(problems, "\n"), doc)
	}
	edited := "84.4%"
	if util[1] == edited {
		edited = "84.5%"
	}
	blockEdit := strings.Replace(doc, util[1], edited, 1)
	if problems, _ := check(blockEdit, false); len(problems) != 1 || !strings.Contains(problems[0], "but the doc shows") {
		t.Errorf("an edited output block: problems %q, want one saying what the command prints", problems)
	}
	if _, restored := check(blockEdit, true); restored != doc {
		t.Errorf("-update on the edited block gave\n%s\nwant\n%s", restored, doc)
	}
	proseEdit := strings.Replace(doc, "busy "+util[1], "busy "+edited, 1)
	if problems, _ := check(proseEdit, false); len(problems) != 1 || !strings.Contains(problems[0], edited+" is no figure") {
		t.Errorf("an edited prose figure: problems %q, want one naming %s", problems, edited)
	}
	rounded := strings.Replace(doc, "busy "+util[1], "busy about "+roundPct(t, util[1]), 1)
	if problems, _ := check(rounded, false); len(problems) > 0 {
		t.Errorf("a figure rounded to whole percent fails: %q", problems)
	}
	// A block marker compares its block but leaves the section's prose to other sources.
	block := strings.Replace(proseEdit, "<!-- gpusim-doc -->", "<!-- gpusim-doc: block -->", 1)
	if problems, _ := check(block, false); len(problems) > 0 {
		t.Errorf("a block marker checks the prose: %q", problems)
	}
	if problems, _ := check(strings.Replace(block, util[1], edited, 1), false); len(problems) != 1 {
		t.Errorf("an edited block under a block marker: problems %q, want one", problems)
	}
}

// roundPct rounds "9.7%" to "10%".
func roundPct(t *testing.T, s string) string {
	t.Helper()
	fs := figures(s)
	if len(fs) != 1 {
		t.Fatalf("figures(%q) = %v", s, fs)
	}
	return strconv.FormatFloat(math.Round(fs[0].value), 'f', 0, 64) + "%"
}

// TestFigures: what the checker reads as a figure, and what rounding it accepts.
func TestFigures(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string // figures checked
	}{
		{"GPU utilization 9.7%, input stall 89.5%", []string{"9.7%", "89.5%"}},
		{"2.061k samples/s (+830%) at 90.6% on GPU:0", []string{"2.061k samples/s", "+830%", "90.6%"}},
		{"batch 128 on a v100-16gb, an 8 GiB cap, 4 x A100, fp16, 2^15", nil},
		{"takes 386.5ms, 10.19GiB, ~517 ms and 1.19x", []string{"386.5ms", "10.19GiB", "~517 ms", "1.19x"}},
		{"17,400 img/s", []string{"17,400 img/s"}},
		{"3x² per token, 16gb, 2.5x, hex with 0x", []string{"2.5x"}},
	} {
		var got []string
		for _, f := range figures(tc.text) {
			if f.check {
				got = append(got, f.text)
			}
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("figures(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	for _, tc := range []struct {
		quoted, printed string
		want            bool
	}{
		{"9.7%", "9.7%", true}, {"10%", "9.7%", true}, {"8.4%", "9.7%", false}, {"+960%", "+830%", false},
		{"0.58 s", "578.2ms", true}, {"2,061 samples/s", "2.061k samples/s", true}, {"2.1k samples/s", "2.061k samples/s", true},
		{"15.77%", "-15.77%", true}, {"+15.77%", "-15.77%", false}, {"13.34 GiB", "13.34GiB", true}, {"13.3GiB", "13.34GiB", true},
	} {
		q, p := figures(tc.quoted), figures(tc.printed)
		if len(q) != 1 || len(p) != 1 {
			t.Fatalf("figures(%q), figures(%q): want one each", tc.quoted, tc.printed)
		}
		if got := q[0].quotes(p[0]); got != tc.want {
			t.Errorf("%q quotes %q = %v, want %v", tc.quoted, tc.printed, got, tc.want)
		}
	}
}
