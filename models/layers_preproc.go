package models

// Builders of the preprocessing layers that are not image augmentations: category encoding,
// discretization, hashing and the vocabulary lookups, and the audio spectrograms.

import (
	"fmt"
	"math"
)

func init() {
	register(buildAugment, "AugMix", "AutoContrast", "ContrastLimitedAdaptiveHistogramEqualization", "CutMix",
		"Equalization", "MaxNumBoundingBoxes", "MixUp", "RandAugment", "RandomColorDegeneration",
		"RandomColorJitter", "RandomElasticTransform", "RandomErasing", "RandomGaussianBlur", "RandomGrayscale",
		"RandomHue", "RandomInvert", "RandomPerspective", "RandomPosterization", "RandomSaturation",
		"RandomSharpness", "RandomShear", "Solarization")
	register(buildEncoding, "CategoryEncoding", "Discretization", "Hashing", "HashedCrossing",
		"IntegerLookup", "StringLookup", "TextVectorization")
	register(buildSpectrogram, "MelSpectrogram", "STFTSpectrogram")
}

// augmentFLOPs: estimated FLOPs per output element of the Keras 3 image augmentation layers
// (keras/src/layers/preprocessing/image_preprocessing), as buildImagePreprocessing's: a
// colour-space conversion (hue, saturation, jitter) about 20, a 3x3 blend or blur about 20,
// a histogram equalization about 10, a geometric warp with bilinear taps 8, a blend with a
// shuffled batch (CutMix, MixUp) 2, AugMix its 3 chains of 3 ops. MaxNumBoundingBoxes only
// pads the boxes: the image is passed through. Estimates, not measurements. Like the others
// they have no weights and pass no gradient to the image (they follow the model input).
var augmentFLOPs = map[string]float64{
	"AugMix": 72, "AutoContrast": 4, "ContrastLimitedAdaptiveHistogramEqualization": 20, "CutMix": 2,
	"Equalization": 10, "MaxNumBoundingBoxes": 0, "MixUp": 2, "RandAugment": 16,
	"RandomColorDegeneration": 6, "RandomColorJitter": 20, "RandomElasticTransform": 20,
	"RandomErasing": 2, "RandomGaussianBlur": 20, "RandomGrayscale": 5, "RandomHue": 20,
	"RandomInvert": 1, "RandomPerspective": 8, "RandomPosterization": 2, "RandomSaturation": 20,
	"RandomSharpness": 20, "RandomShear": 8, "Solarization": 3,
}

func buildAugment(g *graph, l *layerCall) (int, error) {
	if len(l.s) != 3 {
		return 0, fmt.Errorf("input shape %v: want (height, width, channels)", l.s)
	}
	per := augmentFLOPs[l.class]
	if per == 0 {
		return g.identity(l.name, l.x), nil
	}
	return g.addNode(node{name: l.name + "/" + l.class, kind: Elementwise, in: []int{l.x}, shape: clone(l.s),
		flops: per * float64(prod(l.s)), noGradIn: 1}), nil
}

// buildEncoding applies the encoding and lookup layers. Their outputs are integer ids or
// counts, with no gradient. CategoryEncoding, Discretization and the lookups' multi-hot
// outputs are small element-wise kernels; the string and vocabulary lookups (StringLookup,
// IntegerLookup, TextVectorization, Hashing, HashedCrossing) need TensorFlow even under Keras 3
// and run as TF lookup-table and string ops, which TF registers for the CPU only
// (tensorflow/core/kernels/lookup_table_op.cc, string_to_hash_bucket_op.cc: DEVICE_CPU), so they
// cost the GPU nothing but the copy of their output to it.
func buildEncoding(g *graph, l *layerCall) (int, error) {
	mode, _ := l.c.str("output_mode", "int")
	out := clone(l.s)
	depth := 0
	switch l.class {
	case "CategoryEncoding":
		n, err := l.c.int("num_tokens", 0)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("num_tokens %v", l.c["num_tokens"])
		}
		depth = n
		if mode == "int" {
			mode = "multi_hot" // CategoryEncoding's default
		}
	case "Discretization":
		b, _ := l.c["bin_boundaries"].([]any)
		depth = len(b) + 1
		if n, _ := l.c.int("num_bins", 0); n > 0 {
			depth = n
		}
	case "Hashing", "HashedCrossing":
		n, err := l.c.int("num_bins", 0)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("num_bins %v", l.c["num_bins"])
		}
		depth = n
		if l.class == "HashedCrossing" && len(l.ins) > 0 {
			out = clone(l.s)
		}
	case "IntegerLookup", "StringLookup", "TextVectorization":
		v, _ := l.c["vocabulary"].([]any)
		depth = len(v)
		if n, _ := l.c.int("max_tokens", 0); n > 0 && (depth == 0 || l.c["pad_to_max_tokens"] == true) {
			depth = n
		}
		if l.class != "TextVectorization" {
			oov, _ := l.c.int("num_oov_indices", 1)
			depth += oov
			if mode == "int" || l.c["mask_token"] != nil {
				depth++ // the mask token's index
			}
		}
		if l.class == "TextVectorization" && mode == "int" {
			n, err := l.c.int("output_sequence_length", 0)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("output_sequence_length %v: gpusim needs the sequence length fixed", l.c["output_sequence_length"])
			}
			out = []int{n}
		}
	}
	switch mode {
	case "int":
	case "one_hot":
		if len(out) > 0 && out[len(out)-1] == 1 {
			out = out[:len(out)-1]
		}
		out = append(out, depth)
	case "multi_hot", "count", "tf_idf":
		if len(out) > 0 {
			out = out[:len(out)-1]
		}
		out = append(out, depth)
	default:
		return 0, fmt.Errorf("output_mode %q", mode)
	}
	if depth <= 0 && mode != "int" {
		return 0, fmt.Errorf("output_mode %q without a vocabulary size", mode)
	}
	n := node{name: l.name + "/" + l.class, kind: Elementwise, in: clone(l.ins), shape: out, intOut: mode == "int",
		noGradIn: 1<<uint(len(l.ins)) - 1}
	switch l.class {
	case "CategoryEncoding", "Discretization":
		n.flops = float64(prod(out))
	default:
		n.kind = Copy
	}
	return g.addNode(n), nil
}

// buildSpectrogram applies STFTSpectrogram (keras stft_spectrogram.py: the STFT as two
// convolutions of the signal with fixed real and imaginary kernels (frame_length, channels,
// fft_length/2 + 1), trainable by default; mode log/magnitude/psd gives the bins, real/imag
// the same, a complex stft both) and MelSpectrogram (audio_preprocessing.py: an FFT per frame,
// centered frames, then the mel filter bank: (num_mel_bins, frames), no weights).
func buildSpectrogram(g *graph, l *layerCall) (int, error) {
	if l.class == "MelSpectrogram" {
		if len(l.s) != 1 {
			return 0, fmt.Errorf("input shape %v: want (samples,)", l.s)
		}
		stride, err1 := l.c.int("sequence_stride", 512)
		fft, err2 := l.c.int("fft_length", 2048)
		mels, err3 := l.c.int("num_mel_bins", 128)
		if err1 != nil || err2 != nil || err3 != nil || stride <= 0 || fft <= 0 || mels <= 0 {
			return 0, fmt.Errorf("sequence_stride %v, fft_length %v, num_mel_bins %v", l.c["sequence_stride"], l.c["fft_length"], l.c["num_mel_bins"])
		}
		frames := 1 + l.s[0]/stride
		bins := fft/2 + 1
		fl := float64(frames) * (5*float64(fft)*math.Log2(float64(fft)) + 2*float64(bins)*float64(mels))
		return g.addNode(node{name: l.name + "/MelSpectrogram", kind: Conv, in: []int{l.x}, shape: []int{mels, frames},
			flops: fl, noGradIn: 1}), nil
	}
	if len(l.s) != 2 {
		return 0, fmt.Errorf("input shape %v: want (samples, channels)", l.s)
	}
	fl, err1 := l.c.int("frame_length", 0)
	step, err2 := l.c.int("frame_step", 0)
	fft, err3 := l.c.int("fft_length", fl)
	if err1 != nil || err2 != nil || err3 != nil || fl <= 0 || step <= 0 || fft < fl {
		return 0, fmt.Errorf("frame_length %v, frame_step %v, fft_length %v", l.c["frame_length"], l.c["frame_step"], l.c["fft_length"])
	}
	pad, _ := l.c.str("padding", "valid")
	frames := convOut(l.s[0], fl, step, 1, pad)
	if frames <= 0 {
		return 0, fmt.Errorf("frame_length %d longer than the signal %v", fl, l.s)
	}
	bins, cin := fft/2+1, l.s[1]
	ws := []int{g.w("real_kernel", []int{fl, 1, bins}, true, true, true), g.w("imag_kernel", []int{fl, 1, bins}, true, true, true)}
	mode, _ := l.c.str("mode", "log")
	outBins := bins * cin
	if mode == "stft" {
		outBins *= 2
	}
	macs := 2 * float64(frames) * float64(fl) * float64(bins) * float64(cin)
	return g.addNode(node{name: l.name + "/STFT", kind: Conv, in: []int{l.x}, shape: []int{frames, outBins},
		flops: 2 * macs, dxFLOPs: 2 * macs, dwFLOPs: 2 * macs, weights: ws, saveIn: 1}), nil
}
