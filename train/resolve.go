package train

import (
	"github.com/gpusim/gpusim/framework"
	"github.com/gpusim/gpusim/hw"
	"github.com/gpusim/gpusim/models"
)

// resolved is what a Config's names stand for, looked up once where a run is set up (Run,
// StepPlan): every part of the run reads these values, never the names again.
type resolved struct {
	gpu     hw.GPU
	model   *models.Model
	fw      framework.Profile
	host    hw.Host // hw.DefaultHost when Config.Host is unset
	hostSet bool    // Config.Host named a profile
}

// resolve looks cfg's names up: the GPU profile (Config.GPUProfile, or Config.GPU in hw's
// catalog), the model, the framework profile (Config.Profile, on that GPU) and the host.
func resolve(cfg *Config) (resolved, error) {
	var rv resolved
	if cfg.GPUProfile != nil {
		rv.gpu = *cfg.GPUProfile
	} else {
		g, err := hw.LookupGPU(cfg.GPU)
		if err != nil {
			return rv, &FieldError{Field: "GPU", Err: err}
		}
		rv.gpu = g
	}
	model, err := models.Get(cfg.Model)
	if err != nil {
		return rv, &FieldError{Field: "Model", Err: err}
	}
	rv.model = model
	if rv.fw, err = cfg.Profile(rv.gpu.CC()); err != nil {
		return rv, err
	}
	rv.host = hw.DefaultHost()
	if cfg.Host != "" {
		h, err := hw.LookupHost(cfg.Host)
		if err != nil {
			return rv, &FieldError{Field: "Host", Err: err}
		}
		rv.host, rv.hostSet = h, true
	}
	return rv, nil
}
