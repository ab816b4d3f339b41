package models

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gpusim/gpusim/internal/suggest"
)

// ModelOptions are the zoo's knobs. Zero values take the model's defaults.
type ModelOptions struct {
	ImageSize int    // input height = width (image models); default 224 (299 for InceptionV3, Xception)
	SeqLen    int    // sequence length (text models); default 128 (BERT), 1024 (GPT-2), 200 (LSTM)
	Classes   int    // output classes; default 1000 (ImageNet), 2 (BERT classifier), 1 (LSTM)
	Head      string // BERT head: "classification" (default) or "mlm"
	Hidden    []int  // MLP hidden widths; default 512, 512
	// Impl is the BERT implementation: "" or "keras-hub" (keras_hub BertBackbone), or
	// "model-garden" (the TF Model Garden's official.nlp encoder, which NVIDIA's TF2 BERT
	// scripts run: the same graph, with its layer norms and GELU computed in float32 under a
	// mixed policy; see bertModelGardenFloat32), or "google-research" (the TF 1.x reference
	// modeling.py: its tanh GELU as separate ops keeps one tensor more; see bertTF1GELU).
	Impl string
}

type zooEntry struct {
	build func(name string, o ModelOptions) (*graph, error)
	doc   string
}

var zoo = map[string]zooEntry{
	"mlp":            {buildMLP, "MLP: Flatten(28x28x1) → Dense 512 relu → Dense 512 relu → Dense 10 softmax (MNIST)"},
	"resnet50":       {resnetV1(3, 4, 6, 3), "keras.applications.ResNet50"},
	"resnet50-v1.5":  {buildResNet50V15, "NVIDIA's ResNet-50 v1.5 (DeepLearningExamples, tf_cnn_benchmarks): no conv biases, stride on the 3x3, 1001 classes"},
	"resnet101":      {resnetV1(3, 4, 23, 3), "keras.applications.ResNet101"},
	"resnet152":      {resnetV1(3, 8, 36, 3), "keras.applications.ResNet152"},
	"resnet50v2":     {buildResNet50V2, "keras.applications.ResNet50V2"},
	"vgg16":          {vgg(2, 2, 3, 3, 3), "keras.applications.VGG16"},
	"vgg19":          {vgg(2, 2, 4, 4, 4), "keras.applications.VGG19"},
	"mobilenet":      {buildMobileNet, "keras.applications.MobileNet (alpha 1.0)"},
	"mobilenetv2":    {buildMobileNetV2, "keras.applications.MobileNetV2 (alpha 1.0)"},
	"inceptionv3":    {buildInceptionV3, "keras.applications.InceptionV3"},
	"xception":       {buildXception, "keras.applications.Xception"},
	"densenet121":    {buildDenseNet121, "keras.applications.DenseNet121"},
	"efficientnetb0": {buildEfficientNetB0, "keras.applications.EfficientNetB0"},
	"bert-base":      {bert(12, 768, 12), "BERT-base encoder (uncased vocabulary 30522), classification or MLM head"},
	"bert-large":     {bert(24, 1024, 16), "BERT-large encoder (uncased vocabulary 30522), classification or MLM head"},
	"gpt2":           {gpt2(12, 768, 12), "GPT-2 small (124M), language-model head tied to the token embedding"},
	"gpt2-medium":    {gpt2(24, 1024, 16), "GPT-2 medium (355M)"},
	"vit-b16":        {buildViTB16, "ViT-B/16 image classifier"},
	"lstm":           {buildLSTM, "LSTM text classifier: Embedding 20000x128 → BiLSTM 64 → BiLSTM 64 → Dense 1 sigmoid (keras.io IMDB example)"},
}

// Aliases accepted by Get.
var zooAliases = map[string]string{
	"gpt2-small": "gpt2", "vit_b16": "vit-b16", "vit-b/16": "vit-b16", "bert_base": "bert-base",
	"bert_large": "bert-large", "gpt2_medium": "gpt2-medium", "lstm-imdb": "lstm",
	"resnet50v1.5": "resnet50-v1.5", "resnet50_v1.5": "resnet50-v1.5", "rn50v1.5": "resnet50-v1.5", "resnet50-nvidia": "resnet50-v1.5",
}

// Names lists the zoo's model names, sorted.
func Names() []string {
	out := make([]string, 0, len(zoo))
	for k := range zoo {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Describe returns one line about a zoo model.
func Describe(name string) string { return zoo[name].doc }

// Get returns a zoo model by its lower-case Keras name with default options, built at the
// first call for that name and shared after (memo.go). The name may
// carry options after a colon: "bert-base:seq=512,head=mlm", "resnet50:image=160,classes=10",
// "mlp:hidden=1024x1024".
//
// "@path" is a model file instead (LoadFile: Keras JSON or a .keras archive), as
// hardware.gpu takes "@profile.yaml"; "@path:image=224" fixes an image input's unset size.
func Get(name string) (*Model, error) {
	return GetContext(context.Background(), name)
}

// GetContext is Get whose import of a model file stops when ctx is done (LoadFileContext).
func GetContext(ctx context.Context, name string) (*Model, error) {
	if spec, ok := strings.CutPrefix(strings.TrimSpace(name), "@"); ok {
		path, o, err := splitFileSpec(spec)
		if err != nil {
			return nil, err
		}
		return LoadFileContext(ctx, path, o)
	}
	base, o, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	return New(base, o)
}

// ParseName splits "name:key=value,..." into the model name and its options.
func ParseName(spec string) (string, ModelOptions, error) {
	var o ModelOptions
	name, opts, _ := strings.Cut(strings.TrimSpace(spec), ":")
	name = strings.ToLower(name)
	if a, ok := zooAliases[name]; ok {
		name = a
	}
	if opts == "" {
		return name, o, nil
	}
	for _, kv := range strings.Split(opts, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return "", o, fmt.Errorf("model %q: option %q: want key=value", spec, kv)
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		num := func() (int, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("model %q: option %s=%q: want a positive integer", spec, k, v)
			}
			return n, nil
		}
		var err error
		switch k {
		case "image", "image_size", "size":
			o.ImageSize, err = num()
		case "seq", "seq_len", "sequence_length":
			o.SeqLen, err = num()
		case "classes":
			o.Classes, err = num()
		case "head":
			o.Head = v
		case "impl":
			o.Impl = v
		case "hidden":
			for _, h := range strings.Split(v, "x") {
				n, e := strconv.Atoi(h)
				if e != nil || n <= 0 {
					return "", o, fmt.Errorf("model %q: option hidden=%q: want widths like 512x512", spec, v)
				}
				o.Hidden = append(o.Hidden, n)
			}
		default:
			return "", o, fmt.Errorf("model %q: unknown option %q (image, seq, classes, head, hidden, impl)", spec, k)
		}
		if err != nil {
			return "", o, err
		}
	}
	return name, o, nil
}

// New returns a zoo model with options, built at the first call and shared after.
func New(name string, o ModelOptions) (*Model, error) {
	name = strings.ToLower(name)
	if a, ok := zooAliases[name]; ok {
		name = a
	}
	e, ok := zoo[name]
	if !ok {
		return nil, fmt.Errorf("unknown model %q (%s)", name, suggest.Hint(name, Names(), "gpusim list models"))
	}
	return memoNew(name, o, func() (*Model, error) {
		g, err := e.build(name, o)
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", name, err)
		}
		return g.finish()
	})
}

// Known reports whether spec names a zoo model with well-formed options (what Get accepts),
// without building it: the check a configuration needs before anything runs. Options that
// parse but that the model cannot be built with (an image too small for its strides) are
// found by Get.
//
// "@path" is read and imported (LoadFile): a model file's problems are found only so.
func Known(spec string) error {
	if _, ok := strings.CutPrefix(strings.TrimSpace(spec), "@"); ok {
		_, err := Get(spec)
		return err
	}
	name, _, err := ParseName(spec)
	if err != nil {
		return err
	}
	if _, ok := zoo[name]; !ok {
		return fmt.Errorf("unknown model %q (%s)", name, suggest.Hint(name, Names(), "gpusim list models"))
	}
	return nil
}

// zb wraps a graph for the zoo builders: the first error sticks and later calls do nothing.
type zb struct {
	g   *graph
	err error
}

func newZB(name string) *zb { return &zb{g: newGraph(name)} }

func (z *zb) input(name string, shape []int, integer bool) int {
	if z.err != nil {
		return 0
	}
	x, err := z.g.input(name, shape, integer)
	z.err = err
	return x
}

func (z *zb) call(class, name string, c cfg, ins ...int) int {
	if z.err != nil {
		return 0
	}
	y, err := z.g.call(class, name, c, ins...)
	if err != nil {
		z.err = err
	}
	return y
}

func (z *zb) done(outputs ...int) (*graph, error) {
	if z.err != nil {
		return nil, z.err
	}
	z.g.outputs = outputs
	return z.g, nil
}

func (z *zb) conv(name string, x, filters, k, stride int, pad string, bias bool, act string) int {
	return z.call("Conv2D", name, cfg{"filters": filters, "kernel_size": []int{k, k}, "strides": []int{stride, stride},
		"padding": pad, "use_bias": bias, "activation": act}, x)
}

func (z *zb) convHW(name string, x, filters, kh, kw, stride int, pad string, bias bool) int {
	return z.call("Conv2D", name, cfg{"filters": filters, "kernel_size": []int{kh, kw}, "strides": []int{stride, stride},
		"padding": pad, "use_bias": bias, "activation": "linear"}, x)
}

func (z *zb) dwconv(name string, x, k, stride int, pad string, bias bool) int {
	return z.call("DepthwiseConv2D", name, cfg{"kernel_size": []int{k, k}, "strides": []int{stride, stride},
		"padding": pad, "use_bias": bias, "depth_multiplier": 1, "activation": "linear"}, x)
}

func (z *zb) bn(name string, x int, eps float64) int {
	return z.call("BatchNormalization", name, cfg{"axis": -1, "epsilon": eps, "center": true, "scale": true}, x)
}

func (z *zb) act(name, fn string, x int) int {
	return z.call("Activation", name, cfg{"activation": fn}, x)
}

func (z *zb) relu6(name string, x int) int {
	return z.call("ReLU", name, cfg{"max_value": 6.0}, x)
}

func (z *zb) dense(name string, x, units int, act string) int {
	return z.call("Dense", name, cfg{"units": units, "activation": act, "use_bias": true}, x)
}

func (z *zb) pad(name string, x, t, b, l, r int) int {
	return z.call("ZeroPadding2D", name, cfg{"padding": [][]int{{t, b}, {l, r}}}, x)
}

func (z *zb) maxpool(name string, x, k, stride int, pad string) int {
	return z.call("MaxPooling2D", name, cfg{"pool_size": []int{k, k}, "strides": []int{stride, stride}, "padding": pad}, x)
}

func (z *zb) avgpool(name string, x, k, stride int, pad string) int {
	return z.call("AveragePooling2D", name, cfg{"pool_size": []int{k, k}, "strides": []int{stride, stride}, "padding": pad}, x)
}

func (z *zb) gap(name string, x int) int {
	return z.call("GlobalAveragePooling2D", name, cfg{}, x)
}

func (z *zb) add(name string, xs ...int) int { return z.call("Add", name, cfg{}, xs...) }

func (z *zb) concat(name string, xs ...int) int {
	return z.call("Concatenate", name, cfg{"axis": -1}, xs...)
}

func (z *zb) dropout(name string, x int, rate float64) int {
	return z.call("Dropout", name, cfg{"rate": rate}, x)
}

func imageSize(o ModelOptions, def int) int {
	if o.ImageSize > 0 {
		return o.ImageSize
	}
	return def
}

func classes(o ModelOptions, def int) int {
	if o.Classes > 0 {
		return o.Classes
	}
	return def
}

// buildMLP is the MNIST MLP of the Keras guides: Flatten, two Dense(512, relu) with
// Dropout(0.2), Dense(10, softmax).
func buildMLP(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 28)
	x := z.input("input_layer", []int{s, s, 1}, false)
	x = z.call("Flatten", "flatten", cfg{}, x)
	hidden := o.Hidden
	if len(hidden) == 0 {
		hidden = []int{512, 512}
	}
	for i, h := range hidden {
		x = z.dense(fmt.Sprintf("dense_%d", i), x, h, "relu")
		x = z.dropout(fmt.Sprintf("dropout_%d", i), x, 0.2)
	}
	x = z.dense("predictions", x, classes(o, 10), "softmax")
	return z.done(x)
}
