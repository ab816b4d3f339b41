package train

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/hw"
)

// Release is what a TensorFlow release brings to the GPU: the cuDNN and CUDA it was built and
// tested with, and whether its float32 math may run as TF32. Rules that depend on the
// libraries read it (releaseFor), not the version string.
type Release struct {
	// TF is the release (MAJOR.MINOR); "" a current one.
	TF string
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

// tfReleases are TensorFlow's tested build configurations (tensorflow.org/install/source,
// "Tested build configurations", GPU table: cuDNN and CUDA per release).
var tfReleases = []Release{
	{TF: "1.0", CuDNN: 51, CUDA: "8"}, {TF: "1.1", CuDNN: 51, CUDA: "8"}, {TF: "1.2", CuDNN: 51, CUDA: "8"},
	{TF: "1.3", CuDNN: 60, CUDA: "8"}, {TF: "1.4", CuDNN: 60, CUDA: "8"},
	{TF: "1.5", CuDNN: 70, CUDA: "9"}, {TF: "1.6", CuDNN: 70, CUDA: "9"}, {TF: "1.7", CuDNN: 70, CUDA: "9"},
	{TF: "1.8", CuDNN: 70, CUDA: "9"}, {TF: "1.9", CuDNN: 70, CUDA: "9"}, {TF: "1.10", CuDNN: 70, CUDA: "9"},
	{TF: "1.11", CuDNN: 70, CUDA: "9"}, {TF: "1.12", CuDNN: 70, CUDA: "9"},
	{TF: "1.13", CuDNN: 74, CUDA: "10.0"}, {TF: "1.14", CuDNN: 74, CUDA: "10.0"}, {TF: "1.15", CuDNN: 74, CUDA: "10.0"},
	{TF: "2.0", CuDNN: 74, CUDA: "10.0"}, {TF: "2.1", CuDNN: 76, CUDA: "10.1"}, {TF: "2.2", CuDNN: 76, CUDA: "10.1"},
	{TF: "2.3", CuDNN: 76, CUDA: "10.1"},
	{TF: "2.4", CuDNN: 80, CUDA: "11.0", TF32: true},
	{TF: "2.5", CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: "2.6", CuDNN: 81, CUDA: "11.2", TF32: true},
	{TF: "2.7", CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: "2.8", CuDNN: 81, CUDA: "11.2", TF32: true},
	{TF: "2.9", CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: "2.10", CuDNN: 81, CUDA: "11.2", TF32: true},
	{TF: "2.11", CuDNN: 81, CUDA: "11.2", TF32: true}, {TF: "2.12", CuDNN: 86, CUDA: "11.8", TF32: true},
	{TF: "2.13", CuDNN: 86, CUDA: "11.8", TF32: true}, {TF: "2.14", CuDNN: 87, CUDA: "11.8", TF32: true},
	{TF: "2.15", CuDNN: 89, CUDA: "12.2", TF32: true}, {TF: "2.16", CuDNN: 89, CUDA: "12.3", TF32: true},
	{TF: "2.17", CuDNN: 89, CUDA: "12.3", TF32: true}, {TF: "2.18", CuDNN: 93, CUDA: "12.5", TF32: true},
}

// nvidiaTF115 is NVIDIA's TF 1.15 for CUDA 11 (NGC 20.06+: cuDNN 8, TF32 on).
var nvidiaTF115 = Release{TF: "1.15", CuDNN: 80, CUDA: "11.0", TF32: true, NVIDIABuild: true}

// releaseFor is the release a run uses: tfVersion's row (the newest row for "" or a release
// newer than the table), NVIDIA's build for TF 1.15 on compute capability 8.0 and newer, and
// cudnn, when set, in place of the row's cuDNN (a TF 1.15 run on cuDNN 8 is NVIDIA's build
// too). TF32 needs cuDNN 8.
func releaseFor(tfVersion, cudnn string, g hw.GPU) (Release, error) {
	r := tfReleases[len(tfReleases)-1]
	r.TF = ""
	if tfVersion != "" {
		major, minor, err := parseTFVersion(tfVersion)
		if err != nil {
			return Release{}, err
		}
		key := fmt.Sprintf("%d.%d", major, minor)
		found := false
		for _, row := range tfReleases {
			if row.TF == key {
				r, found = row, true
			}
		}
		if !found && major < 2 {
			return Release{}, fmt.Errorf("%q: no TensorFlow release of that number (1.0 to 1.15, 2.x)", tfVersion)
		}
		if key == "1.15" && g.CC() >= 80 {
			r = nvidiaTF115
		}
		if !found {
			r.TF = key
		}
	}
	if cudnn != "" {
		v, err := parseCuDNN(cudnn)
		if err != nil {
			return Release{}, err
		}
		r.CuDNN = v
		if r.TF == "1.15" && v >= 80 {
			r = Release{TF: "1.15", CuDNN: v, CUDA: nvidiaTF115.CUDA, TF32: true, NVIDIABuild: true}
		}
	}
	if r.CuDNN < 80 {
		r.TF32 = false
	}
	return r, nil
}

// parseCuDNN reads a cuDNN release "MAJOR.MINOR" (or "MAJOR") as major*10+minor.
func parseCuDNN(v string) (int, error) {
	maj, min, _ := strings.Cut(strings.TrimSpace(v), ".")
	min, _, _ = strings.Cut(min, ".")
	a, err := strconv.Atoi(maj)
	if err != nil || a < 1 || a > 99 {
		return 0, fmt.Errorf("%q: want a cuDNN release MAJOR.MINOR such as 7.6 or 8.9", v)
	}
	b := 0
	if min != "" {
		if b, err = strconv.Atoi(min); err != nil || b < 0 || b > 9 {
			return 0, fmt.Errorf("%q: want a cuDNN release MAJOR.MINOR such as 7.6 or 8.9", v)
		}
	}
	return a*10 + b, nil
}
