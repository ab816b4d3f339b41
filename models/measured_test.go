package models_test

import (
	"testing"

	"github.com/gpusim/gpusim/models"
)

func TestZZPrint(t *testing.T) {
	for _, n := range []string{"resnet50", "vgg16", "mobilenetv2", "bert-base:seq=128,head=mlm", "gpt2:seq=1024", "bert-base", "gpt2"} {
		m, err := models.Get(n)
		if err != nil {
			t.Log(n, err)
			continue
		}
		t.Logf("%s params %d act %.2f MiB", n, m.Params, m.ActivationBytesPerSample/(1<<20))
	}
}
