package analysis

import (
	"strings"
	"testing"
)

// A measurement file whose rows do not all have the header's fields is bad input naming the
// row: a file cut short mid-row would otherwise validate, its last row's missing columns read
// as empty.
func TestParseTableRejectsShortRows(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"cut mid-row", "model,prec,batch,step_s\nresnet50,fp32,64,0.1\nresnet50,fp3", "m.csv:3: truncated row: 2 of the header's 4 fields"},
		{"extra field", "model,prec,batch,step_s\nresnet50,fp32,64,0.1,9\n", "m.csv:2: 5 fields, more than the header's 4"},
	} {
		_, err := parseTable("m.csv", strings.NewReader(tc.data), "model", "step_s")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: parseTable = %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := parseTable("m.csv", strings.NewReader("model,prec,batch,step_s\nresnet50,fp32,64,0.1\n"), "model", "step_s"); err != nil {
		t.Errorf("a whole file: %v", err)
	}
}
