package models

import "fmt"

// The convolutional zoo follows keras/src/applications/*.py layer by layer (names, order,
// use_bias, padding), so parameter counts match model.summary() exactly.

// resnetV1 is keras/src/applications/resnet.py ResNet(preact=False, use_bias=True) with
// stack1/block1.
func resnetV1(b2, b3, b4, b5 int) func(string, ModelOptions) (*graph, error) {
	return func(name string, o ModelOptions) (*graph, error) {
		z := newZB(name)
		s := imageSize(o, 224)
		x := z.input("input_layer", []int{s, s, 3}, false)
		x = z.pad("conv1_pad", x, 3, 3, 3, 3)
		x = z.conv("conv1_conv", x, 64, 7, 2, "valid", true, "linear")
		x = z.bn("conv1_bn", x, 1.001e-5)
		x = z.act("conv1_relu", "relu", x)
		x = z.pad("pool1_pad", x, 1, 1, 1, 1)
		x = z.maxpool("pool1_pool", x, 3, 2, "valid")
		stack := func(x, filters, blocks, stride1 int, name string) int {
			x = resBlock1(z, x, filters, stride1, true, name+"_block1")
			for i := 2; i <= blocks; i++ {
				x = resBlock1(z, x, filters, 1, false, fmt.Sprintf("%s_block%d", name, i))
			}
			return x
		}
		x = stack(x, 64, b2, 1, "conv2")
		x = stack(x, 128, b3, 2, "conv3")
		x = stack(x, 256, b4, 2, "conv4")
		x = stack(x, 512, b5, 2, "conv5")
		x = z.gap("avg_pool", x)
		x = z.dense("predictions", x, classes(o, 1000), "softmax")
		return z.done(x)
	}
}

// resBlock1 is resnet.py block1: the bottleneck with the stride on the first 1x1 conv.
func resBlock1(z *zb, x, filters, stride int, convShortcut bool, name string) int {
	shortcut := x
	if convShortcut {
		shortcut = z.conv(name+"_0_conv", x, 4*filters, 1, stride, "valid", true, "linear")
		shortcut = z.bn(name+"_0_bn", shortcut, 1.001e-5)
	}
	x = z.conv(name+"_1_conv", x, filters, 1, stride, "valid", true, "linear")
	x = z.bn(name+"_1_bn", x, 1.001e-5)
	x = z.act(name+"_1_relu", "relu", x)
	x = z.conv(name+"_2_conv", x, filters, 3, 1, "same", true, "linear")
	x = z.bn(name+"_2_bn", x, 1.001e-5)
	x = z.act(name+"_2_relu", "relu", x)
	x = z.conv(name+"_3_conv", x, 4*filters, 1, 1, "valid", true, "linear")
	x = z.bn(name+"_3_bn", x, 1.001e-5)
	x = z.add(name+"_add", shortcut, x)
	return z.act(name+"_out", "relu", x)
}

// buildResNet50V2 is resnet_v2.py ResNet50V2: ResNet(preact=True, use_bias=True), stack2/block2.
func buildResNet50V2(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 224)
	x := z.input("input_layer", []int{s, s, 3}, false)
	x = z.pad("conv1_pad", x, 3, 3, 3, 3)
	x = z.conv("conv1_conv", x, 64, 7, 2, "valid", true, "linear")
	x = z.pad("pool1_pad", x, 1, 1, 1, 1)
	x = z.maxpool("pool1_pool", x, 3, 2, "valid")
	block2 := func(x, filters, stride int, convShortcut bool, name string) int {
		preact := z.bn(name+"_preact_bn", x, 1.001e-5)
		preact = z.act(name+"_preact_relu", "relu", preact)
		var shortcut int
		switch {
		case convShortcut:
			shortcut = z.conv(name+"_0_conv", preact, 4*filters, 1, stride, "valid", true, "linear")
		case stride > 1:
			shortcut = z.maxpool(name+"_0_max_pool", x, 1, stride, "valid")
		default:
			shortcut = x
		}
		x = z.conv(name+"_1_conv", preact, filters, 1, 1, "valid", false, "linear")
		x = z.bn(name+"_1_bn", x, 1.001e-5)
		x = z.act(name+"_1_relu", "relu", x)
		x = z.pad(name+"_2_pad", x, 1, 1, 1, 1)
		x = z.conv(name+"_2_conv", x, filters, 3, stride, "valid", false, "linear")
		x = z.bn(name+"_2_bn", x, 1.001e-5)
		x = z.act(name+"_2_relu", "relu", x)
		x = z.conv(name+"_3_conv", x, 4*filters, 1, 1, "valid", true, "linear")
		return z.add(name+"_out", shortcut, x)
	}
	stack := func(x, filters, blocks, stride1 int, name string) int {
		x = block2(x, filters, 1, true, name+"_block1")
		for i := 2; i < blocks; i++ {
			x = block2(x, filters, 1, false, fmt.Sprintf("%s_block%d", name, i))
		}
		return block2(x, filters, stride1, false, fmt.Sprintf("%s_block%d", name, blocks))
	}
	x = stack(x, 64, 3, 2, "conv2")
	x = stack(x, 128, 4, 2, "conv3")
	x = stack(x, 256, 6, 2, "conv4")
	x = stack(x, 512, 3, 1, "conv5")
	x = z.bn("post_bn", x, 1.001e-5)
	x = z.act("post_relu", "relu", x)
	x = z.gap("avg_pool", x)
	x = z.dense("predictions", x, classes(o, 1000), "softmax")
	return z.done(x)
}

// vgg is keras/src/applications/vgg16.py and vgg19.py.
func vgg(convs ...int) func(string, ModelOptions) (*graph, error) {
	return func(name string, o ModelOptions) (*graph, error) {
		z := newZB(name)
		s := imageSize(o, 224)
		x := z.input("input_layer", []int{s, s, 3}, false)
		filters := []int{64, 128, 256, 512, 512}
		for b, n := range convs {
			for i := 1; i <= n; i++ {
				x = z.conv(fmt.Sprintf("block%d_conv%d", b+1, i), x, filters[b], 3, 1, "same", true, "relu")
			}
			x = z.maxpool(fmt.Sprintf("block%d_pool", b+1), x, 2, 2, "valid")
		}
		x = z.call("Flatten", "flatten", cfg{}, x)
		x = z.dense("fc1", x, 4096, "relu")
		x = z.dense("fc2", x, 4096, "relu")
		x = z.dense("predictions", x, classes(o, 1000), "softmax")
		return z.done(x)
	}
}

// buildMobileNet is keras/src/applications/mobilenet.py (alpha=1, depth_multiplier=1,
// dropout=1e-3).
func buildMobileNet(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 224)
	x := z.input("input_layer", []int{s, s, 3}, false)
	x = z.conv("conv1", x, 32, 3, 2, "same", false, "linear")
	x = z.bn("conv1_bn", x, 1e-3)
	x = z.relu6("conv1_relu", x)
	block := func(x, filters, stride, id int) int {
		pad := "same"
		if stride != 1 {
			x = z.pad(fmt.Sprintf("conv_pad_%d", id), x, 0, 1, 0, 1)
			pad = "valid"
		}
		x = z.dwconv(fmt.Sprintf("conv_dw_%d", id), x, 3, stride, pad, false)
		x = z.bn(fmt.Sprintf("conv_dw_%d_bn", id), x, 1e-3)
		x = z.relu6(fmt.Sprintf("conv_dw_%d_relu", id), x)
		x = z.conv(fmt.Sprintf("conv_pw_%d", id), x, filters, 1, 1, "same", false, "linear")
		x = z.bn(fmt.Sprintf("conv_pw_%d_bn", id), x, 1e-3)
		return z.relu6(fmt.Sprintf("conv_pw_%d_relu", id), x)
	}
	spec := []struct{ f, s int }{{64, 1}, {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2},
		{512, 1}, {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}}
	for i, b := range spec {
		x = block(x, b.f, b.s, i+1)
	}
	x = z.call("GlobalAveragePooling2D", "global_average_pooling2d", cfg{"keepdims": true}, x)
	x = z.dropout("dropout", x, 1e-3)
	n := classes(o, 1000)
	x = z.conv("conv_preds", x, n, 1, 1, "same", true, "linear")
	x = z.call("Reshape", "reshape_2", cfg{"target_shape": []int{n}}, x)
	x = z.act("predictions", "softmax", x)
	return z.done(x)
}

// makeDivisible is mobilenet_v2.py _make_divisible.
func makeDivisible(v float64, divisor int) int {
	nv := int(v+float64(divisor)/2) / divisor * divisor
	if nv < divisor {
		nv = divisor
	}
	if float64(nv) < 0.9*v {
		nv += divisor
	}
	return nv
}

// correctPad is imagenet_utils.correct_pad for a square kernel: ((k/2 - 1 + odd), k/2) per axis
// where odd = 1 when the input size is odd... keras: adjust = (1 - size % 2), correct = k // 2;
// padding ((correct - adjust, correct), ...).
func correctPad(size, k int) (int, int) {
	adjust := 1 - size%2
	c := k / 2
	return c - adjust, c
}

// buildMobileNetV2 is keras/src/applications/mobilenet_v2.py (alpha=1).
func buildMobileNetV2(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 224)
	x := z.input("input_layer", []int{s, s, 3}, false)
	x = z.conv("Conv1", x, 32, 3, 2, "same", false, "linear")
	x = z.call("BatchNormalization", "bn_Conv1", cfg{"axis": -1, "epsilon": 1e-3, "momentum": 0.999}, x)
	x = z.relu6("Conv1_relu", x)
	inC := 32
	block := func(x, filters, stride, expansion, id int) int {
		in := x
		pw := makeDivisible(float64(filters), 8)
		prefix := "expanded_conv_"
		if id > 0 {
			prefix = fmt.Sprintf("block_%d_", id)
			x = z.conv(prefix+"expand", x, expansion*inC, 1, 1, "same", false, "linear")
			x = z.bn(prefix+"expand_BN", x, 1e-3)
			x = z.relu6(prefix+"expand_relu", x)
		}
		pad := "same"
		if stride == 2 {
			a, b := correctPad(z.g.shape(x)[0], 3)
			x = z.pad(prefix+"pad", x, a, b, a, b)
			pad = "valid"
		}
		x = z.dwconv(prefix+"depthwise", x, 3, stride, pad, false)
		x = z.bn(prefix+"depthwise_BN", x, 1e-3)
		x = z.relu6(prefix+"depthwise_relu", x)
		x = z.conv(prefix+"project", x, pw, 1, 1, "same", false, "linear")
		x = z.bn(prefix+"project_BN", x, 1e-3)
		if inC == pw && stride == 1 {
			x = z.add(prefix+"add", in, x)
		}
		inC = pw
		return x
	}
	spec := []struct{ f, s, e int }{{16, 1, 1}, {24, 2, 6}, {24, 1, 6}, {32, 2, 6}, {32, 1, 6}, {32, 1, 6},
		{64, 2, 6}, {64, 1, 6}, {64, 1, 6}, {64, 1, 6}, {96, 1, 6}, {96, 1, 6}, {96, 1, 6},
		{160, 2, 6}, {160, 1, 6}, {160, 1, 6}, {320, 1, 6}}
	for i, b := range spec {
		x = block(x, b.f, b.s, b.e, i)
	}
	x = z.conv("Conv_1", x, 1280, 1, 1, "valid", false, "linear")
	x = z.bn("Conv_1_bn", x, 1e-3)
	x = z.relu6("out_relu", x)
	x = z.gap("global_average_pooling2d", x)
	x = z.dense("predictions", x, classes(o, 1000), "softmax")
	return z.done(x)
}

// buildInceptionV3 is keras/src/applications/inception_v3.py; conv2d_bn uses auto-named
// Conv2D(use_bias=False), BatchNormalization(scale=False) and Activation("relu").
func buildInceptionV3(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 299)
	x := z.input("input_layer", []int{s, s, 3}, false)
	cb := func(x, filters, h, w int, pad string, stride int) int {
		x = z.convHW("", x, filters, h, w, stride, pad, false)
		x = z.call("BatchNormalization", "", cfg{"axis": 3, "scale": false}, x)
		return z.act("", "relu", x)
	}
	x = cb(x, 32, 3, 3, "valid", 2)
	x = cb(x, 32, 3, 3, "valid", 1)
	x = cb(x, 64, 3, 3, "same", 1)
	x = z.maxpool("max_pooling2d", x, 3, 2, "valid")
	x = cb(x, 80, 1, 1, "valid", 1)
	x = cb(x, 192, 3, 3, "valid", 1)
	x = z.maxpool("max_pooling2d_1", x, 3, 2, "valid")
	pools := 0
	avg := func(x int) int {
		pools++
		return z.avgpool(fmt.Sprintf("average_pooling2d_%d", pools), x, 3, 1, "same")
	}
	// mixed 0, 1, 2: 35 x 35 x 256/288
	for i, pf := range []int{32, 64, 64} {
		b1 := cb(x, 64, 1, 1, "same", 1)
		b5 := cb(x, 48, 1, 1, "same", 1)
		b5 = cb(b5, 64, 5, 5, "same", 1)
		bd := cb(x, 64, 1, 1, "same", 1)
		bd = cb(bd, 96, 3, 3, "same", 1)
		bd = cb(bd, 96, 3, 3, "same", 1)
		bp := cb(avg(x), pf, 1, 1, "same", 1)
		x = z.concat(fmt.Sprintf("mixed%d", i), b1, b5, bd, bp)
	}
	// mixed 3: 17 x 17 x 768
	b3 := cb(x, 384, 3, 3, "valid", 2)
	bd := cb(x, 64, 1, 1, "same", 1)
	bd = cb(bd, 96, 3, 3, "same", 1)
	bd = cb(bd, 96, 3, 3, "valid", 2)
	bp := z.maxpool("max_pooling2d_2", x, 3, 2, "valid")
	x = z.concat("mixed3", b3, bd, bp)
	// mixed 4..7
	for i, c := range []int{128, 160, 160, 192} {
		b1 := cb(x, 192, 1, 1, "same", 1)
		b7 := cb(x, c, 1, 1, "same", 1)
		b7 = cb(b7, c, 1, 7, "same", 1)
		b7 = cb(b7, 192, 7, 1, "same", 1)
		bd := cb(x, c, 1, 1, "same", 1)
		bd = cb(bd, c, 7, 1, "same", 1)
		bd = cb(bd, c, 1, 7, "same", 1)
		bd = cb(bd, c, 7, 1, "same", 1)
		bd = cb(bd, 192, 1, 7, "same", 1)
		bp := cb(avg(x), 192, 1, 1, "same", 1)
		x = z.concat(fmt.Sprintf("mixed%d", 4+i), b1, b7, bd, bp)
	}
	// mixed 8: 8 x 8 x 1280
	b3 = cb(x, 192, 1, 1, "same", 1)
	b3 = cb(b3, 320, 3, 3, "valid", 2)
	b7 := cb(x, 192, 1, 1, "same", 1)
	b7 = cb(b7, 192, 1, 7, "same", 1)
	b7 = cb(b7, 192, 7, 1, "same", 1)
	b7 = cb(b7, 192, 3, 3, "valid", 2)
	bp = z.maxpool("max_pooling2d_3", x, 3, 2, "valid")
	x = z.concat("mixed8", b3, b7, bp)
	// mixed 9, 10: 8 x 8 x 2048
	for i := 0; i < 2; i++ {
		b1 := cb(x, 320, 1, 1, "same", 1)
		b3 := cb(x, 384, 1, 1, "same", 1)
		b31 := cb(b3, 384, 1, 3, "same", 1)
		b32 := cb(b3, 384, 3, 1, "same", 1)
		b3 = z.concat(fmt.Sprintf("mixed9_%d", i), b31, b32)
		bd := cb(x, 448, 1, 1, "same", 1)
		bd = cb(bd, 384, 3, 3, "same", 1)
		bd1 := cb(bd, 384, 1, 3, "same", 1)
		bd2 := cb(bd, 384, 3, 1, "same", 1)
		bd = z.concat(fmt.Sprintf("concatenate_%d", i), bd1, bd2)
		bp := cb(avg(x), 192, 1, 1, "same", 1)
		x = z.concat(fmt.Sprintf("mixed%d", 9+i), b1, b3, bd, bp)
	}
	x = z.gap("avg_pool", x)
	x = z.dense("predictions", x, classes(o, 1000), "softmax")
	return z.done(x)
}

// buildXception is keras/src/applications/xception.py.
func buildXception(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 299)
	x := z.input("input_layer", []int{s, s, 3}, false)
	sep := func(name string, x, filters int) int {
		return z.call("SeparableConv2D", name, cfg{"filters": filters, "kernel_size": []int{3, 3}, "padding": "same",
			"use_bias": false, "activation": "linear"}, x)
	}
	x = z.conv("block1_conv1", x, 32, 3, 2, "valid", false, "linear")
	x = z.bn("block1_conv1_bn", x, 1e-3)
	x = z.act("block1_conv1_act", "relu", x)
	x = z.conv("block1_conv2", x, 64, 3, 1, "valid", false, "linear")
	x = z.bn("block1_conv2_bn", x, 1e-3)
	x = z.act("block1_conv2_act", "relu", x)
	nres := 0
	residual := func(x, filters int) int {
		cn, bn := "conv2d", "batch_normalization"
		if nres > 0 {
			cn, bn = fmt.Sprintf("conv2d_%d", nres), fmt.Sprintf("batch_normalization_%d", nres)
		}
		nres++
		r := z.conv(cn, x, filters, 1, 2, "same", false, "linear")
		return z.bn(bn, r, 1e-3)
	}
	r := residual(x, 128)
	x = sep("block2_sepconv1", x, 128)
	x = z.bn("block2_sepconv1_bn", x, 1e-3)
	x = z.act("block2_sepconv2_act", "relu", x)
	x = sep("block2_sepconv2", x, 128)
	x = z.bn("block2_sepconv2_bn", x, 1e-3)
	x = z.maxpool("block2_pool", x, 3, 2, "same")
	x = z.add("add", x, r)
	for i, f := range []int{256, 728} {
		b := fmt.Sprintf("block%d", 3+i)
		r = residual(x, f)
		x = z.act(b+"_sepconv1_act", "relu", x)
		x = sep(b+"_sepconv1", x, f)
		x = z.bn(b+"_sepconv1_bn", x, 1e-3)
		x = z.act(b+"_sepconv2_act", "relu", x)
		x = sep(b+"_sepconv2", x, f)
		x = z.bn(b+"_sepconv2_bn", x, 1e-3)
		x = z.maxpool(b+"_pool", x, 3, 2, "same")
		x = z.add(fmt.Sprintf("add_%d", 1+i), x, r)
	}
	for i := 0; i < 8; i++ {
		r = x
		b := fmt.Sprintf("block%d", 5+i)
		for j := 1; j <= 3; j++ {
			x = z.act(fmt.Sprintf("%s_sepconv%d_act", b, j), "relu", x)
			x = sep(fmt.Sprintf("%s_sepconv%d", b, j), x, 728)
			x = z.bn(fmt.Sprintf("%s_sepconv%d_bn", b, j), x, 1e-3)
		}
		x = z.add(fmt.Sprintf("add_%d", 3+i), x, r)
	}
	r = residual(x, 1024)
	x = z.act("block13_sepconv1_act", "relu", x)
	x = sep("block13_sepconv1", x, 728)
	x = z.bn("block13_sepconv1_bn", x, 1e-3)
	x = z.act("block13_sepconv2_act", "relu", x)
	x = sep("block13_sepconv2", x, 1024)
	x = z.bn("block13_sepconv2_bn", x, 1e-3)
	x = z.maxpool("block13_pool", x, 3, 2, "same")
	x = z.add("add_11", x, r)
	x = sep("block14_sepconv1", x, 1536)
	x = z.bn("block14_sepconv1_bn", x, 1e-3)
	x = z.act("block14_sepconv1_act", "relu", x)
	x = sep("block14_sepconv2", x, 2048)
	x = z.bn("block14_sepconv2_bn", x, 1e-3)
	x = z.act("block14_sepconv2_act", "relu", x)
	x = z.gap("avg_pool", x)
	x = z.dense("predictions", x, classes(o, 1000), "softmax")
	return z.done(x)
}

// buildDenseNet121 is keras/src/applications/densenet.py DenseNet([6, 12, 24, 16]).
func buildDenseNet121(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 224)
	x := z.input("input_layer", []int{s, s, 3}, false)
	x = z.pad("zero_padding2d", x, 3, 3, 3, 3)
	x = z.conv("conv1_conv", x, 64, 7, 2, "valid", false, "linear")
	x = z.bn("conv1_bn", x, 1.001e-5)
	x = z.act("conv1_relu", "relu", x)
	x = z.pad("zero_padding2d_1", x, 1, 1, 1, 1)
	x = z.maxpool("pool1", x, 3, 2, "valid")
	denseBlock := func(x, blocks int, name string) int {
		for i := 1; i <= blocks; i++ {
			b := fmt.Sprintf("%s_block%d", name, i)
			y := z.bn(b+"_0_bn", x, 1.001e-5)
			y = z.act(b+"_0_relu", "relu", y)
			y = z.conv(b+"_1_conv", y, 128, 1, 1, "valid", false, "linear")
			y = z.bn(b+"_1_bn", y, 1.001e-5)
			y = z.act(b+"_1_relu", "relu", y)
			y = z.conv(b+"_2_conv", y, 32, 3, 1, "same", false, "linear")
			x = z.concat(b+"_concat", x, y)
		}
		return x
	}
	transition := func(x int, name string) int {
		x = z.bn(name+"_bn", x, 1.001e-5)
		x = z.act(name+"_relu", "relu", x)
		c := z.g.shape(x)
		x = z.conv(name+"_conv", x, c[len(c)-1]/2, 1, 1, "valid", false, "linear")
		return z.avgpool(name+"_pool", x, 2, 2, "valid")
	}
	x = denseBlock(x, 6, "conv2")
	x = transition(x, "pool2")
	x = denseBlock(x, 12, "conv3")
	x = transition(x, "pool3")
	x = denseBlock(x, 24, "conv4")
	x = transition(x, "pool4")
	x = denseBlock(x, 16, "conv5")
	x = z.bn("bn", x, 1.001e-5)
	x = z.act("relu", "relu", x)
	x = z.gap("avg_pool", x)
	x = z.dense("predictions", x, classes(o, 1000), "softmax")
	return z.done(x)
}

// buildEfficientNetB0 is keras/src/applications/efficientnet.py EfficientNet(1.0, 1.0, 224,
// 0.2) with DEFAULT_BLOCKS_ARGS, swish activation.
func buildEfficientNetB0(name string, o ModelOptions) (*graph, error) {
	z := newZB(name)
	s := imageSize(o, 224)
	x := z.input("input_layer", []int{s, s, 3}, false)
	x = z.call("Rescaling", "rescaling", cfg{"scale": 1.0 / 255, "offset": 0.0}, x)
	x = z.call("Normalization", "normalization", cfg{"axis": -1}, x)
	a, b := correctPad(s, 3)
	x = z.pad("stem_conv_pad", x, a, b, a, b)
	x = z.conv("stem_conv", x, 32, 3, 2, "valid", false, "linear")
	x = z.bn("stem_bn", x, 1e-3)
	x = z.act("stem_activation", "swish", x)
	args := []struct{ k, r, fi, fo, e, s int }{
		{3, 1, 32, 16, 1, 1}, {3, 2, 16, 24, 6, 2}, {5, 2, 24, 40, 6, 2}, {3, 3, 40, 80, 6, 2},
		{5, 3, 80, 112, 6, 1}, {5, 4, 112, 192, 6, 2}, {3, 1, 192, 320, 6, 1}}
	total := 0
	for _, a := range args {
		total += a.r
	}
	bi := 0
	for i, a := range args {
		for j := 0; j < a.r; j++ {
			fi, st := a.fi, a.s
			if j > 0 {
				fi, st = a.fo, 1
			}
			drop := 0.2 * float64(bi) / float64(total)
			x = effBlock(z, x, fmt.Sprintf("block%d%c_", i+1, 'a'+j), fi, a.fo, a.k, st, a.e, drop)
			bi++
		}
	}
	x = z.conv("top_conv", x, 1280, 1, 1, "same", false, "linear")
	x = z.bn("top_bn", x, 1e-3)
	x = z.act("top_activation", "swish", x)
	x = z.gap("avg_pool", x)
	x = z.dropout("top_dropout", x, 0.2)
	x = z.dense("predictions", x, classes(o, 1000), "softmax")
	return z.done(x)
}

// effBlock is efficientnet.py block: expansion, depthwise, squeeze-and-excitation (0.25),
// projection, drop-connect residual.
func effBlock(z *zb, in int, name string, fi, fo, k, stride, expand int, drop float64) int {
	x := in
	filters := fi * expand
	if expand != 1 {
		x = z.conv(name+"expand_conv", x, filters, 1, 1, "same", false, "linear")
		x = z.bn(name+"expand_bn", x, 1e-3)
		x = z.act(name+"expand_activation", "swish", x)
	}
	pad := "same"
	if stride == 2 {
		a, b := correctPad(z.g.shape(x)[0], k)
		x = z.pad(name+"dwconv_pad", x, a, b, a, b)
		pad = "valid"
	}
	x = z.dwconv(name+"dwconv", x, k, stride, pad, false)
	x = z.bn(name+"bn", x, 1e-3)
	x = z.act(name+"activation", "swish", x)
	se := max(1, fi/4)
	sq := z.gap(name+"se_squeeze", x)
	sq = z.call("Reshape", name+"se_reshape", cfg{"target_shape": []int{1, 1, filters}}, sq)
	sq = z.conv(name+"se_reduce", sq, se, 1, 1, "same", true, "swish")
	sq = z.conv(name+"se_expand", sq, filters, 1, 1, "same", true, "sigmoid")
	x = z.call("Multiply", name+"se_excite", cfg{}, x, sq)
	x = z.conv(name+"project_conv", x, fo, 1, 1, "same", false, "linear")
	x = z.bn(name+"project_bn", x, 1e-3)
	if stride == 1 && fi == fo {
		if drop > 0 {
			x = z.call("Dropout", name+"drop", cfg{"rate": drop, "noise_shape": []any{nil, 1, 1, 1}}, x)
		}
		x = z.add(name+"add", x, in)
	}
	return x
}
