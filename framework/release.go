package framework

import "fmt"

// Release is what a TensorFlow release brings to the GPU: the cuDNN and CUDA it was built and
// tested with, and whether its float32 math may run as TF32.
type Release struct {
	// TF is the release (MAJOR.MINOR).
	TF Version
	// CuDNN is the cuDNN release as major*10+minor (76 for 7.6, 90 for 9.x).
	CuDNN int
	// CUDA is the CUDA toolkit the release was built with.
	CUDA string
	// TF32 reports whether float32 matmuls and convolutions may run as TF32 on Ampere and
	// newer: TF's enable_tensor_float_32_execution exists, on by default, from TF 2.4 (its
	// release notes; tf.config.experimental), and NVIDIA's TF 1.15 builds for CUDA 11 (NGC
	// 20.06 and later, nvidia-tensorflow) run float32 as TF32 unless NVIDIA_TF32_OVERRIDE=0.
	// cuDNN 8.0 and cuBLAS 11 brought the TF32 kernels (cuDNN 8.0 release notes), so a build
	// on cuDNN 7 has none.
	TF32 bool
	// NVIDIABuild marks NVIDIA's TF 1.15 build for CUDA 11 (NGC containers), which is what a
	// TF 1.15 run on an Ampere or newer GPU is: stock 1.15 was built for CUDA 10.0, which has
	// no Ampere code.
	NVIDIABuild bool
}

// TFReleases are TensorFlow's tested build configurations (tensorflow.org/install/source,
// "Tested build configurations", GPU table: cuDNN and CUDA per release), oldest first.
var TFReleases = []Release{
	{TF: v(1, 0), CuDNN: 51, CUDA: "8"}, {TF: v(1, 1), CuDNN: 51, CUDA: "8"}, {TF: v(1, 2), CuDNN: 51, CUDA: "8"},
	{TF: v(1, 3), CuDNN: 60, CUDA: "8"}, {TF: v(1, 4), CuDNN: 60, CUDA: "8"},
	{TF: v(1, 5), CuDNN: 70, CUDA: "9"}, {TF: v(1, 6), CuDNN: 70, CUDA: "9"}, {TF: v(1, 7), CuDNN: 70, CUDA: "9"},
	{TF: v(1, 8), CuDNN: 70, CUDA: "9"}, {TF: v(1, 9), CuDNN: 70, CUDA: "9"}, {TF: v(1, 10), CuDNN: 70, CUDA: "9"},
	{TF: v(1, 11), CuDNN: 70, CUDA: "9"}, {TF: v(1, 12), CuDNN: 70, CUDA: "9"},
	{TF: v(1, 13), CuDNN: 74, CUDA: "10.0"}, {TF: v(1, 14), CuDNN: 74, CUDA: "10.0"}, {TF: v(1, 15), CuDNN: 74, CUDA: "10.0"},
	{TF: v(2, 0), CuDNN: 74, CUDA: "10.0"}, {TF: v(2, 1), CuDNN: 76, CUDA: "10.1"}, {TF: v(2, 2), CuDNN: 76, CUDA: "10.1"},
	{TF: v(2, 3), CuDNN: 76, CUDA: "10.1"},
	{TF: v(2, 4), CuDNN: 80, CUDA: "11.0", TF32: true},
	{TF: v(2, 5), CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: v(2, 6), CuDNN: 81, CUDA: "11.2", TF32: true},
	{TF: v(2, 7), CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: v(2, 8), CuDNN: 81, CUDA: "11.2", TF32: true},
	{TF: v(2, 9), CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: v(2, 10), CuDNN: 81, CUDA: "11.2", TF32: true},
	{TF: v(2, 11), CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: v(2, 12), CuDNN: 86, CUDA: "11.8", TF32: true},
	{TF: v(2, 13), CuDNN: 86, CUDA: "11.8", TF32: true}, {TF: v(2, 14), CuDNN: 87, CUDA: "11.8", TF32: true},
	{TF: v(2, 15), CuDNN: 89, CUDA: "12.2", TF32: true}, {TF: v(2, 16), CuDNN: 89, CUDA: "12.3", TF32: true},
	{TF: v(2, 17), CuDNN: 89, CUDA: "12.3", TF32: true}, {TF: v(2, 18), CuDNN: 93, CUDA: "12.5", TF32: true},
}

func v(major, minor int) Version { return Version{major, minor} }

// nvidiaTF115 is NVIDIA's TF 1.15 for CUDA 11 (NGC 20.06+: cuDNN 8, TF32 on).
var nvidiaTF115 = Release{TF: v(1, 15), CuDNN: 80, CUDA: "11.0", TF32: true, NVIDIABuild: true}

// known checks that TF release tf (typed as typed) exists: every 1.x release is a row; a 2.x
// release newer than the table is a current one.
func known(releases []Release, tf Version, typed string) error {
	for _, row := range releases {
		if row.TF == tf {
			return nil
		}
	}
	if tf.Major < 2 {
		return fmt.Errorf("%q: no TensorFlow release of that number (1.0 to 1.15, 2.x)", typed)
	}
	return nil
}

// releaseFor is the release a run uses: tf's row (the newest row for the current release or
// one newer than the table), NVIDIA's build for TF 1.15 on compute capability cc 8.0 and newer,
// and cudnn, when not 0, in place of the row's cuDNN (a TF 1.15 run on cuDNN 8 is NVIDIA's
// build too). TF32 needs cuDNN 8.
func releaseFor(releases []Release, tf Version, cudnn, cc int) Release {
	r := releases[len(releases)-1]
	for _, row := range releases {
		if !tf.Current() && row.TF == tf {
			r = row
		}
	}
	if tf == nvidiaTF115.TF && cc >= 80 {
		r = nvidiaTF115
	}
	if cudnn != 0 {
		r.CuDNN = cudnn
		if tf == nvidiaTF115.TF && cudnn >= 80 {
			r = Release{TF: tf, CuDNN: cudnn, CUDA: nvidiaTF115.CUDA, TF32: true, NVIDIABuild: true}
		}
	}
	if r.CuDNN < 80 {
		r.TF32 = false
	}
	return r
}
