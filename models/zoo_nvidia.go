package models

import "fmt"

// NVIDIA's ResNet-50 v1.5, the model behind the ResNet-50 rows of NVIDIA's Deep Learning
// Examples tables (DeepLearningExamples TensorFlow/Classification/ConvNets) and, up to its
// v1.5 stride, tf_cnn_benchmarks' resnet50_v1.5. It differs from keras.applications.ResNet50
// in three ways that change the step time a published figure measures:
//   - no convolution biases: model/blocks/conv2d_block.py builds every convolution with
//     use_bias=not use_batch_norm, and every convolution here is followed by batch norm;
//   - v1.5 bottlenecks: the stride sits on the 3x3 convolution, not on the first 1x1
//     (model/blocks/resnet_bottleneck_block.py, bottleneck_2 strides=(stride, stride)),
//     so the first 1x1 of a downsampling block runs at the input resolution;
//   - 1001 classes (main.py Runner(n_classes=1001): the TFRecord ImageNet labels keep
//     class 0 for background), and batch norm epsilon 1e-5 (model/resnet.py
//     batch_norm_hparams).
//
// The stem is conv 7x7/2 SAME + batch norm + relu and max pool 3x3/2 SAME (model/resnet.py
// build_model), which gives the same shapes as Keras's explicit padding.
func buildResNet50V15(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 224)
	x := z.input("input_layer", []int{s, s, 3}, false)
	x = z.conv("conv1_conv", x, 64, 7, 2, "same", false, "linear")
	x = z.bn("conv1_bn", x, 1e-5)
	x = z.act("conv1_relu", "relu", x)
	x = z.maxpool("pool1_pool", x, 3, 2, "same")
	widths := []int{64, 128, 256, 512}
	blocks := []int{3, 4, 6, 3}
	for si, w := range widths {
		for bi := 0; bi < blocks[si]; bi++ {
			stride := 1
			if bi == 0 && si > 0 {
				stride = 2
			}
			x = bottleneckV15(z, x, w, stride, bi == 0, fmt.Sprintf("conv%d_block%d", si+2, bi+1))
		}
	}
	x = z.gap("avg_pool", x)
	c := 1001
	if o.Classes > 0 {
		c = o.Classes
	}
	x = z.dense("predictions", x, c, "softmax")
	return z.done(x)
}

// bottleneckV15 is resnet_bottleneck_block.py bottleneck_block with cardinality 1 and no
// squeeze-excitation: the shortcut is a 1x1 projection (stride on it) when the depth changes,
// which in ResNet-50 is exactly the first block of each stage.
func bottleneckV15(z *zb, x, filters, stride int, project bool, name string) int {
	shortcut := x
	if project {
		shortcut = z.conv(name+"_0_conv", x, 4*filters, 1, stride, "same", false, "linear")
		shortcut = z.bn(name+"_0_bn", shortcut, 1e-5)
	}
	x = z.conv(name+"_1_conv", x, filters, 1, 1, "same", false, "linear")
	x = z.bn(name+"_1_bn", x, 1e-5)
	x = z.act(name+"_1_relu", "relu", x)
	x = z.conv(name+"_2_conv", x, filters, 3, stride, "same", false, "linear")
	x = z.bn(name+"_2_bn", x, 1e-5)
	x = z.act(name+"_2_relu", "relu", x)
	x = z.conv(name+"_3_conv", x, 4*filters, 1, 1, "same", false, "linear")
	x = z.bn(name+"_3_bn", x, 1e-5)
	x = z.add(name+"_add", shortcut, x)
	return z.act(name+"_out", "relu", x)
}
