package validate

import (
	"strings"
	"testing"
)

// A measurement file whose rows do not all have the header's fields is bad input naming the
// row and the first column it lacks: a file cut short mid-row would otherwise validate, its
// last row's missing columns read as empty. A file cut anywhere else (mid-value, right after
// its header) or empty is refused on the line where it stops: a header alone validated as a
// set with no rows, dropped from the report without a word.
func TestParseTableRejectsShortRows(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"cut mid-row", "model,prec,batch,step_s\nresnet50,fp32,64,0.1\nresnet50,fp3", "m.csv:3: batch: truncated row: 2 of the header's 4 fields"},
		{"extra field", "model,prec,batch,step_s\nresnet50,fp32,64,0.1,9\n", "m.csv:2: 5 fields, more than the header's 4"},
		{"empty", "", "m.csv:1: no header: the file is empty"},
		{"cut after the header", "model,prec,batch,step_s\n", "m.csv:2: no rows after the header: the file is cut short"},
		{"cut mid-header", "model,prec,batch,step_s,ste", "m.csv:1: no newline at the end: the file is cut short"},
		{"cut mid-value", "model,prec,batch,step_s\nresnet50,fp32,64,0.1\nresnet50,fp32,128,0.2", "m.csv:3: no newline at the end: the file is cut short"},
		{"bad quote", "model,prec,batch,step_s\nresnet50,\"fp32,64,0.1\n", "m.csv:2: column 23: extraneous or missing \" in quoted-field"},
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

// A Keras measurement row naming a model gpusim's zoo lacks, or a model file, is an error on
// its line and key, not a failed row of the report.
func TestKerasRowUnknownModel(t *testing.T) {
	head := "model,precision,batch,image,wall_ms_5x4,device_sync_median_ms\n"
	for _, tc := range []struct{ row, want string }{
		{"resnet5O,float32,64,224,600,24\n", "k.csv:2: model: "},
		{"@/etc/passwd,float32,64,224,600,24\n", "k.csv:2: model: \"@/etc/passwd\": want a zoo model name, not a file"},
		{"resnet50,float32,64,abc,600,24\n", "k.csv:2: image: \"abc\" is not a positive integer"},
	} {
		tab, err := parseTable("k.csv", strings.NewReader(head+tc.row), "model", "precision", "batch", "image")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := kerasRecording(tab, 0); err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line starting %q", tc.row, err, tc.want)
		}
	}
	tab, err := parseTable("k.csv", strings.NewReader(head+"resnet50,float32,64,224,600,24\n"), "model")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := kerasRecording(tab, 0); err != nil || r.model != "resnet50" {
		t.Errorf("a good row: %+v, %v", r.model, err)
	}
}
