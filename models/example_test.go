package models_test

import (
	"fmt"
	"strings"

	"github.com/gpusim/gpusim/models"
)

func ExampleGet() {
	m, err := models.Get("resnet50")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d params, %d trainable, %.2f GFLOPs forward per sample, batch norm %v\n",
		m.Name, m.Params, m.TrainableParams, m.FLOPsPerSample/1e9, m.HasBatchNorm)
	// Output: resnet50: 25636712 params, 25583592 trainable, 7.72 GFLOPs forward per sample, batch norm true
}

func ExampleModel_Plan() {
	m, _ := models.Get("resnet50")
	p, _ := m.Plan(models.PlanOptions{Batch: 32, Precision: models.MixedFloat16, Optimizer: "adam"})
	fmt.Printf("weights %d MiB, Adam slots %d MiB, gradients %d MiB\n",
		p.PersistentBytes()>>20, p.SlotBytes()>>20, p.GradientBytes()>>20)
	fmt.Printf("first op %q (%s), last op %q (%s)\n", p.Ops[0].Name, p.Ops[0].Kind, p.Ops[len(p.Ops)-1].Name, p.Ops[len(p.Ops)-1].Phase)
	// Output:
	// weights 97 MiB, Adam slots 195 MiB, gradients 97 MiB
	// first op "input" (h2d), last op "predictions/bias/adam" (optimizer)
}

func ExampleFromKerasJSON() {
	js := `{"class_name": "Sequential", "config": {"name": "tiny", "layers": [
		{"class_name": "InputLayer", "config": {"batch_shape": [null, 16], "name": "x"}},
		{"class_name": "Dense", "config": {"name": "hidden", "units": 8, "activation": "relu"}},
		{"class_name": "Dense", "config": {"name": "out", "units": 2, "activation": "softmax"}}]}}`
	m, err := models.FromKerasJSON(strings.NewReader(js))
	if err != nil {
		panic(err)
	}
	fmt.Print(m.Summary())
	// Output:
	// Model: "tiny"
	// x                                        (InputLayer)           (None, 16)             0
	// hidden                                   (Dense)                (None, 8)              136
	// out                                      (Dense)                (None, 2)              18
	// Total params: 154
	// Trainable params: 154
	// Non-trainable params: 0
}
