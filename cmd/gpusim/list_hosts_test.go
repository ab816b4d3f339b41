package main

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"testing"

	"github.com/gpusim/gpusim/hw"
)

// TestListHosts: `gpusim list hosts` lists every built-in host profile that
// hardware.host.profile accepts, with the figures the simulation reads from it.
func TestListHosts(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), &out, &errb, []string{"list", "hosts", "-o", "json"}); err != nil {
		t.Fatal(err)
	}
	var hosts []hostJSON
	if err := json.Unmarshal(out.Bytes(), &hosts); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range hosts {
		names = append(names, h.Name)
		want, err := hw.LookupHost(h.Name)
		if err != nil {
			t.Fatal(err)
		}
		if h.Cores != want.Cores || h.GPUs != want.GPUs || h.Interconnect != want.Interconnect || h.NICBandwidth != want.NICBandwidth {
			t.Errorf("%s: listed %+v, profile %+v", h.Name, h, want)
		}
	}
	if !reflect.DeepEqual(names, hw.HostNames()) {
		t.Errorf("listed %v, want %v", names, hw.HostNames())
	}
	out.Reset()
	if err := run(context.Background(), &out, &errb, []string{"list", "hosts"}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`\ndgx-2 +96 \(2 per core\)`).Match(out.Bytes()) || !bytes.Contains(out.Bytes(), []byte("nvswitch 150GB/s")) {
		t.Errorf("list hosts text:\n%s", out.String())
	}
}
