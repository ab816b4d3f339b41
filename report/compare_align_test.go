package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestCompareTextAligned: in the comparison table every value ends in the column where its
// run's label ends, every delta starts where "vs base" starts, and the heading's bars stand
// in the blanks between the columns: for labels longer and shorter than their values.
func TestCompareTextAligned(t *testing.T) {
	short := constructedRuns()
	short[0].Label, short[1].Label, short[2].Label = "a", "b", "c"
	long := constructedRuns()
	long[1].Label = "memory.mode=growth,memory.growth_regions=doubling"
	for _, tc := range []struct {
		name string
		runs []Run
	}{{"constructed", constructedRuns()}, {"short labels", short}, {"a long label", long}} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Compare(tc.runs).WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(buf.String(), "\n")
			head, vs := []rune(lines[0]), []rune(lines[1])
			// Where each label ends and each "vs base" starts (rune columns).
			var valueEnds, deltaStarts []int
			for _, r := range tc.runs {
				i := strings.Index(lines[0], r.Label)
				if i < 0 {
					t.Fatalf("heading %q lacks label %q", lines[0], r.Label)
				}
				valueEnds = append(valueEnds, width(lines[0][:i])+width(r.Label))
			}
			for i := 0; i+len("vs base") <= len(vs); i++ {
				if string(vs[i:i+len("vs base")]) == "vs base" {
					deltaStarts = append(deltaStarts, i)
				}
			}
			if len(deltaStarts) != len(tc.runs)-1 {
				t.Fatalf("%d \"vs base\" in %q, want %d", len(deltaStarts), lines[1], len(tc.runs)-1)
			}
			var bars []int
			for i, c := range head {
				if c == '│' {
					bars = append(bars, i)
					if i >= len(vs) || vs[i] != '│' {
						t.Errorf("bar at column %d of the first heading line is not in the second", i)
					}
				}
			}
			for r, l := range lines[2:] {
				if l == "" {
					break // the OOM messages follow
				}
				rs := []rune(l)
				for _, b := range bars[1:] {
					if b < len(rs) && rs[b] != ' ' {
						t.Errorf("row %d %q: column %d under a heading bar is %q, want a blank", r, l, b, rs[b])
					}
				}
				cells := splitCells(l)
				seen := map[int]bool{}
				for _, c := range cells[1:] { // cells[0] is the row name
					switch {
					case contains(valueEnds, c.end):
						seen[c.end] = true
					case contains(deltaStarts, c.start):
					default:
						t.Errorf("row %q: cell %q at columns %d..%d neither ends under a label nor starts under \"vs base\"", l, c.text, c.start, c.end)
					}
				}
				if len(seen) != len(valueEnds) {
					t.Errorf("row %q: %d of %d values end under their label", l, len(seen), len(valueEnds))
				}
			}
		})
	}
}

type textCell struct {
	text       string
	start, end int // rune columns, end exclusive
}

// splitCells splits a table row at runs of two or more blanks.
func splitCells(l string) []textCell {
	var out []textCell
	rs := []rune(l)
	for i := 0; i < len(rs); {
		if rs[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(rs) && !(rs[j] == ' ' && (j+1 >= len(rs) || rs[j+1] == ' ')) {
			j++
		}
		out = append(out, textCell{string(rs[i:j]), i, j})
		i = j
	}
	return out
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
