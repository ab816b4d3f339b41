// Package gpusim holds the measurements the project ships, embedded in the binary so that
// `gpusim validate` runs from any directory: the files validate.ReadShipped reads under
// testdata/ (docs/speed.md; testdata/dle/README.md and testdata/h200/README.md say where each
// comes from). It is data only and imports nothing of the module; cmd/gpusim reads it with
// validate.ReadShippedFS(gpusim.Testdata, "testdata").
package gpusim

import "embed"

// Testdata is the shipped measurement files at their repository paths.
//
//go:embed testdata/dle/dle_tf.csv testdata/tfcnn/tfcnn.csv
//go:embed testdata/h200/steps.csv testdata/h200/nchw/steps.csv
//go:embed testdata/h200/jax/steps.csv
//go:embed testdata/h200/keras/steps.csv testdata/h200/keras/*/k*.csv
var Testdata embed.FS
