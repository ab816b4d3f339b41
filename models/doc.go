// Package models describes the Keras models gpusim trains: their layers, shapes, parameters
// and FLOPs, and the step plan, the ordered list of ops one replica runs in one training step
// with the tensors each op allocates and frees.
//
// # Getting a model
//
//	m, err := models.Get("resnet50")                // the zoo, lower-case Keras names
//	m, err := models.Get("bert-base:seq=512,head=mlm") // options after a colon
//	m, err := models.New("vit-b16", models.ModelOptions{ImageSize: 384})
//	m, err := models.FromKerasJSON(f)               // model.to_json() output
//	m, err := models.Get("@model.keras")            // a file: JSON, .keras, SavedModel dir
//	m, err := models.Get("@model.json:image=224")   // fix an image input's unset size
//
// FromKerasJSON reads Keras 3, tf.keras 2.x and Keras 2.0-2.2 configs, a .keras archive's
// config.json and a TensorFlow.js model.json, with every class keras.layers exports, the
// layers keras.applications defines for itself (LayerScale, CustomScaleLayer,
// StochasticDepth), Keras 3's operation nodes (keras.ops calls and operators on Keras
// tensors, kerasops.go) and the TFOpLambda and SlicingOpLambda layers tf.keras 2.x writes for
// TF functions (docs/models.md lists them). LoadFile also reads a tf.keras SavedModel's
// keras_metadata.pb, and the sidecar MODEL.layers.yaml that describes custom layer classes
// (LayerSpecs); a class neither knows is an error naming the layer and saying how to
// describe it.
//
// Names() lists the zoo: the keras.applications models (resnet50, resnet101, resnet152,
// resnet50v2, vgg16, vgg19, mobilenet, mobilenetv2, inceptionv3, xception, densenet121,
// efficientnetb0) with the exact parameter counts model.summary() prints, and bert-base,
// bert-large, gpt2, gpt2-medium, vit-b16, lstm and mlp. Options: image (input height and
// width), seq (sequence length), classes, head (BERT: classification or mlm), hidden (MLP
// widths, "1024x1024").
//
// A Model carries Params, TrainableParams, FLOPsPerSample (forward, multiply-add = 2 FLOPs,
// in convolutions, matmuls, attention and recurrent cells: what published figures count),
// OtherFLOPsPerSample (the element-wise rest), ActivationBytesPerSample (float32 bytes the
// forward pass of one sample leaves alive for backward), HasBatchNorm and the Layers as
// model.summary() prints them.
//
// # The step plan
//
//	p, err := m.Plan(models.PlanOptions{Batch: 64, Precision: models.MixedFloat16, XLA: false, Optimizer: "adam"})
//
// p.Ops is one step in execution order: an "input" copy (features and labels), the forward
// ops (each allocating its output; a cuDNN convolution also allocates a workspace it frees
// when done; under a mixed policy the weights are cast to float16 first), the loss, the
// backward ops in reverse order (each allocating the gradients of its inputs and weights,
// then freeing the gradient of its output and the activations it was the last to need), the
// loss-scale ops (mixed_float16), and one optimizer update per trainable variable, which
// frees its gradient. Each op has a Kind for the cost model, FLOPs, Bytes (read + written),
// Kernels (launches) and the compute DType.
//
// Which activations survive to backward follows TF's registered gradient functions:
// convolution and matmul inputs, FusedBatchNorm inputs, ReLU/sigmoid/tanh/softmax outputs,
// GELU/swish inputs, max-pool inputs and outputs, dropout masks. An activation is freed
// after its last forward reader if no gradient needs it, otherwise after the last gradient
// that reads it.
//
// p.Persistent (the float32 variables) are allocated before step 1 and never freed. p.Slots
// (optimizer slots: SGD 0, momentum 1, Adam 2 per trainable variable, see Optimizers) are
// allocated before the first Optimizer-phase op of the first step, as Keras builds them on
// the first apply_gradients, and never freed. Every other tensor is allocated by one op and
// freed by one later op of the same step. p.Gradients lists the float32 weight gradients
// (what an all-reduce packs; GradientBytes is their total, the size of gradient-accumulation
// buffers).
//
// Precision policies follow Keras: float32 variables and optimizer slots; float16 (or
// bfloat16) compute and activations; cast copies of the kernels each step (kept for the
// backward pass), float16 weight gradients cast back to float32; normalization parameters
// and embedding tables read in float32; the final softmax and the loss in float32;
// mixed_float16 adds the LossScaleOptimizer's scale, unscale and all-finite ops.
//
// XLA (jit_compile=True) fuses an element-wise op (bias, batch-norm's normalization,
// activation, add, cast) into the op that produced its input: fewer kernels, fewer bytes,
// and an intermediate that only feeds its own fusion is never allocated. What XLA does to
// the step's graph is this package's, in the xla*.go files: the fusions and the values
// backward keeps (xla.go), buffer assignment and rematerialization of a finished plan
// (XLAAssign, xla_buffers.go) and the compile time (XLACompileSeconds, xla_compile.go). The
// other layers keep the rest: which XLA a run has is framework's (framework.Gates), what its
// kernels cost hw's (hw/xla.go), when it compiles over a run train's (train/xla.go).
//
// Plans are cheap (a ResNet-50 plan takes about 0.4 ms) and deterministic; a Model is never
// modified after Get or FromKerasJSON returns it, so goroutines may plan from one Model at
// once.
//
// Names: the op kinds Cast and Optimizer are KindCast and KindOptimizer here (Role Cast and
// Phase Optimizer hold the plain names); the precision constants are PrecisionFloat32, MixedFloat16 and MixedBFloat16 (DType Float32 holds the
// plain name). OpKind.String gives the kind names hw prices ("matmul", "conv",
// "elementwise", ..., "h2d" for the input copy; "recurrent" has no hw kind: price it as matmul).
package models
