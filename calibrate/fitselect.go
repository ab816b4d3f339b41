package calibrate

import (
	"fmt"
	"math"
	"sort"
)

// Which parameters a fit moves: only what its observations identify, and only where moving it
// predicts better out of sample.
//
// The probes give each parameter's column of the Jacobian (the change of every fitted
// quantity's log prediction per prior width). In units of the observation error, J^T J is the
// information matrix the observations add to the prior's (the identity, in widths). choose
// builds the fit one direction at a time:
//
//  1. Identifiability: the candidate is the parameter with the most information not already
//     carried by the directions kept (its column's part orthogonal to theirs, a Gram-Schmidt
//     step), while that is at least FitConfig.MinInformation and fewer directions are kept
//     than there are observed quantities: two step times identify at most two.
//  2. Ties: a parameter whose column is parallel to the candidate's (|cos| >= tieCos) cannot be
//     told apart from it and moves with it. For two parameters whose effects differ only by a
//     factor r, the data fix one combination and the posterior mode splits the move between
//     them in proportion to their effect, so the tied one moves r widths per width of the
//     candidate.
//  3. Leave-one-out: the candidate (with its ties) is kept only if fitting it lowers the error
//     of predicting each fitted observation from a fit to the others (the sum of squared log
//     errors over the folds) by looMinGain of that of the directions kept before it (none: the
//     prior's own predictions). A candidate that fails is left at its prior, and the next most
//     informative one is tried. With one observation there is nothing to hold out: the
//     identified directions are kept unchecked.

// looMinGain is the least fraction of the leave-one-out error a direction must remove to be
// kept: less is within what the refits' simplex tolerance moves it, and a direction kept for
// nothing would spend one of the few the observations identify.
const looMinGain = 0.02

// looEvaluations bounds the simulator runs of one refit of the cross-validation.
const looEvaluations = 400

// tieCos is how parallel two parameters' columns must be to be tied: at 0.99 the part of one
// that the other cannot express is a seventh of it (sqrt(1 - 0.99^2) = 0.14).
const tieCos = 0.99

// choose picks the directions a fit moves at observation error sigma; notes says, per
// parameter, how it was checked or why an informed one stays at its prior.
func (f *fitter) choose(sigma float64) ([]direction, map[int]string, error) {
	notes := map[int]string{}
	s2 := sigma * sigma
	open := map[int]bool{}
	for i := range f.ps {
		if f.raw[i]/s2 >= f.cfg.MinInformation {
			open[i] = true
		}
	}
	var kept []direction
	var basis [][]float64
	base, starts := 0.0, []Params(nil)
	cv := len(f.fitted) >= 2
	if cv {
		var err error
		if base, starts, err = f.looError(nil, sigma, nil); err != nil {
			return nil, nil, err
		}
	}
	for len(kept) < len(f.e0) {
		i, res := f.mostInformed(open, basis, s2)
		if i < 0 {
			break
		}
		d := direction{lead: i}
		delete(open, i)
		for _, j := range sortedOpen(open) {
			if c := cosine(f.cols[j], f.cols[i]); math.Abs(c) >= tieCos {
				d.tied = append(d.tied, tie{param: j, ratio: dot(f.cols[j], f.cols[i]) / dot(f.cols[i], f.cols[i])})
				delete(open, j)
			}
		}
		if cv {
			trial := append(append([]direction(nil), kept...), d)
			e, ends, err := f.looError(trial, sigma, starts)
			if err != nil {
				return nil, nil, err
			}
			if !(e < base*(1-looMinGain)) {
				why := fmt.Sprintf("leave-one-out: squared log error %.3g with it, %.3g without: left at the prior", e, base)
				notes[i] = why
				for _, t := range d.tied {
					notes[t.param] = fmt.Sprintf("tied to %s, which %s", f.ps[i].Name, why)
				}
				continue
			}
			notes[i] = fmt.Sprintf("leave-one-out: squared log error %.3g with it, %.3g without", e, base)
			base, starts = e, ends
		} else {
			notes[i] = "one observation: not cross-validated"
		}
		kept = append(kept, d)
		basis = append(basis, res)
	}
	for j := range open {
		notes[j] = fmt.Sprintf("informed, but the %d fitted quantities identify no more directions than the %d kept: left at the prior", len(f.e0), len(kept))
	}
	return kept, notes, nil
}

// mostInformed is step 1 of choose: the open parameter with the most information orthogonal
// to basis (orthonormal columns), at least MinInformation, and that part of its column,
// normalized; -1 when none.
func (f *fitter) mostInformed(open map[int]bool, basis [][]float64, s2 float64) (int, []float64) {
	best, bestInfo := -1, 0.0
	var bestRes []float64
	for _, i := range sortedOpen(open) {
		r := append([]float64(nil), f.cols[i]...)
		for _, b := range basis {
			d := dot(r, b)
			for k := range r {
				r[k] -= d * b[k]
			}
		}
		if info := dot(r, r) / s2; info > bestInfo {
			best, bestInfo, bestRes = i, info, r
		}
	}
	if best < 0 || bestInfo < f.cfg.MinInformation {
		return -1, nil
	}
	n := math.Sqrt(dot(bestRes, bestRes))
	for k := range bestRes {
		bestRes[k] /= n
	}
	return best, bestRes
}

// sortedOpen is open's parameters in index order, so that choose does not depend on map order.
func sortedOpen(open map[int]bool) []int {
	var out []int
	for i := range open {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// looError is the leave-one-out error of fitting dirs: for each fitted observation, the
// squared log errors of its quantities predicted by the fit (at observation error sigma) to
// the other fitted observations, each fold's fit starting from starts[fold] (nil: the prior),
// so that a direction is judged by what it adds, not by how differently a simplex lands from
// the prior. With no direction, each is the prior's prediction. ends are the folds' fits.
func (f *fitter) looError(dirs []direction, sigma float64, starts []Params) (float64, []Params, error) {
	ends := make([]Params, len(f.fitted))
	if len(dirs) == 0 {
		for j := range ends {
			ends[j] = f.prior
		}
		return dot(f.e0, f.e0), ends, nil
	}
	sum := 0.0
	for j, o := range f.fitted {
		sub := *f
		sub.fitted = append(append([]Observation(nil), f.fitted[:j]...), f.fitted[j+1:]...)
		sub.light, sub.maxEvals = true, f.evals+looEvaluations
		start := f.prior
		if starts != nil {
			start = starts[j]
		}
		r, err := sub.search(dirs, sigma, start, starts == nil)
		f.evals, f.evalErr = sub.evals, sub.evalErr
		if err != nil {
			return 0, nil, err
		}
		ends[j] = sub.at(r.dirs, r.x)
		pr, err := f.predictAll([]Observation{o}, ends[j])
		f.evals++
		if err != nil {
			return 0, nil, err
		}
		e := f.logErrs([]Observation{o}, pr, ends[j])
		sum += dot(e, e)
	}
	return sum, ends, nil
}

// informed is dirs without those whose lead the observations no longer identify at sigma
// (an observation error estimated larger than the floor).
func (f *fitter) informed(dirs []direction, sigma float64) []direction {
	var out []direction
	for _, d := range dirs {
		if f.raw[d.lead]/(sigma*sigma) >= f.cfg.MinInformation {
			out = append(out, d)
		}
	}
	return out
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// cosine is the cosine of the angle between a and b (0 when either is zero).
func cosine(a, b []float64) float64 {
	na, nb := dot(a, a), dot(b, b)
	if na == 0 || nb == 0 {
		return 0
	}
	return dot(a, b) / math.Sqrt(na*nb)
}
