package scenarios_test

import (
	"fmt"

	"github.com/gpusim/gpusim/scenarios"
)

// Errors name the file, the line and the key.
func ExampleParse() {
	_, err := scenarios.Parse("run.yaml", []byte("model: resnet50\nbatch: -8\n"))
	fmt.Println(err)
	// Output: run.yaml:2: batch: too small: -8 (at least 1)
}

// Overrides take YAML values and are checked like the file.
func ExampleScenario_Set() {
	sc, _ := scenarios.Resolve("default")
	fmt.Println(sc.Set("hardware.gpu=h200"), sc.Config.GPU)
	fmt.Println(sc.Set("memory.growth=maybe"))
	// Output:
	// <nil> h200
	// --set memory.growth=maybe: memory.growth: want true or false, got str "maybe"
}
