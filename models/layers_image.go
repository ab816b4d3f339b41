package models

// Builders of the image augmentation and preprocessing layers.

import (
	"fmt"
)

func init() {
	register(buildImagePreprocessing, "RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation", "RandomContrast", "RandomBrightness", "RandomCrop", "CenterCrop", "Resizing")
}

// Image augmentation and preprocessing layers (keras.layers.Random*, Resizing,
// CenterCrop): no weights, no gradient to their input (they follow the model input).
// FLOPs per output element: a flip is a copy; a rotation, zoom or translation is one
// ImageProjectiveTransformV3 with bilinear interpolation, 4 taps of a multiply-add (8);
// contrast is a per-channel mean and a scale about it (4); brightness an add and a clip
// (3); a bilinear resize 8 and a crop a copy. Estimates, not measurements.
func buildImagePreprocessing(g *graph, l *layerCall) (int, error) {
	class, name, c, x, s := l.class, l.name, l.c, l.x, l.s
	if err := l.need(1); err != nil {
		return 0, err
	}
	if len(s) != 3 {
		return 0, fmt.Errorf("input shape %v: want (height, width, channels)", s)
	}
	out := clone(s)
	if class == "RandomCrop" || class == "CenterCrop" || class == "Resizing" {
		h, err := c.int("height", 0)
		if err != nil {
			return 0, err
		}
		w, err := c.int("width", 0)
		if err != nil {
			return 0, err
		}
		if h <= 0 || w <= 0 || (class != "Resizing" && (h > s[0] || w > s[1])) {
			return 0, fmt.Errorf("height %d, width %d on input %v", h, w, s)
		}
		out[0], out[1] = h, w
	}
	per := map[string]float64{"RandomRotation": 8, "RandomZoom": 8, "RandomTranslation": 8, "RandomContrast": 4,
		"RandomBrightness": 3, "Resizing": 8}[class]
	kind := Elementwise
	if per == 0 {
		kind = Copy
	}
	return g.addNode(node{name: name + "/" + class, kind: kind, in: []int{x}, shape: out,
		flops: per * float64(prod(out)), noGradIn: 1}), nil
}
