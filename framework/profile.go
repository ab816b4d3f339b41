package framework

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Name is the framework that differentiates the step.
type Name string

const (
	// TensorFlow: TF's registered gradients, tf.keras or Keras 3 on the TensorFlow backend.
	TensorFlow Name = "tensorflow"
	// JAX: Keras 3 on the JAX backend (or a pure JAX step): JAX's gradients, which decide what
	// XLA keeps for backward, and JAX's own XLA.
	JAX Name = "jax"
)

// ParseName reads a framework name; "" is TensorFlow.
func ParseName(s string) (Name, error) {
	switch Name(s) {
	case "", TensorFlow:
		return TensorFlow, nil
	case JAX:
		return JAX, nil
	}
	return "", fmt.Errorf("%q is not one of tensorflow, jax", s)
}

// Version is a MAJOR.MINOR release. The zero Version is the current release: newer than every
// row of the tables, so it has every Feature.
type Version struct{ Major, Minor int }

// Current reports whether v is the zero Version, the current release.
func (v Version) Current() bool { return v == Version{} }

// Before reports whether v is an older release than w; the current release is older than none.
func (v Version) Before(w Version) bool {
	if v.Current() {
		return false
	}
	return v.Major < w.Major || v.Major == w.Major && v.Minor < w.Minor
}

// String is "MAJOR.MINOR", or "" for the current release.
func (v Version) String() string {
	if v.Current() {
		return ""
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// ParseTF reads a TensorFlow release "MAJOR.MINOR" (a patch part is allowed and ignored).
func ParseTF(s string) (Version, error) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	bad := fmt.Errorf("%q: want MAJOR.MINOR such as 1.15 or 2.4", s)
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, bad
	}
	major, err := strconv.Atoi(parts[0])
	if err != nil || major < 1 {
		return Version{}, bad
	}
	minor, err := strconv.Atoi(parts[1])
	if err != nil || minor < 0 {
		return Version{}, bad
	}
	return Version{major, minor}, nil
}

// ParseCuDNN reads a cuDNN release "MAJOR.MINOR" (or "MAJOR") as major*10+minor.
func ParseCuDNN(s string) (int, error) {
	maj, min, _ := strings.Cut(strings.TrimSpace(s), ".")
	min, _, _ = strings.Cut(min, ".")
	bad := fmt.Errorf("%q: want a cuDNN release MAJOR.MINOR such as 7.6 or 8.9", s)
	a, err := strconv.Atoi(maj)
	if err != nil || a < 1 || a > 99 {
		return 0, bad
	}
	b := 0
	if min != "" {
		if b, err = strconv.Atoi(min); err != nil || b < 0 || b > 9 {
			return 0, bad
		}
	}
	return a*10 + b, nil
}

// Spec is what a run's settings say about its framework, as the user wrote it.
type Spec struct {
	// Framework differentiates the step.
	Framework Name
	// TF is the TensorFlow release ("1.15", "2.4"); "" is the current one.
	TF string
	// CuDNN is the cuDNN release ("7.6", "8.9"); "" is the one TF was built with.
	CuDNN string
	// Keras is the Keras major version, 2 or 3; 0 takes it from TF and Framework.
	Keras int
	// LegacyKeras is TF_USE_LEGACY_KERAS set true: tf.keras stays tf_keras 2.x from TF 2.16 on.
	LegacyKeras bool
	// CC is the GPU's compute capability as major*10+minor (0: unknown, as when a setting is
	// checked before a GPU is chosen): TF 1.15 on 8.0 and newer is NVIDIA's build (nvidiaTF115).
	CC int
}

// Profile is the framework and releases a run uses, resolved from a Spec.
type Profile struct {
	// Framework differentiates the step.
	Framework Name
	// TF is the TensorFlow release (its MAJOR.MINOR; the zero Version is the current one).
	TF Version
	// JAX is the JAX release under JAX (JAXRelease); the zero Version under TensorFlow.
	JAX Version
	// Keras is the Keras major version that builds the model: 2 or 3.
	Keras int
	// CuDNN is the cuDNN release as major*10+minor (76 for 7.6, 90 for 9.x).
	CuDNN int
	// CUDA is the CUDA toolkit the TF release was built with.
	CUDA string
	// TF32 reports whether float32 matmuls and convolutions may run as TF32 (Release.TF32).
	TF32 bool
	// NVIDIABuild marks NVIDIA's TF 1.15 build for CUDA 11 (Release.NVIDIABuild).
	NVIDIABuild bool
	// features holds bit f for each Feature f the releases have (Gates).
	features uint64
}

// Has reports whether the run's releases have feature f.
func (p Profile) Has(f Feature) bool { return p.features&(1<<f) != 0 }

// SpecError is a bad field of a Spec, named by its Go field ("TF", "CuDNN", "Keras").
type SpecError struct {
	Field string
	Err   error
}

func (e *SpecError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

// Errors is every bad field of a Spec, in the order Resolve checks them.
type Errors []*SpecError

func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, se := range e {
		msgs[i] = se.Error()
	}
	return strings.Join(msgs, "; ")
}

// Resolve turns s into the run's Profile, from TFReleases and Gates. Its error, when not nil,
// is Errors: every bad field of s.
func Resolve(s Spec) (Profile, error) { return resolve(s, TFReleases, Gates) }

// resolve is Resolve over given tables (a test adds rows to them).
func resolve(s Spec, releases []Release, gates []Gate) (Profile, error) {
	var errs Errors
	bad := func(field string, err error) { errs = append(errs, &SpecError{Field: field, Err: err}) }
	p := Profile{Framework: s.Framework}
	if p.Framework == "" {
		p.Framework = TensorFlow
	}
	if p.Framework == JAX {
		p.JAX = JAXRelease
	}
	tfOK := true
	if s.TF != "" {
		v, err := ParseTF(s.TF)
		if err == nil {
			p.TF = v
			err = known(releases, v, s.TF)
		} else {
			tfOK = false
		}
		if err != nil {
			bad("TF", err)
		}
	}
	cudnn := 0
	if s.CuDNN != "" {
		v, err := ParseCuDNN(s.CuDNN)
		if err != nil {
			bad("CuDNN", err)
		}
		cudnn = v
	}
	rel := releaseFor(releases, p.TF, cudnn, s.CC)
	p.CuDNN, p.CUDA, p.TF32, p.NVIDIABuild = rel.CuDNN, rel.CUDA, rel.TF32, rel.NVIDIABuild
	for _, g := range gates {
		if p.gateOpen(g) {
			p.features |= 1 << g.Feature
		}
	}
	p.Keras = p.keras(s, tfOK, bad)
	if len(errs) > 0 {
		return p, errs
	}
	return p, nil
}

// gateOpen reports whether p's releases include gate g: an XLA gate under JAX by the JAX
// release (JAX builds its own XLA), every other one by the TF release; a zero column is every
// release.
func (p Profile) gateOpen(g Gate) bool {
	if g.XLA && p.Framework == JAX {
		return g.JAX.Current() || !p.JAX.Before(g.JAX)
	}
	return g.TF.Current() || !p.TF.Before(g.TF)
}

// keras is the Keras major version that builds the model. An explicit one wins. Otherwise the
// JAX backend exists only in Keras 3, and `pip install tensorflow` brings Keras 3 from TF 2.16
// on (Keras3Default), unless TF_USE_LEGACY_KERAS=1 keeps tf.keras on tf_keras 2.x (the TF
// 2.16 release notes; tf_keras's README). An unset TF release keeps 2, the simulator's
// default since its recordings of TF's behaviour are tf.keras 2.x. bad reports the
// combinations no release ships.
func (p Profile) keras(s Spec, tfOK bool, bad func(string, error)) int {
	switch {
	case s.Keras != 0 && s.Keras != 2 && s.Keras != 3:
		bad("Keras", fmt.Errorf("%d: must be 2 or 3", s.Keras))
	case s.Keras == 2 && p.Framework == JAX:
		bad("Keras", errors.New("2: the JAX backend is Keras 3's; tf.keras 2.x runs on TensorFlow only"))
	case s.Keras == 3 && tfOK && !p.Has(Keras3):
		bad("Keras", fmt.Errorf("3: Keras 3 runs on TensorFlow 2.15 or later, not %s", p.TF))
	}
	switch {
	case s.Keras != 0:
		return s.Keras
	case p.Framework == JAX:
		return 3
	case s.LegacyKeras, p.TF.Current(), !p.Has(Keras3Default):
		return 2
	}
	return 3
}
