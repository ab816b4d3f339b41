package analysis_test

import "github.com/gpusim/gpusim/train"

// with returns train.DefaultConfig (the built-in default: scenarios'
// TestDefaultScenarioIsDefaultConfig) named name with edit applied.
func with(name string, edit func(*train.Config)) train.Config {
	c := train.DefaultConfig()
	c.Name = name
	if edit != nil {
		edit(&c)
	}
	return c
}
