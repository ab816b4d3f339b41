// Package xprof reads the TensorFlow and JAX profiler's traces (XProf, what TensorBoard's
// profile plugin shows): the XSpace that jax.profiler.trace and tf.profiler.experimental write
// (HOST.xplane.pb) and the Chrome trace JSON of the same events (HOST.trace.json.gz). [Load]
// returns a [Profile]: every GPU operation (kernel, copy, set) with its device time, the op
// that launched it (XLA's HLO instruction from the hlo_op stat, TensorFlow's op from tf_op)
// and its HLO module, and the step markers (host events with a step_num stat:
// jax.profiler.StepTraceAnnotation, tf.profiler.experimental.Trace(name, step_num=N), which
// TensorFlow's Keras fit emits around each train step).
//
// The XSpace is decoded with google.golang.org/protobuf's protowire against the field numbers
// of the public schema (tsl/profiler/protobuf/xplane.proto), written out in xspace.go: only the
// fields an import reads, no generated code. A plane's lines are decoded one at a time, so
// that the events of the host's planes (the Python tracer writes millions) are never all held
// at once; a file that is not an XSpace, or is cut short, is an error naming the byte where
// the decoding failed.
//
// [Profile.Kinds] maps the kernels to gpusim's op kinds (hw.Work kinds: a cuDNN convolution
// call is conv, a cuBLAS or Triton GEMM matmul, an XLA fusion memory-bound work) and sums
// their device time per step between the step markers, for calibrate's profile fit.
package xprof
