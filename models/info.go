package models

// Info is a model's one-line description, with the JSON keys of `gpusim list models -o json`
// (docs/design.md): name, params, trainable_params, flops_per_sample (forward, multiply-add = 2
// FLOPs) and activation_bytes_per_sample (float32 activations kept for backward, per sample).
type Info struct {
	Name                     string  `json:"name"`
	Params                   int64   `json:"params"`
	TrainableParams          int64   `json:"trainable_params"`
	FLOPsPerSample           float64 `json:"flops_per_sample"`
	ActivationBytesPerSample float64 `json:"activation_bytes_per_sample"`
	HasBatchNorm             bool    `json:"has_batch_norm"`
	Description              string  `json:"description,omitempty"`
}

// Info summarizes the model.
func (m *Model) Info() Info {
	return Info{Name: m.Name, Params: m.Params, TrainableParams: m.TrainableParams,
		FLOPsPerSample: m.FLOPsPerSample, ActivationBytesPerSample: m.ActivationBytesPerSample,
		HasBatchNorm: m.HasBatchNorm, Description: zoo[m.Name].doc}
}

// Catalog builds every zoo model with default options and returns their Info in Names()
// order (about 50 ms: the transformer models plan a float32 step to measure activations).
func Catalog() ([]Info, error) {
	out := make([]Info, 0, len(zoo))
	for _, n := range Names() {
		m, err := Get(n)
		if err != nil {
			return nil, err
		}
		out = append(out, m.Info())
	}
	return out, nil
}
