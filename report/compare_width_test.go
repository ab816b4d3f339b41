package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// A comparison wider than the terminal is printed one configuration per block, every line
// within the width; one that fits, or at width 0 (a pipe), is the side-by-side table.
func TestCompareTextWidth(t *testing.T) {
	runs := constructedRuns()
	tab := Compare(runs)
	var wide bytes.Buffer
	if err := tab.WriteText(&wide); err != nil {
		t.Fatal(err)
	}
	tableW := 0
	for _, l := range strings.Split(wide.String(), "\n")[:len(tab.Rows)+3] {
		tableW = max(tableW, utf8.RuneCountInString(l))
	}
	for _, w := range []int{0, tableW} {
		var got bytes.Buffer
		if err := tab.WriteTextWidth(&got, w); err != nil {
			t.Fatal(err)
		}
		if got.String() != wide.String() {
			t.Errorf("WriteTextWidth(%d) on a %d-column table:\n%s\nwant the side-by-side table", w, tableW, got.String())
		}
	}
	var got bytes.Buffer
	if err := tab.WriteTextWidth(&got, tableW-1); err != nil {
		t.Fatal(err)
	}
	text := got.String()
	blocks, oom, _ := strings.Cut(text, "\n\n"+runs[2].Label+": ")
	if !strings.Contains(oom, runs[2].OOMMessage) {
		t.Errorf("transposed table lacks the OOM message:\n%s", text)
	}
	for _, l := range strings.Split(blocks, "\n") {
		if utf8.RuneCountInString(l) > tableW/2 {
			t.Errorf("transposed line %q is %d columns wide, the table %d; a block is one column's width", l, utf8.RuneCountInString(l), tableW)
		}
	}
	for _, want := range []string{
		"memory.mode=preallocate (base)\n  result                            ok\n  step time                    212.3ms\n",
		"\nmemory.mode=growth\n  result                            ok\n  step time                    215.0ms  +1.27%\n",
		"\nmemory.mode=limit\n  result                           OOM\n  step time                        OOM\n",
		"  memory limit                8.000GiB  -78.95%\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("transposed table lacks %q:\n%s", want, text)
		}
	}
}
